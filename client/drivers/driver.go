package drivers

import (
	"fmt"
	"syscall"
	"time"

	"github.com/nomadfork/nomad/structs"
)

// TaskConfig is everything a driver needs to start one task.
type TaskConfig struct {
	AllocID   string
	JobName   string
	GroupName string
	TaskName  string
	// Config is the task's driver configuration (the job's `config` block).
	Config map[string]any
	// Env is the task's environment: its env block plus the NOMAD_* variables.
	Env map[string]string
	// TaskDir is the task's working directory; AllocDir the directory its allocation's tasks
	// share. Both exist when Start is called.
	TaskDir  string
	AllocDir string
	// StdoutPath and StderrPath are the files the task's output goes to; empty when the
	// task's logs are disabled (OpenTaskLog).
	StdoutPath string
	StderrPath string
	// User is the task's `user`: the account drivers that can run a task as another user
	// run it as ("" for the driver's default).
	User string
	// KillSignal is the task's kill_signal ("" for the driver's default, SIGTERM).
	KillSignal string
	// Resources are the task's resources block, for drivers that enforce limits.
	Resources TaskResources
	// Ports are the ports of the task's group network, with their host values: those the
	// scheduler allocated, else the group's static ports.
	Ports []PortMapping
	// Mounts are the task's volume_mounts resolved to host paths on this node. Drivers
	// that cannot mount refuse a task that has any rather than run it without them.
	Mounts []Mount
	// NetNS is the path of the allocation's network namespace in bridge mode, which the
	// task joins; "" runs it in the host's network.
	NetNS string
	// ResolvConf is the host path of the allocation's resolv.conf, written from its group's
	// dns block in bridge mode ("" without one); drivers that give the task its own /etc
	// mount it at /etc/resolv.conf.
	ResolvConf string
	// Event, when set, records a message as a task event while Start runs (a driver's
	// progress on slow work such as pulling an image). Drivers call it from any goroutine,
	// never after Start returned, and rate-limit it themselves.
	Event func(message string)
}

// Emit records message through cfg.Event when the client gave one.
func (cfg *TaskConfig) Emit(message string) {
	if cfg != nil && cfg.Event != nil {
		cfg.Event(message)
	}
}

// VolumeMounter is a driver that binds TaskConfig.Mounts into its tasks. A driver that is
// not one (raw_exec: no filesystem isolation to mount into, as upstream documents) never
// gets a task with mounts: the client fails the task first.
type VolumeMounter interface {
	MountsVolumes()
}

// Shutdowner is a driver with background work of its own (timers, caches) that the client
// stops when it shuts down. Tasks are not stopped by it.
type Shutdowner interface {
	Shutdown()
}

// TaskResources are the limits a task asked for; 0 is unset.
type TaskResources struct {
	// CPU is in MHz; drivers turn it into relative CPU shares.
	CPU int
	// MemoryMB is the memory the task reserves, and its hard limit unless MemoryMaxMB is set.
	MemoryMB    int
	MemoryMaxMB int
	// Cores is a number of whole cores the task is pinned to (drivers that can).
	Cores int
}

// Mount is a host directory bound into a task.
type Mount struct {
	// Volume is the group volume's name, for messages.
	Volume string
	// HostPath is the client host_volume's path; TaskPath the destination inside the
	// task, absolute and clean (the client made it so).
	HostPath string
	TaskPath string
	// ReadOnly is set when the group volume, the volume_mount or the client's host_volume
	// says so.
	ReadOnly bool
}

// PortMapping is one port of a group's network. Value is the host port (0 when the
// scheduler assigned none yet), To the port inside the task's network namespace (0 for the
// same as Value).
type PortMapping struct {
	Label  string
	Value  int
	To     int
	HostIP string
}

// ExitResult is how a task ended.
type ExitResult struct {
	ExitCode int
	// Signal is the signal that ended the task, 0 when it exited.
	Signal int
	// Err is set when the driver lost track of the task.
	Err error
	// OOMKilled is set when the kernel killed the task for going over its memory limit.
	OOMKilled bool
}

// Successful reports whether the task ended by itself with exit code 0.
func (r *ExitResult) Successful() bool {
	return r.ExitCode == 0 && r.Signal == 0 && r.Err == nil && !r.OOMKilled
}

func (r *ExitResult) String() string {
	switch {
	case r.Err != nil:
		return r.Err.Error()
	case r.OOMKilled && r.Signal != 0:
		return fmt.Sprintf("OOM Killed (signal %d)", r.Signal)
	case r.OOMKilled:
		return fmt.Sprintf("OOM Killed (exit code %d)", r.ExitCode)
	case r.Signal != 0:
		return fmt.Sprintf("killed by signal %d", r.Signal)
	}
	return fmt.Sprintf("exit code %d", r.ExitCode)
}

// TaskHandle is a started task.
type TaskHandle interface {
	// WaitCh delivers the task's exit result once, then is closed.
	WaitCh() <-chan *ExitResult
	// Kill asks the task to stop, and forces it after timeout. It returns once the stop has
	// been asked for; the result comes on WaitCh.
	Kill(timeout time.Duration) error
	// PID is the task's process ID, 0 when it has none.
	PID() int
	// Signal sends sig to the running task (alloc signal).
	Signal(sig syscall.Signal) error
}

// Driver starts tasks of one kind.
type Driver interface {
	// Name is the name jobs give in a task's `driver`.
	Name() string
	// Fingerprint says whether the driver can run tasks on this machine.
	Fingerprint() *structs.DriverInfo
	// Start starts a task and returns without waiting for it to end.
	Start(cfg *TaskConfig) (TaskHandle, error)
}

// configString reads an optional string from a task config.
func configString(cfg map[string]any, key string) (string, error) {
	raw, ok := cfg[key]
	if !ok || raw == nil {
		return "", nil
	}
	s, ok := raw.(string)
	if !ok {
		return "", fmt.Errorf("config %q must be a string, not %T", key, raw)
	}
	return s, nil
}

// configStrings reads an optional list of strings from a task config.
func configStrings(cfg map[string]any, key string) ([]string, error) {
	raw, ok := cfg[key]
	if !ok || raw == nil {
		return nil, nil
	}
	switch v := raw.(type) {
	case []string:
		return v, nil
	case []any:
		out := make([]string, 0, len(v))
		for i, item := range v {
			s, ok := item.(string)
			if !ok {
				return nil, fmt.Errorf("config %q[%d] must be a string, not %T", key, i, item)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("config %q must be a list of strings, not %T", key, raw)
}

// configInt reads an optional whole number from a task config (JSON gives float64, msgpack
// integers of various widths).
func configInt(cfg map[string]any, key string) (int, error) {
	raw, ok := cfg[key]
	if !ok || raw == nil {
		return 0, nil
	}
	switch v := raw.(type) {
	case int:
		return v, nil
	case int64:
		return int(v), nil
	case uint64:
		return int(v), nil
	case float64:
		if v != float64(int(v)) {
			return 0, fmt.Errorf("config %q must be a whole number, not %v", key, v)
		}
		return int(v), nil
	}
	return 0, fmt.Errorf("config %q must be a number, not %T", key, raw)
}

// ConfigString reads an optional string from a task config, for drivers of other packages.
func ConfigString(cfg map[string]any, key string) (string, error) { return configString(cfg, key) }

// ConfigStrings reads an optional list of strings from a task config.
func ConfigStrings(cfg map[string]any, key string) ([]string, error) {
	return configStrings(cfg, key)
}

// ConfigInt reads an optional whole number from a task config.
func ConfigInt(cfg map[string]any, key string) (int, error) { return configInt(cfg, key) }

// UnknownKey is the first, in sorted order, of the keys of a task's config block that the
// driver does not know (known); ok is false when it knows them all.
func UnknownKey(raw map[string]any, known map[string]bool) (key string, ok bool) {
	for k := range raw {
		if !known[k] && (!ok || k < key) {
			key, ok = k, true
		}
	}
	return key, ok
}
