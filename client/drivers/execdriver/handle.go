package execdriver

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nomadfork/nomad/client/drivers"
	"golang.org/x/sys/unix"
)

// TaskState is what finding a task again needs, for an agent that restarts while its
// tasks run: the process (its PID and start time, which together name it even after the
// PID is reused) and its cgroup.
type TaskState struct {
	PID int
	// StartTicks is the process's start time in clock ticks after boot (/proc/<pid>/stat).
	StartTicks uint64
	// CgroupPath is the task's cgroup: the v2 directory, or the v1 memory controller's.
	CgroupPath string
	// Cgroups are all of the task's cgroup directories (one per v1 controller).
	Cgroups []string
}

// Handle is a running exec task.
type Handle struct {
	cmd        *exec.Cmd
	cg         *taskCgroup
	logger     hclog.Logger
	state      TaskState
	killSignal syscall.Signal
	// cfg is what the task was started with, for commands run in it.
	cfg *initConfig

	waitCh chan *drivers.ExitResult
	done   chan struct{}
	once   sync.Once
}

// WaitCh implements drivers.TaskHandle.
func (h *Handle) WaitCh() <-chan *drivers.ExitResult { return h.waitCh }

// PID implements drivers.TaskHandle: the task's process as the host sees it.
func (h *Handle) PID() int { return h.state.PID }

// Signal implements drivers.TaskHandle (alloc signal). The task is the init of its PID
// namespace: a signal it has no handler for does not reach it, as upstream's.
func (h *Handle) Signal(sig syscall.Signal) error {
	select {
	case <-h.done:
		return errors.New("exec: task is not running")
	default:
	}
	if err := h.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("exec: signalling task: %w", err)
	}
	return nil
}

// State is the task's process and cgroup, for re-attaching to it.
func (h *Handle) State() TaskState { return h.state }

// wait waits for the task to end, tells an OOM kill from another SIGKILL by the cgroup's
// count, and removes the cgroup.
func (h *Handle) wait(onExit func(), files ...*os.File) {
	err := h.cmd.Wait()
	for _, f := range files {
		_ = f.Close()
	}
	res := &drivers.ExitResult{}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = int(ws.Signal())
		} else {
			res.ExitCode = exitErr.ExitCode()
		}
	default:
		res.Err = err
	}
	// A task that survived the OOM kill of one of its processes and exited 0 succeeded.
	if (res.Signal != 0 || res.ExitCode != 0) && h.cg.oomKills() > 0 {
		res.OOMKilled = true
	}
	// The task's PID namespace died with its init; destroy kills what is left of the cgroup
	// (commands of an alloc exec) and waits for it to be empty.
	if err := h.cg.destroy(); err != nil {
		h.logger.Warn("exec: task cgroup not removed", "error", err)
	}
	onExit()
	close(h.done)
	h.waitCh <- res
	close(h.waitCh)
}

// Kill implements drivers.TaskHandle: the task's kill_signal (SIGTERM by default) to its
// process, then SIGKILL after timeout. The process is the init of its PID namespace, which
// the kernel shields from signals it has no handler for: a command that does not handle the
// kill signal is stopped by the SIGKILL.
func (h *Handle) Kill(timeout time.Duration) error {
	var err error
	h.once.Do(func() {
		// Through os.Process, which holds a pidfd where the kernel has them: once the task is
		// reaped its PID may be another process's.
		if e := h.cmd.Process.Signal(h.killSignal); e != nil && !errors.Is(e, os.ErrProcessDone) {
			err = fmt.Errorf("exec: signalling task: %w", e)
		}
		go func() {
			t := time.NewTimer(timeout)
			defer t.Stop()
			select {
			case <-h.done:
			case <-t.C:
				_ = h.cmd.Process.Signal(syscall.SIGKILL)
			}
		}()
	})
	return err
}

// parseSignal reads a kill_signal such as "SIGINT" or "INT"; "" is SIGTERM.
func parseSignal(name string) (syscall.Signal, error) {
	if name == "" {
		return syscall.SIGTERM, nil
	}
	upper := strings.ToUpper(name)
	if !strings.HasPrefix(upper, "SIG") {
		upper = "SIG" + upper
	}
	if s := unix.SignalNum(upper); s != 0 {
		return s, nil
	}
	return 0, fmt.Errorf("exec: kill_signal %q is not a signal", name)
}

// processStartTicks reads a process's start time (field 22 of /proc/<pid>/stat).
func processStartTicks(pid int) (uint64, error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces: count after it.
	s := string(raw)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	fields := strings.Fields(s[end+1:])
	// fields[0] is field 3 (state), so field 22 is fields[19].
	if len(fields) < 20 {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	return strconv.ParseUint(fields[19], 10, 64)
}
