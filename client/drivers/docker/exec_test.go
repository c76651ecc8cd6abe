package docker

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/client/drivers/docker/dockertest"
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

// runningTask starts a task that runs until the test ends.
func runningTask(t *testing.T) (*Driver, *drivers.TaskConfig) {
	t.Helper()
	d, root := testDriver(t)
	cfg := newTask(t, root, map[string]any{"image": dockertest.Image, "args": []any{"sleep"}})
	h, err := d.Start(cfg)
	must.NoError(t, err)
	t.Cleanup(func() { _ = h.Kill(0); <-h.WaitCh() })
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return strings.Contains(readFile(t, cfg.StdoutPath), "sleeping")
	}), wait.Timeout(30*time.Second), wait.Gap(20*time.Millisecond)))
	return d, cfg
}

func TestDocker_Exec(t *testing.T) {
	d, cfg := runningTask(t)
	cases := []struct {
		name           string
		command        []string
		code           int
		stdout, stderr string
	}{
		{name: "streams", command: []string{"/taskbin", "echo", "in", "container"}, stdout: "in container\n", stderr: "err:in container\n"},
		{name: "exit code", command: []string{"/taskbin", "exit", "7"}, code: 7},
		{name: "task dir mounted", command: []string{"/taskbin", "cat", "/local/probe"}, stdout: "probe"},
		{name: "no terminal without tty", command: []string{"/taskbin", "tty"}, stdout: "notty\n"},
	}
	must.NoError(t, writeFile(cfg.TaskDir+"/local/probe", "probe"))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr syncBuffer
			code, err := d.Exec(context.Background(), cfg, &drivers.ExecOptions{Command: tc.command, Stdout: &stdout, Stderr: &stderr})
			must.NoError(t, err)
			must.Eq(t, tc.code, code)
			must.Eq(t, tc.stdout, stdout.String())
			must.Eq(t, tc.stderr, stderr.String())
		})
	}
}

func TestDocker_ExecTTY(t *testing.T) {
	d, cfg := runningTask(t)
	resize := make(chan drivers.TerminalSize, 1)
	resize <- drivers.TerminalSize{Height: 30, Width: 90}
	var stdout syncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// taskbin waits until its terminal has the size sent, then prints it and exits.
	code, err := d.Exec(ctx, cfg, &drivers.ExecOptions{
		Command: []string{"/taskbin", "tty", "90x30"}, TTY: true,
		// An input that ends at once does not end the terminal session.
		Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: io.Discard, Resize: resize,
	})
	must.NoError(t, err)
	must.Eq(t, 0, code)
	must.StrContains(t, stdout.String(), "tty 90x30", must.Sprintf("output %q", stdout.String()))
}

func TestDocker_ExecCancelled(t *testing.T) {
	d, cfg := runningTask(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := d.Exec(ctx, cfg, &drivers.ExecOptions{Command: []string{"/taskbin", "sleep"}, Stdout: io.Discard, Stderr: io.Discard})
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		must.ErrorIs(t, err, context.Canceled)
	case <-time.After(30 * time.Second):
		t.Fatal("a cancelled exec did not end")
	}
}
