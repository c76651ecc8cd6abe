package client

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/structs"
	"golang.org/x/sys/unix"
)

// Resource usage read from /proc. CPU percentages need two readings: each call is compared
// with the previous one (the first with the process's or the host's whole life), so a caller
// polling every few seconds sees the usage of the last few seconds, as upstream's do.

// clockTicks is USER_HZ, the unit of /proc's CPU times; Linux fixes it at 100 on every
// architecture the agent builds for.
const clockTicks = 100

// cpuSample is one reading of CPU time, in ticks.
type cpuSample struct {
	at           time.Time
	user, system uint64
	idle         uint64 // host only
}

// statsCache keeps the previous readings, by task process group or host CPU name.
type statsCache struct {
	mu   sync.Mutex
	prev map[string]cpuSample
}

func (s *statsCache) swap(key string, now cpuSample) (cpuSample, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prev == nil {
		s.prev = map[string]cpuSample{}
	}
	old, ok := s.prev[key]
	s.prev[key] = now
	return old, ok
}

// AllocStats is the resource usage of the running tasks of an allocation this client runs:
// the processes of each task's process group, read from /proc. The caller authorizes first.
func (c *Client) AllocStats(allocID string) (*api.AllocResourceUsage, error) {
	r := c.runner(allocID)
	if r == nil {
		return nil, structs.NotFound(structs.ErrAllocNotFound)
	}
	tasks := r.taskRunners()
	now := time.Now()
	out := &api.AllocResourceUsage{Tasks: map[string]*api.TaskResourceUsage{}, Timestamp: now.UnixNano(),
		ResourceUsage: &api.ResourceUsage{MemoryStats: memMeasured(), CpuStats: cpuMeasured()}}
	groups := processGroups()
	for _, tr := range tasks {
		pid := tr.pid()
		if pid <= 0 {
			continue
		}
		tu := &api.TaskResourceUsage{Timestamp: now.UnixNano(), Pids: map[string]*api.ResourceUsage{},
			ResourceUsage: &api.ResourceUsage{MemoryStats: memMeasured(), CpuStats: cpuMeasured()}}
		var total cpuSample
		for _, p := range groups[pid] {
			total.user += p.user
			total.system += p.system
			tu.ResourceUsage.MemoryStats.RSS += p.rss
			tu.Pids[strconv.Itoa(p.pid)] = &api.ResourceUsage{MemoryStats: &api.MemoryStats{RSS: p.rss, Measured: []string{"RSS"}}}
		}
		total.at = now
		c.fillCPU(tu.ResourceUsage.CpuStats, "task:"+allocID+"/"+tr.task.Name+"/"+strconv.Itoa(pid), total)
		out.Tasks[tr.task.Name] = tu
		out.ResourceUsage.MemoryStats.RSS += tu.ResourceUsage.MemoryStats.RSS
		out.ResourceUsage.CpuStats.Percent += tu.ResourceUsage.CpuStats.Percent
		out.ResourceUsage.CpuStats.UserMode += tu.ResourceUsage.CpuStats.UserMode
		out.ResourceUsage.CpuStats.SystemMode += tu.ResourceUsage.CpuStats.SystemMode
		out.ResourceUsage.CpuStats.TotalTicks += tu.ResourceUsage.CpuStats.TotalTicks
	}
	return out, nil
}

func memMeasured() *api.MemoryStats { return &api.MemoryStats{Measured: []string{"RSS"}} }

func cpuMeasured() *api.CpuStats {
	return &api.CpuStats{Measured: []string{"System Mode", "User Mode", "Percent"}}
}

// fillCPU sets the percentages of one core used since the previous reading of key, and the
// MHz that is (TotalTicks, as the scheduler counts CPU).
func (c *Client) fillCPU(cs *api.CpuStats, key string, now cpuSample) {
	prev, ok := c.stats.swap(key, now)
	if !ok || !now.at.After(prev.at) || now.user < prev.user || now.system < prev.system {
		return
	}
	secs := now.at.Sub(prev.at).Seconds()
	cs.UserMode = float64(now.user-prev.user) / clockTicks / secs * 100
	cs.SystemMode = float64(now.system-prev.system) / clockTicks / secs * 100
	cs.Percent = cs.UserMode + cs.SystemMode
	if cores := c.node.NodeResources.Cpu.TotalCpuCores; cores > 0 {
		cs.TotalTicks = cs.Percent / 100 * float64(c.node.NodeResources.Cpu.CpuShares) / float64(cores)
	}
}

type procInfo struct {
	pid          int
	user, system uint64
	rss          uint64 // bytes
}

// processGroups reads every process of the host, by process group.
func processGroups() map[int][]procInfo {
	out := map[int][]procInfo{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	page := uint64(os.Getpagesize())
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		end := bytes.LastIndexByte(raw, ')')
		if end < 0 {
			continue
		}
		f := bytes.Fields(raw[end+1:])
		// After the command name: state(3) ppid(4) pgrp(5) ... utime(14) stime(15) ... rss(24).
		if len(f) < 22 {
			continue
		}
		pgrp, _ := strconv.Atoi(string(f[2]))
		if pgrp == pid && isShim(pid) {
			// The raw_exec shim leads its task's group but is not the task's.
			continue
		}
		utime, _ := strconv.ParseUint(string(f[11]), 10, 64)
		stime, _ := strconv.ParseUint(string(f[12]), 10, 64)
		rss, _ := strconv.ParseUint(string(f[21]), 10, 64)
		out[pgrp] = append(out[pgrp], procInfo{pid: pid, user: utime, system: stime, rss: rss * page})
	}
	return out
}

// isShim reports whether pid is a raw_exec task's shim.
func isShim(pid int) bool {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return false
	}
	argv0, _, _ := bytes.Cut(raw, []byte{0})
	return string(argv0) == drivers.ShimName
}

// HostStats are the node's memory, CPU, uptime and the disk of its allocation directory.
func (c *Client) HostStats() (*api.HostStats, error) {
	out := &api.HostStats{Memory: &api.HostMemoryStats{}}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 2 {
				continue
			}
			kb, _ := strconv.ParseUint(fields[1], 10, 64)
			switch fields[0] {
			case "MemTotal:":
				out.Memory.Total = kb * 1024
			case "MemAvailable:":
				out.Memory.Available = kb * 1024
			case "MemFree:":
				out.Memory.Free = kb * 1024
			}
		}
		_ = f.Close()
		out.Memory.Used = out.Memory.Total - out.Memory.Available
	}
	if raw, err := os.ReadFile("/proc/uptime"); err == nil {
		if fields := strings.Fields(string(raw)); len(fields) > 0 {
			up, _ := strconv.ParseFloat(fields[0], 64)
			out.Uptime = uint64(up)
		}
	}
	out.CPU = c.hostCPU()
	var busy float64
	for _, cpu := range out.CPU {
		busy += cpu.User + cpu.System
	}
	if n := len(out.CPU); n > 0 {
		out.CPUTicksConsumed = busy / 100 / float64(n) * float64(c.node.NodeResources.Cpu.CpuShares)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(c.config.AllocDir, &st); err == nil {
		bs := uint64(st.Bsize)
		d := &api.HostDiskStats{Device: c.config.AllocDir, Mountpoint: c.config.AllocDir,
			Size: st.Blocks * bs, Available: st.Bavail * bs, Used: (st.Blocks - st.Bfree) * bs}
		if d.Size > 0 {
			d.UsedPercent = float64(d.Used) / float64(d.Size) * 100
		}
		if st.Files > 0 {
			d.InodesUsedPercent = float64(st.Files-st.Ffree) / float64(st.Files) * 100
		}
		out.AllocDirStats = d
		out.DiskStats = []*api.HostDiskStats{d}
	}
	return out, nil
}

// hostCPU reads each CPU's line of /proc/stat: percentages since the previous reading.
func (c *Client) hostCPU() []*api.HostCPUStats {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return nil
	}
	now := time.Now()
	var out []*api.HostCPUStats
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		var v [4]uint64
		for i := range v {
			v[i], _ = strconv.ParseUint(f[i+1], 10, 64)
		}
		// user, nice, system, idle
		cur := cpuSample{at: now, user: v[0] + v[1], system: v[2], idle: v[3]}
		prev, _ := c.stats.swap("host:"+f[0], cur)
		du, ds, di := float64(cur.user-prev.user), float64(cur.system-prev.system), float64(cur.idle-prev.idle)
		stat := &api.HostCPUStats{CPU: f[0]}
		if total := du + ds + di; total > 0 {
			stat.User, stat.System, stat.Idle = du/total*100, ds/total*100, di/total*100
		}
		out = append(out, stat)
	}
	return out
}
