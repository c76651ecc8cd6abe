package drivers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// execOutputWait bounds how long the output of an exec'd command is still read after the
// command exited, when something it started in the background keeps its stdout or stderr
// open. Then that process group is killed.
const execOutputWait = time.Second

// FSIsolation implements ExecDriver: raw_exec tasks see the host as the agent does.
func (RawExec) FSIsolation() FSIsolation { return FSIsolationNone }

// Exec implements ExecDriver. The command is a new process of the agent's user, started in
// the task's directory with the task's environment, in a process group of its own that is
// killed once the command exits (as a task's is), so nothing it started outlives the session.
// A command killed by a signal reports 128 plus the signal, as shells do.
func (RawExec) Exec(ctx context.Context, cfg *TaskConfig, opts *ExecOptions) (int, error) {
	if len(opts.Command) == 0 || opts.Command[0] == "" {
		return 0, errors.New("raw_exec: no command to run")
	}
	cmd := exec.CommandContext(ctx, opts.Command[0], opts.Command[1:]...)
	cmd.Dir = cfg.TaskDir
	cmd.Env = taskEnv(cfg)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if cfg.NetNS == "" {
		return RunExec(ctx, "raw_exec", cmd, opts)
	}
	// In bridge mode the command runs in the allocation's network, as the task does: it is
	// forked from a thread moved into the namespace, which is never handed back to the
	// runtime (JoinNetNS leaves it locked, so it ends with this goroutine).
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		if err := JoinNetNS(cfg.NetNS); err != nil {
			done <- result{0, fmt.Errorf("raw_exec: %w", err)}
			return
		}
		code, err := RunExec(ctx, "raw_exec", cmd, opts)
		done <- result{code, err}
	}()
	r := <-done
	return r.code, r.err
}

// RunExec runs cmd as one alloc exec session for a driver of any package, and returns its
// exit code once it ended and its output was delivered, as RawExec.Exec does: cmd leads a
// process group of its own (a session, on a terminal when opts.TTY) that is killed when it
// ends. cmd's stdio and SysProcAttr are RunExec's to set; its Cancel should kill that group.
// name prefixes errors.
func RunExec(ctx context.Context, name string, cmd *exec.Cmd, opts *ExecOptions) (int, error) {
	if opts.TTY {
		return execTTY(ctx, name, cmd, opts)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}

	// The output pipes are ours rather than exec's, so that the end of the command, not the
	// end of its output, decides when the session ends: a background child holding stdout
	// open cannot keep it going.
	var readers, writers []*os.File
	defer func() {
		for _, f := range append(readers, writers...) {
			_ = f.Close()
		}
	}()
	for range 2 {
		r, w, err := os.Pipe()
		if err != nil {
			return 0, fmt.Errorf("%s: creating output pipe: %w", name, err)
		}
		readers, writers = append(readers, r), append(writers, w)
	}
	cmd.Stdout, cmd.Stderr = writers[0], writers[1]
	var stdin io.WriteCloser
	if opts.Stdin != nil {
		var err error
		if stdin, err = cmd.StdinPipe(); err != nil {
			return 0, fmt.Errorf("%s: creating input pipe: %w", name, err)
		}
	}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("%s: starting %q: %w", name, cmd.Args[0], err)
	}
	for _, w := range writers {
		_ = w.Close()
	}
	writers = nil

	if stdin != nil {
		// Ends when the caller's stdin ends, or at the first write after the command is gone
		// (Wait closes the pipe); the caller unblocks its reader when the session ends.
		go func() {
			_, _ = io.Copy(stdin, opts.Stdin)
			_ = stdin.Close()
		}()
	}
	var copies sync.WaitGroup
	for i, w := range []io.Writer{opts.Stdout, opts.Stderr} {
		copies.Go(func() { copyOutput(w, readers[i]) })
	}
	copied := make(chan struct{})
	go func() {
		copies.Wait()
		close(copied)
	}()

	waitErr := cmd.Wait()
	awaitOutput(ctx, copied)
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	// What the killed group had written is still read; a process that left the group and
	// keeps the pipe open is not waited for.
	select {
	case <-copied:
	case <-time.After(100 * time.Millisecond):
		for _, r := range readers {
			_ = r.Close()
		}
		<-copied
	}

	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return ExitCode(waitErr)
}

// copyOutput copies a command's output to w; once w fails (the caller went away) the rest
// is read and dropped, so the command never blocks on a full pipe.
func copyOutput(w io.Writer, r io.Reader) {
	if w == nil {
		w = io.Discard
	}
	if _, err := io.Copy(w, r); err != nil {
		_, _ = io.Copy(io.Discard, r)
	}
}

// awaitOutput waits, once an exec's process has ended, for the copies of its output to end
// (copied closed), at most execOutputWait, or until ctx ends.
func awaitOutput(ctx context.Context, copied <-chan struct{}) {
	wait := time.NewTimer(execOutputWait)
	defer wait.Stop()
	select {
	case <-copied:
	case <-wait.C:
	case <-ctx.Done():
	}
}
