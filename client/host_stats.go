package client

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/hashicorp/nomad/api"
)

// HostStats reads the node's memory, uptime and the usage of the file system that holds the
// allocation directory: the answer of GET /v1/client/stats. What the host does not offer
// (no /proc outside Linux) is left zero rather than failing the whole read.
func (c *Client) HostStats() (*api.HostStats, error) {
	disk, err := diskStats(c.config.AllocDir)
	if err != nil {
		return nil, fmt.Errorf("client: stats of the allocation directory: %w", err)
	}
	stats := &api.HostStats{AllocDirStats: disk, DiskStats: []*api.HostDiskStats{disk}, CPU: []*api.HostCPUStats{}}
	if raw, err := os.ReadFile("/proc/meminfo"); err == nil {
		stats.Memory = parseMemInfo(raw)
	} else {
		stats.Memory = &api.HostMemoryStats{}
	}
	if raw, err := os.ReadFile("/proc/uptime"); err == nil {
		if f := strings.Fields(string(raw)); len(f) > 0 {
			if up, err := strconv.ParseFloat(f[0], 64); err == nil {
				stats.Uptime = uint64(up)
			}
		}
	}
	return stats, nil
}

// parseMemInfo reads /proc/meminfo (values in kB) into bytes. Used is what neither the free
// nor the reclaimable memory accounts for, as `free` reports it.
func parseMemInfo(raw []byte) *api.HostMemoryStats {
	kb := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		if v, err := strconv.ParseUint(f[0], 10, 64); err == nil {
			kb[name] = v
		}
	}
	m := &api.HostMemoryStats{Total: kb["MemTotal"] * 1024, Free: kb["MemFree"] * 1024}
	m.Available = kb["MemAvailable"] * 1024
	if m.Available == 0 {
		m.Available = (kb["MemFree"] + kb["Buffers"] + kb["Cached"]) * 1024
	}
	if m.Total > m.Available {
		m.Used = m.Total - m.Available
	}
	return m
}
