package execdriver

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nomadfork/nomad/client/drivers"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestExecDriver_Exec runs commands in a running task: they see its chroot, its processes
// and its environment, run as its user and are in its cgroup.
func TestExecDriver_Exec(t *testing.T) {
	requireIsolation(t)
	marker := filepath.Join(t.TempDir(), "host-only")
	must.NoError(t, os.WriteFile(marker, []byte("x"), 0o644))
	d := New(Options{})
	cfg := testTask(t, map[string]any{"command": "/bin/sh", "args": []any{"-c", "echo task > /local/task-wrote; echo started; exec sleep 300"}})
	h, err := d.Start(cfg)
	must.NoError(t, err)
	t.Cleanup(func() {
		_ = h.Kill(0)
		<-h.WaitCh()
	})
	waitForFile(t, cfg.StdoutPath, "started\n")
	name := cgroupName(cfg.AllocID, cfg.TaskName)

	cases := []struct {
		name      string
		command   []string
		stdin     io.Reader
		tty       bool
		code      int
		stdoutHas []string
		stderrHas string
	}{
		{
			name: "inside the task",
			command: []string{"/bin/sh", "-c", strings.Join([]string{
				`id -u`,
				`test -e ` + marker + ` && echo marker=visible || echo marker=invisible`,
				`tr '\0' ' ' < /proc/1/cmdline; echo`,
				`cat /local/task-wrote`,
				`echo "greeting=$GREETING dir=$PWD"`,
				`grep -q ` + name + ` /proc/self/cgroup && echo cgroup=task`,
				`hostname`,
				`echo oops >&2; exit 5`,
			}, "; ")},
			code: 5,
			stdoutHas: []string{"65534\n", "marker=invisible\n", "sleep 300 \n", "task\n", "greeting=hello dir=/\n",
				"cgroup=task\n", cfg.AllocID[:8] + "\n"},
			stderrHas: "oops",
		},
		{name: "stdin", command: []string{"cat"}, stdin: strings.NewReader("a\nb\n"), stdoutHas: []string{"a\nb\n"}},
		{name: "tty", command: []string{"/bin/sh", "-c", "test -t 0 && test -t 1 && echo tty=yes; id -u"}, tty: true, stdoutHas: []string{"tty=yes", "65534"}},
		{name: "missing program", command: []string{"no-such-program"}, code: 127, stderrHas: "executable file not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr syncBuffer
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			code, err := d.Exec(ctx, cfg, &drivers.ExecOptions{
				Command: tc.command, TTY: tc.tty, Stdin: tc.stdin, Stdout: &stdout, Stderr: &stderr,
			})
			must.NoError(t, err)
			must.Eq(t, tc.code, code, must.Sprintf("stdout %q, stderr %q", stdout.String(), stderr.String()))
			for _, want := range tc.stdoutHas {
				must.StrContains(t, stdout.String(), want)
			}
			must.StrContains(t, stderr.String(), tc.stderrHas)
		})
	}
}

func TestExecDriver_ExecNotRunning(t *testing.T) {
	d := New(Options{})
	cfg := testTask(t, nil)
	_, err := d.Exec(context.Background(), cfg, &drivers.ExecOptions{Command: []string{"true"}})
	must.ErrorContains(t, err, `task "web" is not running`)
	_, err = d.Exec(context.Background(), cfg, &drivers.ExecOptions{})
	must.ErrorContains(t, err, "no command to run")
}

// TestExecDriver_ExecEndsWithTheTask: a command still running when the task ends is killed
// with it, as it is in the task's PID namespace and cgroup.
func TestExecDriver_ExecEndsWithTheTask(t *testing.T) {
	requireIsolation(t)
	d := New(Options{})
	cfg := testTask(t, map[string]any{"command": "/bin/sh", "args": []any{"-c", "echo started; exec sleep 300"}})
	h, err := d.Start(cfg)
	must.NoError(t, err)
	waitForFile(t, cfg.StdoutPath, "started\n")
	var stdout syncBuffer
	done := make(chan error, 1)
	go func() {
		_, err := d.Exec(context.Background(), cfg, &drivers.ExecOptions{
			Command: []string{"/bin/sh", "-c", "echo running; exec sleep 300"}, Stdout: &stdout,
		})
		done <- err
	}()
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool { return stdout.String() == "running\n" }),
		wait.Timeout(20*time.Second), wait.Gap(10*time.Millisecond)))
	must.NoError(t, h.Kill(0))
	<-h.WaitCh()
	select {
	case err := <-done:
		must.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("the exec'd command outlived its task")
	}
}

// TestExecDriver_ExecTTYShellExitCode: an interactive shell with job control on a terminal
// exits with its own code (it leads a session of the task's namespace with the terminal),
// and a session the caller ends takes its command with it (the terminal hangs up).
func TestExecDriver_ExecTTYShellExitCode(t *testing.T) {
	requireIsolation(t)
	d := New(Options{})
	cfg := testTask(t, map[string]any{"command": "/bin/sh", "args": []any{"-c", "echo started; exec sleep 300"}})
	h, err := d.Start(cfg)
	must.NoError(t, err)
	t.Cleanup(func() {
		_ = h.Kill(0)
		<-h.WaitCh()
	})
	waitForFile(t, cfg.StdoutPath, "started\n")

	var stdout syncBuffer
	code, err := d.Exec(context.Background(), cfg, &drivers.ExecOptions{
		Command: []string{"/bin/sh", "-i"}, TTY: true, Stdin: strings.NewReader("echo in-shell\nexit 5\n"), Stdout: &stdout,
	})
	must.NoError(t, err)
	must.Eq(t, 5, code, must.Sprintf("output %q", stdout.String()))
	must.StrContains(t, stdout.String(), "in-shell")
	must.StrNotContains(t, stdout.String(), "Cannot set tty process group")

	// A session ended by its caller: the shell and what it runs go.
	pr, pw := io.Pipe()
	t.Cleanup(func() { _ = pw.Close() })
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = d.Exec(ctx, cfg, &drivers.ExecOptions{Command: []string{"/bin/sh", "-i"}, TTY: true, Stdin: pr, Stdout: &out})
	}()
	_, err = pw.Write([]byte("echo session-up; sleep 300\n"))
	must.NoError(t, err)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool { return strings.Contains(out.String(), "session-up\r\n") }),
		wait.Timeout(20*time.Second), wait.Gap(10*time.Millisecond)))
	cancel()
	<-done
	cgDir := h.(*Handle).State().Cgroups[0]
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool { return len(cgroupPIDs(cgDir)) == 1 }),
		wait.Timeout(20*time.Second), wait.Gap(20*time.Millisecond)), must.Sprint("only the task is left in its cgroup"))
}
