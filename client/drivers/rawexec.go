package drivers

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/nomadfork/nomad/structs"
)

// RawExec runs a task's `command` with its `args` as a process of the host, as the agent's
// user, without isolation. Each task is its own process group, so a kill reaches the
// processes it started too.
type RawExec struct{}

// Name implements Driver.
func (RawExec) Name() string { return "raw_exec" }

// Fingerprint implements Driver.
func (RawExec) Fingerprint() *structs.DriverInfo {
	return &structs.DriverInfo{
		Detected: true, Healthy: true, HealthDescription: "Healthy",
		Attributes: map[string]string{"driver.raw_exec": "true"},
		UpdateTime: time.Now(),
	}
}

// Start implements Driver.
func (RawExec) Start(cfg *TaskConfig) (TaskHandle, error) {
	command, err := configString(cfg.Config, "command")
	if err != nil {
		return nil, err
	}
	if command == "" {
		return nil, errors.New(`raw_exec: config "command" is required`)
	}
	args, err := configStrings(cfg.Config, "args")
	if err != nil {
		return nil, err
	}
	// The logs live in the allocation directory the task can write to: opened inside it, a
	// link the task put in their place cannot make the agent write to a file of the host.
	stdout, stderr, err := OpenTaskLogs(cfg)
	if err != nil {
		return nil, fmt.Errorf("raw_exec: %w", err)
	}
	// Resolved as before the shim existed: with the agent's PATH, relative to the task's
	// directory; a command that is not there fails the start, not the task.
	resolved := exec.Command(command)
	if resolved.Err != nil {
		_ = stdout.Close()
		_ = stderr.Close()
		return nil, fmt.Errorf("raw_exec: starting %q: %w", command, resolved.Err)
	}
	path := resolved.Path
	if check := path; !filepath.IsAbs(check) {
		if _, err := os.Stat(filepath.Join(cfg.TaskDir, check)); err != nil {
			_ = stdout.Close()
			_ = stderr.Close()
			return nil, fmt.Errorf("raw_exec: starting %q: %w", command, err)
		}
	} else if _, err := os.Stat(check); err != nil {
		_ = stdout.Close()
		_ = stderr.Close()
		return nil, fmt.Errorf("raw_exec: starting %q: %w", command, err)
	}
	killSig, err := rawExecKillSignal(cfg)
	if err != nil {
		_ = stdout.Close()
		_ = stderr.Close()
		return nil, err
	}
	exitFile := filepath.Join(cfg.TaskDir, exitFileName)
	_ = os.Remove(exitFile) // an earlier run's
	cmd, err := shimCommand(append([]string{path}, args...))
	if err != nil {
		_ = stdout.Close()
		_ = stderr.Close()
		return nil, fmt.Errorf("raw_exec: finding the agent's binary for the task's shim: %w", err)
	}
	cmd.Dir = cfg.TaskDir
	cmd.Env = append(taskEnv(cfg), shimEnv+"="+exitFile, argv0Env+"="+command)
	if cfg.NetNS != "" {
		cmd.Env = append(cmd.Env, netNSEnv+"="+cfg.NetNS)
	}
	if cfg.User != "" {
		// As upstream: raw_exec runs the task as its `user` (the agent must be root to).
		cred, err := lookupCredential(cfg.User)
		if err != nil {
			_ = stdout.Close()
			_ = stderr.Close()
			return nil, fmt.Errorf("raw_exec: user %q: %w", cfg.User, err)
		}
		cmd.Env = append(cmd.Env, userEnv+"="+cred)
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = stdout.Close()
		_ = stderr.Close()
		return nil, fmt.Errorf("raw_exec: starting %q: %w", command, err)
	}
	h := &rawExecHandle{cmd: cmd, exitFile: exitFile, killSignal: killSig, waitCh: make(chan *ExitResult, 1), done: make(chan struct{})}
	go h.wait(stdout, stderr)
	return h, nil
}

// taskEnv is the agent's environment with the task's own on top, in a stable order.
func taskEnv(cfg *TaskConfig) []string {
	env := os.Environ()
	keys := slices.Sorted(maps.Keys(cfg.Env))
	for _, k := range keys {
		env = append(env, k+"="+cfg.Env[k])
	}
	return env
}

type rawExecHandle struct {
	cmd *exec.Cmd
	// exitFile is where the shim records how the task ended.
	exitFile string
	// killSignal is the task's kill_signal, SIGTERM by default.
	killSignal syscall.Signal
	waitCh     chan *ExitResult
	done       chan struct{}
	once       sync.Once
}

// rawExecKillSignal is the signal a stop sends first: the task's kill_signal, else SIGTERM.
// The shim catches every signal, so any of them reaches the task while the shim waits.
func rawExecKillSignal(cfg *TaskConfig) (syscall.Signal, error) {
	if cfg == nil || cfg.KillSignal == "" {
		return syscall.SIGTERM, nil
	}
	sig, err := ParseSignal(cfg.KillSignal)
	if err != nil {
		return 0, fmt.Errorf("raw_exec: kill_signal: %w", err)
	}
	return syscall.Signal(sig), nil
}

func (h *rawExecHandle) wait(files ...*os.File) {
	err := h.cmd.Wait()
	// Whatever the task left in its process group goes with it.
	_ = syscall.Kill(-h.cmd.Process.Pid, syscall.SIGKILL)
	for _, f := range files {
		_ = f.Close()
	}
	// The shim's record says how the task ended; without one (the shim was killed with it),
	// the shim's own end does.
	res, ok := readExit(h.exitFile)
	if !ok {
		res = WaitResult(err)
	}
	close(h.done)
	h.waitCh <- res
	close(h.waitCh)
}

func (h *rawExecHandle) WaitCh() <-chan *ExitResult { return h.waitCh }

func (h *rawExecHandle) PID() int { return h.cmd.Process.Pid }

// Signal implements TaskHandle, to the task's process only (the shim's child).
func (h *rawExecHandle) Signal(sig syscall.Signal) error {
	select {
	case <-h.done:
		return errors.New("raw_exec: task is not running")
	default:
	}
	child := taskChild(h.cmd.Process.Pid, h.exitFile)
	if child == 0 {
		return errors.New("raw_exec: task is not running")
	}
	return syscall.Kill(child, sig)
}

// Kill sends the task's kill_signal (SIGTERM by default) to its process group, then SIGKILL
// if it is still there after timeout.
func (h *rawExecHandle) Kill(timeout time.Duration) error {
	var err error
	h.once.Do(func() {
		pgid := h.cmd.Process.Pid
		if e := syscall.Kill(-pgid, h.killSignal); e != nil && !errors.Is(e, syscall.ESRCH) {
			err = fmt.Errorf("raw_exec: signalling task: %w", e)
		}
		KillAfter(h.done, timeout, func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
	})
	return err
}

// lookupCredential is "uid:gid" of a user name or numeric uid known to the host.
func lookupCredential(name string) (string, error) {
	u, err := user.Lookup(name)
	if err != nil {
		if _, numErr := strconv.ParseUint(name, 10, 32); numErr != nil {
			return "", err
		}
		if u, err = user.LookupId(name); err != nil {
			return "", err
		}
	}
	return u.Uid + ":" + u.Gid, nil
}
