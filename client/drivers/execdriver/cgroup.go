package execdriver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nomadfork/nomad/client/drivers"
)

// cgroupMode is which cgroup hierarchy the host gives its controllers to.
type cgroupMode int

const (
	cgroupV1 cgroupMode = 1
	cgroupV2 cgroupMode = 2
)

// Where our task cgroups live: one parent under each v1 controller, one slice in v2. Upstream
// uses the same names, so operators' tooling looking for them finds ours.
const (
	cgroupParentV1 = "nomad"
	cgroupParentV2 = "nomad.slice"
)

// v1Controllers are the v1 controllers a task is placed in; each must be mounted.
var v1Controllers = []string{"memory", "cpu", "pids"}

// cgroupHost is the host's cgroup layout as detected at fingerprint time.
type cgroupHost struct {
	mode cgroupMode
	// root is the v2 mount point; unused in v1.
	root string
	// v1 is the mount point of each v1 controller we use.
	v1 map[string]string
}

// detectCgroups finds the host's cgroups. A pure v2 host has cgroup.controllers at sysRoot;
// otherwise the v1 controllers are looked up in mountinfo (a hybrid host's cgroup2 mount
// has no controllers, so it counts as v1).
func detectCgroups(sysRoot string, mountinfo io.Reader) (*cgroupHost, error) {
	if raw, err := os.ReadFile(filepath.Join(sysRoot, "cgroup.controllers")); err == nil {
		have := map[string]bool{}
		for _, c := range strings.Fields(string(raw)) {
			have[c] = true
		}
		for _, c := range []string{"memory", "cpu", "pids"} {
			if !have[c] {
				return nil, fmt.Errorf("cgroup v2 at %s lacks the %s controller", sysRoot, c)
			}
		}
		return &cgroupHost{mode: cgroupV2, root: sysRoot}, nil
	}
	h := &cgroupHost{mode: cgroupV1, v1: map[string]string{}}
	sc := bufio.NewScanner(mountinfo)
	for sc.Scan() {
		// mountinfo: id parent major:minor root mountpoint options [optional...] - fstype source superoptions
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, f := range fields {
			if f == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+3 >= len(fields) || len(fields) < 5 || fields[sep+1] != "cgroup" {
			continue
		}
		for _, opt := range strings.Split(fields[sep+3], ",") {
			// cpuset is optional: only tasks pinned to cores need it.
			if opt == "cpuset" && h.v1["cpuset"] == "" {
				h.v1["cpuset"] = fields[4]
			}
			for _, c := range v1Controllers {
				if opt == c {
					if _, dup := h.v1[c]; !dup {
						h.v1[c] = fields[4]
					}
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading mountinfo: %w", err)
	}
	for _, c := range v1Controllers {
		if h.v1[c] == "" {
			return nil, fmt.Errorf("no cgroup v2 at %s and the cgroup v1 %s controller is not mounted", sysRoot, c)
		}
	}
	return h, nil
}

// taskCgroup is the cgroup of one task: one directory per controller in v1, one in v2.
type taskCgroup struct {
	mode cgroupMode
	// dirs are the task's cgroup directories; in v1 dirs[0] is the memory controller's.
	dirs []string
}

// cgroupName is a task's cgroup directory name: its allocation and task, which the
// allocation runner already checked to be single path elements.
func cgroupName(allocID, task string) string {
	return allocID + "." + task
}

// create makes the cgroup of a task and sets its limits. A cgroup left by an earlier
// attempt of the same task is removed first.
func (h *cgroupHost) create(name string, res drivers.TaskResources) (*taskCgroup, error) {
	if strings.ContainsAny(name, "/\x00") || name == "" || name == "." || name == ".." {
		return nil, fmt.Errorf("cgroup name %q is not one path element", name)
	}
	cg := &taskCgroup{mode: h.mode}
	if h.mode == cgroupV2 {
		parent := filepath.Join(h.root, cgroupParentV2)
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return nil, fmt.Errorf("creating cgroup %s: %w", parent, err)
		}
		// Controllers must be enabled down the tree for a child to have their files.
		for _, dir := range []string{h.root, parent} {
			if err := enableControllers(dir); err != nil {
				return nil, err
			}
		}
		cg.dirs = []string{filepath.Join(parent, name)}
	} else {
		for _, c := range v1Controllers {
			cg.dirs = append(cg.dirs, filepath.Join(h.v1[c], cgroupParentV1, name))
		}
	}
	_ = cg.destroy()
	for _, d := range cg.dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			_ = cg.destroy()
			return nil, fmt.Errorf("creating cgroup %s: %w", d, err)
		}
	}
	if err := cg.setLimits(res); err != nil {
		_ = cg.destroy()
		return nil, err
	}
	return cg, nil
}

const mib = 1 << 20

// setLimits writes the task's memory and CPU limits. memory is the hard limit unless
// memory_max is set; then memory_max is the hard limit and memory the amount the kernel
// tries to leave the task under pressure (v1 soft limit, v2 memory.low). Swap is off for
// tasks with a limit, so the limit is the memory they get, as upstream.
func (cg *taskCgroup) setLimits(res drivers.TaskResources) error {
	hard, soft := int64(res.MemoryMB)*mib, int64(0)
	if res.MemoryMaxMB > 0 {
		hard = int64(res.MemoryMaxMB) * mib
		soft = int64(res.MemoryMB) * mib
	}
	var writes [][3]string // dir, file, value
	if cg.mode == cgroupV2 {
		dir := cg.dirs[0]
		if hard > 0 {
			writes = append(writes, [3]string{dir, "memory.max", strconv.FormatInt(hard, 10)})
			if exists(filepath.Join(dir, "memory.swap.max")) {
				writes = append(writes, [3]string{dir, "memory.swap.max", "0"})
			}
		}
		if soft > 0 {
			writes = append(writes, [3]string{dir, "memory.low", strconv.FormatInt(soft, 10)})
		}
		if res.CPU > 0 {
			writes = append(writes, [3]string{dir, "cpu.weight", strconv.FormatUint(cpuWeight(cpuShares(res.CPU)), 10)})
		}
	} else {
		mem, cpu := cg.dirs[0], cg.dirs[1]
		if hard > 0 {
			writes = append(writes, [3]string{mem, "memory.limit_in_bytes", strconv.FormatInt(hard, 10)})
			// The memory+swap limit must not be under the memory limit, so it comes after.
			if exists(filepath.Join(mem, "memory.memsw.limit_in_bytes")) {
				writes = append(writes, [3]string{mem, "memory.memsw.limit_in_bytes", strconv.FormatInt(hard, 10)})
			}
		}
		if soft > 0 {
			writes = append(writes, [3]string{mem, "memory.soft_limit_in_bytes", strconv.FormatInt(soft, 10)})
		}
		if res.CPU > 0 {
			writes = append(writes, [3]string{cpu, "cpu.shares", strconv.FormatUint(cpuShares(res.CPU), 10)})
		}
	}
	for _, w := range writes {
		if err := writeCgroupFile(w[0], w[1], w[2]); err != nil {
			return err
		}
	}
	return nil
}

// setPidsLimit caps the number of processes and threads in the task's cgroup (pids.max of
// the v2 directory or of the v1 pids controller's); 0 leaves it unlimited.
func (cg *taskCgroup) setPidsLimit(n int) error {
	if n <= 0 {
		return nil
	}
	dir := cg.dirs[0]
	if cg.mode == cgroupV1 {
		dir = cg.dirs[2]
	}
	return writeCgroupFile(dir, "pids.max", strconv.Itoa(n))
}

// cpuShares turns the task's MHz into v1 shares (one share a MHz, as upstream), within the
// kernel's bounds.
func cpuShares(mhz int) uint64 {
	return uint64(min(max(mhz, 2), 262144))
}

// cpuWeight maps v1 shares [2, 262144] onto v2 weights [1, 10000] linearly, the conversion
// container runtimes agree on.
func cpuWeight(shares uint64) uint64 {
	return 1 + ((shares-2)*9999)/262142
}

// addProc moves a process (and its threads) into the task's cgroup.
func (cg *taskCgroup) addProc(pid int) error {
	for _, d := range cg.dirs {
		if err := writeCgroupFile(d, "cgroup.procs", strconv.Itoa(pid)); err != nil {
			return err
		}
	}
	return nil
}

// procsFiles are the cgroup.procs files a process writes its own PID to, to join the task.
func (cg *taskCgroup) procsFiles() []string {
	out := make([]string, 0, len(cg.dirs))
	for _, d := range cg.dirs {
		out = append(out, filepath.Join(d, "cgroup.procs"))
	}
	return out
}

// Path is the task's cgroup: the v2 directory, or the v1 memory controller's.
func (cg *taskCgroup) Path() string { return cg.dirs[0] }

// oomKills is how many processes of the task the kernel killed for its memory limit.
func (cg *taskCgroup) oomKills() int {
	file := "memory.oom_control"
	if cg.mode == cgroupV2 {
		file = "memory.events"
	}
	raw, err := os.ReadFile(filepath.Join(cg.dirs[0], file))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == "oom_kill" {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// kill sends SIGKILL to every process in the task's cgroup: what the task's process and
// its commands are, whatever their PIDs (the agent is parent of none of them). The shim is
// not in the cgroup: it stays to record the exit.
func (cg *taskCgroup) kill() {
	for _, d := range cg.dirs {
		for _, p := range cgroupPIDs(d) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

// cgroupDrainWait bounds how long destroy waits for the task's last processes to be gone.
const cgroupDrainWait = 5 * time.Second

// destroy kills what is left in the task's cgroup and removes it. Removing a cgroup that
// does not exist is not an error.
func (cg *taskCgroup) destroy() error {
	var errs []error
	for _, d := range cg.dirs {
		if !exists(d) {
			continue
		}
		deadline := time.Now().Add(cgroupDrainWait)
		for {
			pids := cgroupPIDs(d)
			if len(pids) == 0 {
				break
			}
			for _, p := range pids {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
			if time.Now().After(deadline) {
				errs = append(errs, fmt.Errorf("cgroup %s still has processes %v", d, pids))
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		// The kernel may answer EBUSY for a moment after the last process left.
		for {
			err := os.Remove(d)
			if err == nil || errors.Is(err, os.ErrNotExist) {
				break
			}
			if time.Now().After(deadline) {
				errs = append(errs, fmt.Errorf("removing cgroup %s: %w", d, err))
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return errors.Join(errs...)
}

// enableControllers enables memory, cpu and pids for the children of a v2 cgroup, unless
// they are already: an agent in a container may see as its root a cgroup that holds
// processes, where enabling is refused but the controllers are usually on already.
func enableControllers(dir string) error {
	if raw, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control")); err == nil {
		on := map[string]bool{}
		for _, c := range strings.Fields(string(raw)) {
			on[c] = true
		}
		if on["memory"] && on["cpu"] && on["pids"] {
			return nil
		}
	}
	return writeCgroupFile(dir, "cgroup.subtree_control", "+memory +cpu +pids")
}

func cgroupPIDs(dir string) []int {
	raw, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(raw)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

func writeCgroupFile(dir, file, value string) error {
	if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0o644); err != nil {
		return fmt.Errorf("setting cgroup %s: %w", filepath.Join(dir, file), err)
	}
	return nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
