package execdriver

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Cores (resources.cores): a task that asks for whole cores is pinned to that many of the
// node's cores that no other exec task of this agent holds, through a cpuset cgroup (the v1
// cpuset controller's `nomad/<alloc>.<task>`, or cpuset.cpus of the task's v2 cgroup). The
// driver keeps which task holds which cores; a re-attached task takes its cores back from its
// cgroup.

// parseCPUList reads a kernel CPU list such as "0-3,6".
func parseCPUList(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("cpu list %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				return nil, fmt.Errorf("cpu list %q: %w", s, err)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}

func formatCPUList(cores []int) string {
	parts := make([]string, len(cores))
	for i, c := range cores {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, ",")
}

// hostCores are the cores tasks may be pinned to: the root cpuset's effective ones.
func (h *cgroupHost) hostCores() ([]int, error) {
	file := filepath.Join(h.root, "cpuset.cpus.effective")
	if h.mode == cgroupV1 {
		if h.v1["cpuset"] == "" {
			return nil, fmt.Errorf("the cgroup v1 cpuset controller is not mounted")
		}
		file = filepath.Join(h.v1["cpuset"], "cpuset.effective_cpus")
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading the node's cores: %w", err)
	}
	return parseCPUList(string(raw))
}

// reserveCores picks n free cores for the task key, the lowest first.
func (d *Driver) reserveCores(h *cgroupHost, key string, n int) ([]int, error) {
	all, err := h.hostCores()
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	held := map[int]bool{}
	for k, cs := range d.cores {
		if k == key {
			continue
		}
		for _, c := range cs {
			held[c] = true
		}
	}
	var free []int
	for _, c := range all {
		if !held[c] {
			free = append(free, c)
		}
	}
	if len(free) < n {
		return nil, fmt.Errorf("resources.cores = %d, but only %d of the node's %d cores are free", n, len(free), len(all))
	}
	picked := append([]int(nil), free[:n]...)
	d.cores[key] = picked
	return picked, nil
}

// holdCores records cores a re-attached task is pinned to.
func (d *Driver) holdCores(key string, cores []int) {
	if len(cores) == 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cores[key] = cores
}

func (d *Driver) releaseCores(key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.cores, key)
}

// pinCores confines the task's cgroup to cores. In v1 the task gets a cpuset directory of its
// own (added to its cgroup directories); its parent's cpus and mems are filled from the root
// first, as a cpuset takes no process without them.
func (cg *taskCgroup) pinCores(h *cgroupHost, name string, cores []int) error {
	sort.Ints(cores)
	list := formatCPUList(cores)
	if cg.mode == cgroupV2 {
		for _, dir := range []string{h.root, filepath.Join(h.root, cgroupParentV2)} {
			if err := writeCgroupFile(dir, "cgroup.subtree_control", "+cpuset"); err != nil {
				return err
			}
		}
		return writeCgroupFile(cg.dirs[0], "cpuset.cpus", list)
	}
	root := h.v1["cpuset"]
	if root == "" {
		return fmt.Errorf("the cgroup v1 cpuset controller is not mounted")
	}
	parent := filepath.Join(root, cgroupParentV1)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("creating cgroup %s: %w", parent, err)
	}
	for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
		raw, err := os.ReadFile(filepath.Join(parent, f))
		if err == nil && strings.TrimSpace(string(raw)) != "" {
			continue
		}
		from, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return fmt.Errorf("reading %s: %w", filepath.Join(root, f), err)
		}
		if err := writeCgroupFile(parent, f, strings.TrimSpace(string(from))); err != nil {
			return err
		}
	}
	dir := filepath.Join(parent, name)
	_ = (&taskCgroup{dirs: []string{dir}}).destroy()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating cgroup %s: %w", dir, err)
	}
	cg.dirs = append(cg.dirs, dir)
	mems, err := os.ReadFile(filepath.Join(parent, "cpuset.mems"))
	if err != nil {
		return fmt.Errorf("reading %s: %w", filepath.Join(parent, "cpuset.mems"), err)
	}
	if err := writeCgroupFile(dir, "cpuset.mems", strings.TrimSpace(string(mems))); err != nil {
		return err
	}
	return writeCgroupFile(dir, "cpuset.cpus", list)
}

// pinnedCores reads the cores a task's cgroup is confined to; none when it is not pinned.
func pinnedCores(cg *taskCgroup) []int {
	for _, dir := range cg.dirs {
		if cg.mode == cgroupV1 && !strings.Contains(dir, string(filepath.Separator)+"cpuset"+string(filepath.Separator)) {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, "cpuset.cpus"))
		if err != nil {
			continue
		}
		if cores, err := parseCPUList(string(raw)); err == nil && len(cores) > 0 {
			return cores
		}
	}
	return nil
}
