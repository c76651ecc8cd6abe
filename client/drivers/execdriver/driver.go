package execdriver

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/structs"
)

func init() { drivers.RegisterBuiltin(&Driver{}) }

// Options configure the driver from the agent's configuration.
type Options struct {
	// ChrootEnv maps host paths to where they appear in a task's chroot; nil is
	// DefaultChrootEnv.
	ChrootEnv map[string]string
	// AllowCaps are the capabilities a task may keep or add (the plugin's allow_caps); nil
	// is DefaultCaps, "all" is every capability.
	AllowCaps []string
	Logger    hclog.Logger
}

// Driver runs tasks as isolated processes of the host. Its zero value answers Name and
// FSIsolation only; New makes one that runs tasks.
type Driver struct {
	opts Options
	// Where the host's facts are read; tests point them at fakes.
	goos       string
	geteuid    func() int
	cgroupRoot string
	mountinfo  string

	mu sync.Mutex
	// tasks are the running tasks by allocation and task name, for alloc exec.
	tasks map[string]*Handle
	// cores are the cores each pinned task (by the same key) holds.
	cores map[string][]int
}

// New makes the driver. It starts nothing: what the host offers is read at each fingerprint
// and task start.
func New(opts Options) *Driver {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.ChrootEnv == nil {
		opts.ChrootEnv = DefaultChrootEnv
	}
	if opts.AllowCaps == nil {
		opts.AllowCaps = DefaultCaps
	}
	return &Driver{
		opts: opts, goos: runtime.GOOS, geteuid: os.Geteuid,
		cgroupRoot: "/sys/fs/cgroup", mountinfo: "/proc/self/mountinfo",
		tasks: map[string]*Handle{}, cores: map[string][]int{},
	}
}

// Name implements drivers.Driver: upstream's name for this driver.
func (*Driver) Name() string { return "exec" }

// MountsVolumes implements drivers.VolumeMounter: host volumes are bound into the task's
// root.
func (*Driver) MountsVolumes() {}

// FSIsolation implements drivers.ExecDriver: a task sees its chroot, not the host.
func (*Driver) FSIsolation() drivers.FSIsolation { return drivers.FSIsolationChroot }

// Fingerprint implements drivers.Driver. The driver is detected only where it can isolate
// a task: on Linux, with the agent running as root and cgroups it can use. Otherwise the
// health description says what is missing.
func (d *Driver) Fingerprint() *structs.DriverInfo {
	info := &structs.DriverInfo{UpdateTime: time.Now(), Attributes: map[string]string{}}
	if _, err := d.host(); err != nil {
		info.HealthDescription = err.Error()
		return info
	}
	info.Detected, info.Healthy, info.HealthDescription = true, true, "Healthy"
	info.Attributes["driver.exec"] = "1"
	return info
}

// host checks that tasks can run here and returns the cgroup layout they run in.
func (d *Driver) host() (*cgroupHost, error) {
	if d.geteuid == nil {
		return nil, fmt.Errorf("exec driver is not configured")
	}
	if d.goos != "linux" {
		return nil, fmt.Errorf("exec driver is only supported on Linux, not %s", d.goos)
	}
	if uid := d.geteuid(); uid != 0 {
		return nil, fmt.Errorf("exec driver must run as root (the agent runs as uid %d)", uid)
	}
	if err := CheckChrootEnv(d.opts.ChrootEnv); err != nil {
		return nil, fmt.Errorf("exec driver: %w", err)
	}
	f, err := os.Open(d.mountinfo)
	if err != nil {
		return nil, fmt.Errorf("exec driver needs cgroups: %w", err)
	}
	defer f.Close()
	h, err := detectCgroups(d.cgroupRoot, f)
	if err != nil {
		return nil, fmt.Errorf("exec driver needs cgroups: %w", err)
	}
	return h, nil
}

func taskKey(allocID, task string) string { return allocID + "/" + task }

func (d *Driver) track(key string, h *Handle) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.tasks[key] = h
}

func (d *Driver) untrack(key string, h *Handle) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.tasks[key] == h {
		delete(d.tasks, key)
		delete(d.cores, key)
	}
}

func (d *Driver) running(allocID, task string) *Handle {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.tasks == nil {
		return nil
	}
	return d.tasks[taskKey(allocID, task)]
}
