package docker

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/nomadfork/nomad/client/drivers"
	"golang.org/x/sys/unix"
)

// logDrainWait bounds how long the log stream is still read after the container exited.
const logDrainWait = 5 * time.Second

// handle is a running container.
type handle struct {
	d          *Driver
	id         string
	pid        int
	killSignal string

	waitCh chan *drivers.ExitResult
	done   chan struct{}
	once   sync.Once
}

func (h *handle) WaitCh() <-chan *drivers.ExitResult { return h.waitCh }

func (h *handle) PID() int { return h.pid }

// Signal implements drivers.TaskHandle.
func (h *handle) Signal(sig syscall.Signal) error {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	if err := h.d.cli.ContainerKill(ctx, h.id, unix.SignalName(sig)); err != nil {
		return fmt.Errorf("docker: signalling container: %w", err)
	}
	return nil
}

// HandleState implements drivers.Persistent.
func (h *handle) HandleState() *drivers.HandleState {
	return &drivers.HandleState{Driver: "docker", ContainerID: h.id}
}

// run follows the container's output into the task's log files until it exits, then
// reports how it ended and removes it.
func (h *handle) run(att types.HijackedResponse, stdout, stderr *os.File, remove func()) {
	h.follow(att.Reader, att.Close, stdout, stderr, remove)
}

// follow copies the container's multiplexed output from stream into the task's log files
// until the container exits, then reports how it ended and removes it.
func (h *handle) follow(stream io.Reader, closeStream func(), stdout, stderr *os.File, remove func()) {
	logsDone := make(chan struct{})
	go func() {
		defer close(logsDone)
		defer stdout.Close()
		defer stderr.Close()
		// The stream ends when the container stops; a process the container left holding
		// it open is not waited for long.
		go func() {
			<-h.done
			t := time.NewTimer(logDrainWait)
			defer t.Stop()
			select {
			case <-logsDone:
			case <-t.C:
				closeStream()
			}
		}()
		_, _ = stdcopy.StdCopy(stdout, stderr, stream)
		closeStream()
	}()

	res := &drivers.ExitResult{}
	statusCh, errCh := h.d.cli.ContainerWait(context.Background(), h.id, container.WaitConditionNotRunning)
	select {
	case st := <-statusCh:
		res.ExitCode = int(st.StatusCode)
		if st.Error != nil && st.Error.Message != "" {
			res.Err = fmt.Errorf("docker: waiting for container: %s", st.Error.Message)
		}
	case err := <-errCh:
		res.Err = fmt.Errorf("docker: waiting for container: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	if insp, err := h.d.cli.ContainerInspect(ctx, h.id); err == nil && insp.State != nil && insp.State.OOMKilled {
		res.Err = fmt.Errorf("docker: container was killed for using more memory than its limit (OOM killed, exit code %d)", res.ExitCode)
	}
	cancel()
	close(h.done)
	<-logsDone
	remove()
	h.waitCh <- res
	close(h.waitCh)
}

// Kill sends the task's kill_signal (SIGTERM by default) to the container, then SIGKILL if
// it is still running after timeout.
func (h *handle) Kill(timeout time.Duration) error {
	var err error
	h.once.Do(func() {
		sig := h.killSignal
		if sig == "" {
			sig = "SIGTERM"
		}
		ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
		defer cancel()
		if e := h.d.cli.ContainerKill(ctx, h.id, sig); e != nil && !strings.Contains(e.Error(), "is not running") {
			err = fmt.Errorf("docker: signalling container with %s: %w", sig, e)
		}
		drivers.KillAfter(h.done, timeout, func() {
			kctx, kcancel := context.WithTimeout(context.Background(), apiTimeout)
			defer kcancel()
			_ = h.d.cli.ContainerKill(kctx, h.id, "SIGKILL")
		})
	})
	return err
}

// readAllLimited reads at most limit bytes of r as a string.
func readAllLimited(r io.Reader, limit int64) (string, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit))
	return string(b), err
}
