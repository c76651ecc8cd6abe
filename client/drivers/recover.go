package drivers

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// HandleState is what a driver needs to find a started task again after the agent restarted.
// The client stores it (client/state.go) before it reports the task running.
type HandleState struct {
	Driver string
	// PID and StartTime name the process of a raw_exec or exec task's shim: StartTime is
	// field 22 of /proc/<pid>/stat (clock ticks after boot), so a PID the kernel gave to
	// another process since is not mistaken for the task.
	PID       int    `json:",omitempty"`
	StartTime uint64 `json:",omitempty"`
	// ExitFile is where a raw_exec or exec task's shim records how the task ended.
	ExitFile string `json:",omitempty"`
	// TaskPID and TaskStartTime name an exec task's own process (its init, under the shim),
	// which alloc exec joins; Cgroups are its cgroup directories.
	TaskPID       int      `json:",omitempty"`
	TaskStartTime uint64   `json:",omitempty"`
	Cgroups       []string `json:",omitempty"`
	// ContainerID names a docker task's container.
	ContainerID string `json:",omitempty"`
}

// Recoverer is a driver that can re-attach to a task a previous run of the agent started.
type Recoverer interface {
	// Recover returns a handle on the task st names. It fails with ErrTaskNotFound when the
	// task is gone and how it ended cannot be known; a driver that knows how it ended returns
	// a handle whose WaitCh delivers that at once.
	Recover(cfg *TaskConfig, st *HandleState) (TaskHandle, error)
}

// DanglingRemover is a driver whose tasks can outlive the agent in a place it must clean: when
// the client starts it removes what a previous run left, but the tasks in keep (by the IDs of
// their handle states) which the client re-attaches to.
type DanglingRemover interface {
	RemoveDangling(ctx context.Context, keep map[string]bool) (int, error)
}

// Persistent is a handle that can say how to find its task again.
type Persistent interface {
	HandleState() *HandleState
}

// ErrTaskNotFound: the task a handle state names no longer runs, and its exit is unknown.
var ErrTaskNotFound = errors.New("task not found")

// ErrExitCodeLost: a re-attached raw_exec task ended, and its shim, killed with it, left no
// record of how: the agent is not its parent and cannot learn its exit code otherwise.
var ErrExitCodeLost = errors.New("exit code unknown: the task was re-attached after an agent restart, and its shim recorded no exit")

// ParseSignal turns a signal name ("SIGHUP", "hup") into its number.
func ParseSignal(name string) (unix.Signal, error) {
	if name == "" {
		return 0, errors.New("no signal given")
	}
	n := name
	if len(n) < 3 || (n[:3] != "SIG" && n[:3] != "sig") {
		n = "SIG" + n
	}
	sig := unix.SignalNum(upper(n))
	if sig == 0 {
		return 0, fmt.Errorf("unknown signal %q", name)
	}
	return sig, nil
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
