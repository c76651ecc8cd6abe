package drivers

import (
	"context"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// syncBuffer is an output that the driver's copy goroutine and the test may share.
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

func TestRawExec_Exec(t *testing.T) {
	cases := []struct {
		name     string
		command  []string
		stdin    io.Reader
		code     int
		stdout   string
		stderr   string
		errorHas string
	}{
		{
			name:    "output, exit code, directory and environment",
			command: []string{"/bin/sh", "-c", `echo "$GREETING $(basename "$PWD")"; echo oops >&2; exit 4`},
			code:    4, stdout: "hello {dir}\n", stderr: "oops\n",
		},
		{name: "stdin", command: []string{"cat"}, stdin: strings.NewReader("a\nb\n"), stdout: "a\nb\n"},
		{name: "no stdin reads nothing", command: []string{"cat"}},
		{name: "signal", command: []string{"/bin/sh", "-c", "kill -KILL $$"}, code: 137},
		{name: "missing program", command: []string{"/no/such"}, errorHas: "no such file or directory"},
		{name: "empty command", command: []string{}, errorHas: "no command to run"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := taskConfig(t, nil)
			var stdout, stderr syncBuffer
			code, err := RawExec{}.Exec(context.Background(), cfg, &ExecOptions{
				Command: tc.command, Stdin: tc.stdin, Stdout: &stdout, Stderr: &stderr,
			})
			if tc.errorHas != "" {
				must.ErrorContains(t, err, tc.errorHas)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.code, code)
			must.Eq(t, strings.ReplaceAll(tc.stdout, "{dir}", lastElem(cfg.TaskDir)), stdout.String())
			must.Eq(t, tc.stderr, stderr.String())
		})
	}
}

func lastElem(path string) string { return path[strings.LastIndex(path, "/")+1:] }

// TestRawExec_ExecLeftovers: a command that leaves a process holding its output ends when
// the command does, and takes the leftover with it.
func TestRawExec_ExecLeftovers(t *testing.T) {
	cfg := taskConfig(t, nil)
	var stdout syncBuffer
	start := time.Now()
	code, err := RawExec{}.Exec(context.Background(), cfg, &ExecOptions{
		Command: []string{"/bin/sh", "-c", "sleep 300 & echo $!"}, Stdout: &stdout, Stderr: io.Discard,
	})
	must.NoError(t, err)
	must.Eq(t, 0, code)
	must.Less(t, 10*time.Second, time.Since(start))
	pid, err := strconv.Atoi(strings.TrimSpace(stdout.String()))
	must.NoError(t, err)
	deadline := time.Now().Add(5 * time.Second)
	for !gone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the leftover process %d still runs", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRawExec_ExecCancel(t *testing.T) {
	cfg := taskConfig(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	defer pw.Close()
	done := make(chan error, 1)
	go func() {
		_, err := RawExec{}.Exec(ctx, cfg, &ExecOptions{Command: []string{"sleep", "300"}, Stdin: pr, Stdout: io.Discard, Stderr: io.Discard})
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		must.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled exec did not end")
	}
}

func TestExec_TTYUnsupported(t *testing.T) {
	for _, d := range []ExecDriver{Mock{}} {
		t.Run(d.Name(), func(t *testing.T) {
			_, err := d.Exec(context.Background(), taskConfig(t, nil), &ExecOptions{Command: []string{"sh"}, TTY: true})
			must.ErrorIs(t, err, ErrTTYUnsupported)
		})
	}
}

func TestMock_Exec(t *testing.T) {
	var stdout syncBuffer
	code, err := Mock{}.Exec(context.Background(), taskConfig(t, nil), &ExecOptions{
		Command: []string{"echo", "hi"}, Stdin: strings.NewReader("in\n"), Stdout: &stdout,
	})
	must.NoError(t, err)
	must.Eq(t, 0, code)
	must.Eq(t, "echo hi\nin\n", stdout.String())
}

func TestFSIsolationOf(t *testing.T) {
	must.Eq(t, FSIsolationNone, FSIsolationOf("raw_exec"))
	must.Eq(t, FSIsolationImage, FSIsolationOf("mock_driver"))
	must.Eq(t, FSIsolationNone, FSIsolationOf("qemu"), must.Sprint("unknown drivers get the stricter rule"))
}
