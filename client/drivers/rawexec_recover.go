package drivers

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// recoverPoll is how often a re-attached raw_exec task is checked for having ended: the
// agent is not its parent, so no wait tells it.
const recoverPoll = 100 * time.Millisecond

// procStartTime reads the start time (field 22) and state (field 3) of /proc/<pid>/stat.
// A process that is gone returns os.ErrNotExist.
func procStartTime(pid int) (uint64, byte, error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			return 0, 0, os.ErrNotExist
		}
		return 0, 0, err
	}
	// The command name (field 2) is in parentheses and may hold anything, spaces and
	// parentheses included: the fields that follow start after the last ')'.
	end := bytes.LastIndexByte(raw, ')')
	if end < 0 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	fields := bytes.Fields(raw[end+1:])
	if len(fields) < 20 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields)+2)
	}
	start, err := strconv.ParseUint(string(fields[19]), 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("/proc/%d/stat: start time: %w", pid, err)
	}
	return start, fields[0][0], nil
}

// procAlive reports whether pid still names the process that started at start. A zombie has
// ended: it only waits for its parent.
func procAlive(pid int, start uint64) bool {
	got, state, err := procStartTime(pid)
	return err == nil && got == start && state != 'Z' && state != 'X'
}

// ProcStartTime is the start time of a process (field 22 of /proc/<pid>/stat, clock ticks
// after boot); os.ErrNotExist when it is gone.
func ProcStartTime(pid int) (uint64, error) {
	start, _, err := procStartTime(pid)
	return start, err
}

// ProcAlive reports whether pid still names the running (not zombie) process that started
// at start: a PID the kernel gave to another process since does not count.
func ProcAlive(pid int, start uint64) bool { return procAlive(pid, start) }

// HandleState implements Persistent.
func (h *rawExecHandle) HandleState() *HandleState {
	pid := h.cmd.Process.Pid
	start, _, err := procStartTime(pid)
	if err != nil {
		// Ended already: a state naming no process is recovered from its exit file.
		return &HandleState{Driver: "raw_exec", PID: pid, ExitFile: h.exitFile}
	}
	return &HandleState{Driver: "raw_exec", PID: pid, StartTime: start, ExitFile: h.exitFile}
}

// Recover implements Recoverer: the task's shim is found by PID and start time, and watched
// until it ends; its exit file then says how the task ended. A task that ended while no agent
// ran is known by its exit file alone. Its output already goes straight to its log files,
// which it holds open itself.
func (RawExec) Recover(cfg *TaskConfig, st *HandleState) (TaskHandle, error) {
	if st == nil {
		return nil, ErrTaskNotFound
	}
	killSig, err := rawExecKillSignal(cfg)
	if err != nil {
		killSig = syscall.SIGTERM // it started with this kill_signal; a stop must still work
	}
	h := &recoveredProc{pid: st.PID, start: st.StartTime, exitFile: st.ExitFile, killSignal: killSig,
		waitCh: make(chan *ExitResult, 1), done: make(chan struct{})}
	if st.PID <= 0 || st.StartTime == 0 || !procAlive(st.PID, st.StartTime) {
		res, ok := readExit(st.ExitFile)
		if !ok {
			return nil, ErrTaskNotFound
		}
		close(h.done)
		h.waitCh <- res
		close(h.waitCh)
		return h, nil
	}
	go h.watch()
	return h, nil
}

// recoveredProc is a raw_exec task a previous run of the agent started.
type recoveredProc struct {
	pid      int
	start    uint64
	exitFile string
	// killSignal is the task's kill_signal, SIGTERM by default.
	killSignal syscall.Signal
	waitCh     chan *ExitResult
	done       chan struct{}
	once       sync.Once
}

// watch polls the process until it ends; it is the goroutine's only exit, as cmd.Wait is
// for a task this run started.
func (h *recoveredProc) watch() {
	t := time.NewTicker(recoverPoll)
	defer t.Stop()
	for range t.C {
		if !procAlive(h.pid, h.start) {
			break
		}
	}
	// Whatever the task left in its process group goes with it, as for a task of this run.
	_ = syscall.Kill(-h.pid, syscall.SIGKILL)
	res, ok := readExit(h.exitFile)
	if !ok {
		res = &ExitResult{Err: ErrExitCodeLost}
	}
	close(h.done)
	h.waitCh <- res
	close(h.waitCh)
}

func (h *recoveredProc) WaitCh() <-chan *ExitResult { return h.waitCh }

func (h *recoveredProc) PID() int { return h.pid }

// HandleState implements Persistent.
func (h *recoveredProc) HandleState() *HandleState {
	return &HandleState{Driver: "raw_exec", PID: h.pid, StartTime: h.start, ExitFile: h.exitFile}
}

// Signal implements TaskHandle, to the task's process only (the shim's child).
func (h *recoveredProc) Signal(sig syscall.Signal) error {
	child := 0
	if procAlive(h.pid, h.start) {
		child = taskChild(h.pid, h.exitFile)
	}
	if child == 0 {
		return errors.New("raw_exec: task is not running")
	}
	return syscall.Kill(child, sig)
}

// Kill sends the task's kill_signal (SIGTERM by default) to its process group, then SIGKILL
// after timeout; the PID is checked first, so that a process that took the number since is
// never signalled.
func (h *recoveredProc) Kill(timeout time.Duration) error {
	var err error
	h.once.Do(func() {
		if !procAlive(h.pid, h.start) {
			return
		}
		if e := syscall.Kill(-h.pid, h.killSignal); e != nil && !errors.Is(e, syscall.ESRCH) {
			err = fmt.Errorf("raw_exec: signalling task: %w", e)
		}
		KillAfter(h.done, timeout, func() {
			if procAlive(h.pid, h.start) {
				_ = syscall.Kill(-h.pid, syscall.SIGKILL)
			}
		})
	})
	return err
}
