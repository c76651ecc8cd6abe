//go:build linux || darwin

package fingerprint

import "syscall"

func statfs(path string) (totalMB, freeMB int64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, 0, err
	}
	bs := int64(st.Bsize)
	return int64(st.Blocks) * bs / (1024 * 1024), int64(st.Bavail) * bs / (1024 * 1024), nil
}
