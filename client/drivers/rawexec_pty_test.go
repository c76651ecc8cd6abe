package drivers

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

func TestRawExec_ExecTTY(t *testing.T) {
	cfg := taskConfig(t, nil)
	resize := make(chan TerminalSize, 1)
	resize <- TerminalSize{Height: 40, Width: 100}
	var out syncBuffer
	code, err := RawExec{}.Exec(context.Background(), cfg, &ExecOptions{
		Command: []string{"/bin/sh", "-c", `tty; stty size; [ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo "all terminals $TERM"; exit 5`},
		TTY:     true, Stdout: &out, Stderr: io.Discard, Resize: resize,
	})
	must.NoError(t, err)
	must.Eq(t, 5, code)
	must.StrContains(t, out.String(), "/dev/pts/")
	// The size sent before the start is the terminal's first.
	must.StrContains(t, out.String(), "40 100")
	must.StrContains(t, out.String(), "all terminals xterm")
}

func TestRawExec_ExecTTYResizeAndInput(t *testing.T) {
	cfg := taskConfig(t, nil)
	resize := make(chan TerminalSize, 1)
	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	var out syncBuffer
	done := make(chan struct{})
	var code int
	var err error
	go func() {
		defer close(done)
		code, err = RawExec{}.Exec(context.Background(), cfg, &ExecOptions{
			Command: []string{"/bin/sh", "-c", `stty size; read line; while [ "$(stty size)" != "50 120" ]; do sleep 0.01; done; echo "resized, got $line"; exit 2`},
			TTY:     true, Stdin: stdinR, Stdout: &out, Stderr: io.Discard, Resize: resize,
		})
	}()
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool { return strings.Contains(out.String(), "24 80") }),
		wait.Timeout(10*time.Second), wait.Gap(10*time.Millisecond)), must.Sprint("the default size first"))
	// The command ends only once it sees the new size (the resize is applied by its own
	// goroutine, so it polls rather than racing it).
	resize <- TerminalSize{Height: 50, Width: 120}
	_, _ = stdinW.Write([]byte("hello\r"))
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the terminal session did not end")
	}
	must.NoError(t, err)
	must.Eq(t, 2, code)
	must.StrContains(t, out.String(), "resized, got hello")
}
