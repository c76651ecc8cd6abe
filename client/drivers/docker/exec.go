package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/nomadfork/nomad/client/drivers"
)

// Exec implements drivers.ExecDriver through the engine's exec API: the command runs in the
// task's container with the task's environment, with a terminal when asked (resized as the
// caller's changes).
func (d *Driver) Exec(ctx context.Context, cfg *drivers.TaskConfig, opts *drivers.ExecOptions) (int, error) {
	if d.err != nil {
		return 0, fmt.Errorf("docker: no client: %w", d.err)
	}
	if len(opts.Command) == 0 || opts.Command[0] == "" {
		return 0, errors.New("docker: no command to run")
	}
	env := make([]string, 0, len(cfg.Env))
	for k, v := range cfg.Env {
		switch k {
		case "NOMAD_ALLOC_DIR", "NOMAD_TASK_DIR", "NOMAD_SECRETS_DIR":
			continue
		}
		env = append(env, k+"="+v)
	}
	env = append(env, "NOMAD_ALLOC_DIR="+containerAllocDir, "NOMAD_TASK_DIR="+containerTaskDir, "NOMAD_SECRETS_DIR="+containerSecretsDir)
	sort.Strings(env)
	if opts.TTY && !hasEnv(env, "TERM") {
		env = append(env, "TERM=xterm")
	}

	eopts := container.ExecOptions{
		Cmd:          opts.Command,
		Env:          env,
		Tty:          opts.TTY,
		AttachStdin:  opts.Stdin != nil,
		AttachStdout: true,
		AttachStderr: true,
	}
	if opts.TTY {
		// A size the caller sent before the start; engines of API 1.42 and later apply it at
		// the start, older ones (the client drops it) from the first resize.
		select {
		case s, ok := <-opts.Resize:
			if ok && s.Height > 0 && s.Width > 0 {
				eopts.ConsoleSize = &[2]uint{uint(s.Height), uint(s.Width)}
			}
		default:
		}
	}
	created, err := d.cli.ContainerExecCreate(ctx, containerName(cfg), eopts)
	if err != nil {
		return 0, fmt.Errorf("docker: creating exec: %w", err)
	}
	att, err := d.cli.ContainerExecAttach(ctx, created.ID, container.ExecAttachOptions{Tty: opts.TTY})
	if err != nil {
		return 0, fmt.Errorf("docker: attaching to exec: %w", err)
	}
	defer att.Close()

	if opts.Stdin != nil {
		go func() {
			_, _ = io.Copy(att.Conn, opts.Stdin)
			// On a terminal the end of input is a character (^D), not a close: the engine
			// ends a terminal session whose input closes, even while the command runs.
			if !opts.TTY {
				_ = att.CloseWrite()
			}
		}()
	}
	if opts.TTY {
		resize := opts.Resize
		if eopts.ConsoleSize != nil {
			// Applied again once the command runs, for engines that ignored it at create.
			first := drivers.TerminalSize{Height: int(eopts.ConsoleSize[0]), Width: int(eopts.ConsoleSize[1])}
			resize = withFirstSize(ctx, first, opts.Resize)
		}
		go d.resizeExec(ctx, created.ID, resize)
	}
	copied := make(chan error, 1)
	go func() {
		stdout, stderr := orDiscard(opts.Stdout), orDiscard(opts.Stderr)
		var err error
		if opts.TTY {
			// A terminal has one stream.
			_, err = io.Copy(stdout, att.Reader)
		} else {
			_, err = stdcopy.StdCopy(stdout, stderr, att.Reader)
		}
		copied <- err
	}()
	select {
	case <-copied:
	case <-ctx.Done():
		d.killExec(created.ID)
		return 0, ctx.Err()
	}
	ictx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	// The stream ends a moment before the engine records the exit code.
	for {
		insp, err := d.cli.ContainerExecInspect(ictx, created.ID)
		if err != nil {
			return 0, fmt.Errorf("docker: inspecting exec: %w", err)
		}
		if !insp.Running {
			return insp.ExitCode, nil
		}
		select {
		case <-ictx.Done():
			return 0, fmt.Errorf("docker: exec output ended but the command still runs")
		case <-ctx.Done():
			d.killExec(created.ID)
			return 0, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// resizeExec applies the caller's terminal sizes until the session ends. The first may come
// before the engine has started the command, when a resize fails: it is tried again.
func (d *Driver) resizeExec(ctx context.Context, execID string, sizes <-chan drivers.TerminalSize) {
	for {
		select {
		case <-ctx.Done():
			return
		case size, ok := <-sizes:
			if !ok {
				return
			}
			if size.Height <= 0 || size.Width <= 0 {
				continue
			}
			opts := container.ResizeOptions{Height: uint(size.Height), Width: uint(size.Width)}
			for range 50 {
				if d.cli.ContainerExecResize(ctx, execID, opts) == nil {
					break
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}
	}
}

// killExec kills an exec'd command whose caller went away: the engine has no call to end
// an exec, so its process is killed by PID (the agent and the engine share the host).
func (d *Driver) killExec(execID string) {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	if insp, err := d.cli.ContainerExecInspect(ctx, execID); err == nil && insp.Running && insp.Pid > 0 {
		_ = syscall.Kill(insp.Pid, syscall.SIGKILL)
	}
}

func hasEnv(env []string, key string) bool {
	for _, e := range env {
		if len(e) > len(key) && e[:len(key)+1] == key+"=" {
			return true
		}
	}
	return false
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// withFirstSize delivers first, then rest's sizes, until ctx ends.
func withFirstSize(ctx context.Context, first drivers.TerminalSize, rest <-chan drivers.TerminalSize) <-chan drivers.TerminalSize {
	out := make(chan drivers.TerminalSize)
	go func() {
		next := first
		for {
			select {
			case <-ctx.Done():
				return
			case out <- next:
			}
			var ok bool
			select {
			case <-ctx.Done():
				return
			case next, ok = <-rest:
				if !ok {
					return
				}
			}
		}
	}()
	return out
}
