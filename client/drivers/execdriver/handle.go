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

// Handle is a running exec task: the shim the agent started (or re-attached to) and the
// task's init under it.
type Handle struct {
	// shim is the shim's process when this run of the agent started it (its parent, which
	// waits for it); nil for a task re-attached after a restart, whose shim is found by
	// shimPID and shimTicks and polled.
	shim      *exec.Cmd
	shimPID   int
	shimTicks uint64
	exitFile  string

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

// HandleState implements drivers.Persistent: the shim, the task's process and its cgroup.
func (h *Handle) HandleState() *drivers.HandleState {
	return &drivers.HandleState{
		Driver: "exec", PID: h.shimPID, StartTime: h.shimTicks, ExitFile: h.exitFile,
		TaskPID: h.state.PID, TaskStartTime: h.state.StartTicks, Cgroups: append([]string(nil), h.cg.dirs...),
	}
}

// Signal implements drivers.TaskHandle (alloc signal), through the shim, which forwards it
// to the task's process. The task is the init of its PID namespace: a signal it has no
// handler for does not reach it, as upstream's. SIGKILL and SIGSTOP, which the shim cannot
// catch, go to the task's process directly.
func (h *Handle) Signal(sig syscall.Signal) error {
	select {
	case <-h.done:
		return errors.New("exec: task is not running")
	default:
	}
	if sig == syscall.SIGKILL || sig == syscall.SIGSTOP {
		if !drivers.ProcAlive(h.state.PID, h.state.StartTicks) {
			return errors.New("exec: task is not running")
		}
		if err := syscall.Kill(h.state.PID, sig); err != nil {
			return fmt.Errorf("exec: signalling task: %w", err)
		}
		return nil
	}
	if err := h.signalShim(sig); err != nil {
		return fmt.Errorf("exec: signalling task: %w", err)
	}
	return nil
}

// signalShim sends sig to the shim, which passes it on to the task. The shim of this run is
// signalled through os.Process (a pidfd where the kernel has them); a re-attached one after
// checking that its PID still names it.
func (h *Handle) signalShim(sig syscall.Signal) error {
	if h.shim != nil {
		err := h.shim.Process.Signal(sig)
		if errors.Is(err, os.ErrProcessDone) {
			return errors.New("task is not running")
		}
		return err
	}
	if !drivers.ProcAlive(h.shimPID, h.shimTicks) {
		return errors.New("task is not running")
	}
	return syscall.Kill(h.shimPID, sig)
}

// State is the task's process and cgroup, for re-attaching to it.
func (h *Handle) State() TaskState { return h.state }

// waitShim waits for the shim this run started, then reports the task's end.
func (h *Handle) waitShim(onExit func()) {
	err := h.shim.Wait()
	h.finish(onExit, drivers.WaitResult(err))
}

// watchShim polls a re-attached shim until it ends (the agent is not its parent: no wait
// tells it), then reports the task's end.
func (h *Handle) watchShim(onExit func()) {
	t := time.NewTicker(recoverPoll)
	defer t.Stop()
	for range t.C {
		if !drivers.ProcAlive(h.shimPID, h.shimTicks) {
			break
		}
	}
	h.finish(onExit, nil)
}

// recoverPoll is how often a re-attached task's shim is checked for having ended.
const recoverPoll = 100 * time.Millisecond

// finish delivers how the task ended, as the shim recorded it. A shim that recorded nothing
// was killed itself: the task's cgroup, which it would have removed, is removed here, and
// the exit code is lost (shimRes, the shim's own end when this run was its parent, says how
// the shim ended).
func (h *Handle) finish(onExit func(), shimRes *drivers.ExitResult) {
	res, ok := drivers.ReadExitFile(h.exitFile)
	if !ok {
		msg := "exec: the task's shim ended without recording how the task ended"
		if shimRes != nil {
			msg += " (shim: " + shimRes.String() + ")"
		}
		res = &drivers.ExitResult{Err: errors.New(msg)}
	}
	if err := h.cg.destroy(); err != nil {
		h.logger.Warn("exec: task cgroup not removed", "error", err)
	}
	onExit()
	close(h.done)
	h.waitCh <- res
	close(h.waitCh)
}

// Kill implements drivers.TaskHandle: the task's kill_signal (SIGTERM by default) to its
// process, then SIGKILL to everything in its cgroup after timeout. The process is the init of
// its PID namespace, which the kernel shields from signals it has no handler for: a command
// that does not handle the kill signal is stopped by the SIGKILL.
func (h *Handle) Kill(timeout time.Duration) error {
	var err error
	h.once.Do(func() {
		select {
		case <-h.done:
			return
		default:
		}
		if e := h.signalShim(h.killSignal); e != nil {
			err = fmt.Errorf("exec: signalling task: %w", e)
		}
		drivers.KillAfter(h.done, timeout, h.cg.kill)
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
