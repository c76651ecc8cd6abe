//go:build linux || darwin

package client

import (
	"syscall"

	"github.com/hashicorp/nomad/api"
)

func diskStats(path string) (*api.HostDiskStats, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return nil, err
	}
	bs := uint64(st.Bsize)
	d := &api.HostDiskStats{Mountpoint: path, Size: uint64(st.Blocks) * bs, Available: uint64(st.Bavail) * bs}
	d.Used = d.Size - uint64(st.Bfree)*bs
	if d.Size > 0 {
		d.UsedPercent = float64(d.Used) / float64(d.Size) * 100
	}
	if st.Files > 0 {
		d.InodesUsedPercent = float64(st.Files-st.Ffree) / float64(st.Files) * 100
	}
	return d, nil
}
