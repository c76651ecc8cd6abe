package drivers

import (
	"errors"
	"os/exec"
	"syscall"
	"time"
)

// WaitResult turns what exec.Cmd.Wait returned into an exit result: the signal that ended the
// process, or its exit code; any other error means the driver lost track of it.
func WaitResult(err error) *ExitResult {
	res := &ExitResult{}
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
	return res
}

// ExitCode is how a shell reports the end of a process (WaitResult): its exit code, or 128
// plus the signal that ended it; any other error is returned.
func ExitCode(err error) (int, error) {
	res := WaitResult(err)
	switch {
	case res.Err != nil:
		return 0, res.Err
	case res.Signal != 0:
		return 128 + res.Signal, nil
	}
	return res.ExitCode, nil
}

// KillAfter is the second step of a Kill: a task still running (done open) when timeout has
// passed since its kill_signal gets kill. The goroutine ends with whichever comes first.
func KillAfter(done <-chan struct{}, timeout time.Duration, kill func()) {
	go func() {
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			kill()
		}
	}()
}
