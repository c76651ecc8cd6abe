package drivers

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/nomadfork/nomad/structs"
)

// Mock is a driver for tests: its tasks run no process, they wait for `run_for` (a duration
// such as "30s"; 0 ends at once) and exit with `exit_code`, after writing `stdout_string` to
// their stdout. `start_error` makes Start fail with that message. A kill ends the task at
// once, as if by SIGTERM.
type Mock struct{}

// Name implements Driver; the name upstream gives its mock driver.
func (Mock) Name() string { return "mock_driver" }

// Fingerprint implements Driver.
func (Mock) Fingerprint() *structs.DriverInfo {
	return &structs.DriverInfo{Detected: true, Healthy: true, HealthDescription: "Healthy", UpdateTime: time.Now()}
}

// Start implements Driver.
func (Mock) Start(cfg *TaskConfig) (TaskHandle, error) {
	if msg, err := configString(cfg.Config, "start_error"); err != nil {
		return nil, err
	} else if msg != "" {
		return nil, errors.New(msg)
	}
	var runFor time.Duration
	if raw, err := configString(cfg.Config, "run_for"); err != nil {
		return nil, err
	} else if raw != "" {
		if runFor, err = time.ParseDuration(raw); err != nil {
			return nil, fmt.Errorf("mock_driver: run_for: %w", err)
		}
	}
	code, err := configInt(cfg.Config, "exit_code")
	if err != nil {
		return nil, err
	}
	stdout, err := configString(cfg.Config, "stdout_string")
	if err != nil {
		return nil, err
	}
	if stdout != "" && cfg.StdoutPath != "" {
		// Written before Start returns, so the output is complete by the time the task is
		// seen to run; the file may exist already (a restart), and the output is appended.
		f, err := os.OpenFile(cfg.StdoutPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("mock_driver: stdout: %w", err)
		}
		_, werr := f.WriteString(stdout)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, fmt.Errorf("mock_driver: stdout: %w", werr)
		}
	}
	h := &mockHandle{waitCh: make(chan *ExitResult, 1), kill: make(chan struct{})}
	go func() {
		t := time.NewTimer(runFor)
		defer t.Stop()
		res := &ExitResult{ExitCode: code}
		select {
		case <-t.C:
		case <-h.kill:
			res = &ExitResult{Signal: int(syscall.SIGTERM)}
		}
		h.waitCh <- res
		close(h.waitCh)
	}()
	return h, nil
}

type mockHandle struct {
	waitCh chan *ExitResult
	kill   chan struct{}
	once   sync.Once

	mu      sync.Mutex
	signals []syscall.Signal
}

func (h *mockHandle) WaitCh() <-chan *ExitResult { return h.waitCh }
func (h *mockHandle) PID() int                   { return 0 }

// Signal implements TaskHandle: the mock task records the signals it got.
func (h *mockHandle) Signal(sig syscall.Signal) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.signals = append(h.signals, sig)
	return nil
}

func (h *mockHandle) Kill(time.Duration) error {
	h.once.Do(func() { close(h.kill) })
	return nil
}
