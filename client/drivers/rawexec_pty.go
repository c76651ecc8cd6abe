package drivers

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
)

// defaultTerminalSize is a terminal's size until the caller sends its own.
var defaultTerminalSize = TerminalSize{Height: 24, Width: 80}

// execTTY runs cmd on a new pseudo-terminal: the command leads a session of its own with the
// terminal as its controlling one, so its process group (the session's) is what a kill
// reaches, and the terminal follows the caller's size.
func execTTY(ctx context.Context, name string, cmd *exec.Cmd, opts *ExecOptions) (int, error) {
	size := defaultTerminalSize
	// A size the caller sent before the start is the first one the command sees.
	select {
	case s, ok := <-opts.Resize:
		if ok && s.Height > 0 && s.Width > 0 {
			size = s
		}
	default:
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if cmd.Env != nil && !hasEnvKey(cmd.Env, "TERM") {
		cmd.Env = append(cmd.Env, "TERM=xterm")
	}
	ptmx, err := pty.StartWithAttrs(cmd, winsize(size), cmd.SysProcAttr)
	if err != nil {
		return 0, fmt.Errorf("%s: starting %q on a terminal: %w", name, cmd.Args[0], err)
	}
	defer ptmx.Close()
	pgid := cmd.Process.Pid

	// The resizer uses the terminal's raw descriptor: it must be gone before the deferred
	// Close above runs.
	done := make(chan struct{})
	var resizer sync.WaitGroup
	defer func() {
		close(done)
		resizer.Wait()
	}()
	resizer.Go(func() {
		for {
			select {
			case <-done:
				return
			case s, ok := <-opts.Resize:
				if !ok {
					return
				}
				if s.Height > 0 && s.Width > 0 {
					_ = pty.Setsize(ptmx, winsize(s))
				}
			}
		}
	})
	if opts.Stdin != nil {
		// The caller unblocks its reader when the session ends.
		go func() { _, _ = io.Copy(ptmx, opts.Stdin) }()
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		// The terminal reads EIO once the last process holding it is gone.
		copyOutput(opts.Stdout, ptmx)
	}()

	waitErr := cmd.Wait()
	awaitOutput(ctx, copied)
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	select {
	case <-copied:
	case <-time.After(100 * time.Millisecond):
		_ = ptmx.Close()
		<-copied
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return ExitCode(waitErr)
}

func winsize(s TerminalSize) *pty.Winsize {
	return &pty.Winsize{Rows: uint16(min(s.Height, 0xffff)), Cols: uint16(min(s.Width, 0xffff))}
}

func hasEnvKey(env []string, key string) bool {
	for _, e := range env {
		if len(e) > len(key) && e[:len(key)+1] == key+"=" {
			return true
		}
	}
	return false
}
