package command

import (
	"net/http"
	"os"
	"testing"

	"github.com/creack/pty"
	"github.com/gorilla/websocket"
	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"golang.org/x/sys/unix"
)

// echoOn reports whether the terminal echoes input, which raw mode turns off.
func echoOn(t *testing.T, tty *os.File) bool {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	must.NoError(t, err)
	return tio.Lflag&unix.ECHO != 0
}

// TestAllocExec_Terminal: with a terminal as stdin, -t is the default, the terminal is raw
// while the session runs, its size is sent as a tty_size frame, and it is restored after.
func TestAllocExec_Terminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	must.NoError(t, err)
	t.Cleanup(func() { _ = ptmx.Close(); _ = tty.Close() })
	must.NoError(t, pty.Setsize(ptmx, &pty.Winsize{Rows: 25, Cols: 99}))
	must.True(t, echoOn(t, tty))

	var rawDuring bool
	var size *api.TerminalSize
	exec := func(w http.ResponseWriter, r *http.Request) {
		conn, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			t.Errorf("upgrade: %v", err)
			return
		}
		defer conn.Close()
		for size == nil {
			var in api.ExecStreamingInput
			if err := conn.ReadJSON(&in); err != nil {
				return
			}
			size = in.TTYSize
		}
		rawDuring = !echoOn(t, tty)
		_ = conn.WriteJSON(api.ExecStreamingOutput{Exited: true, Result: &api.ExecStreamingExitResult{ExitCode: 5}})
	}
	fa := newFakeAgent(t, map[string]route{
		"GET /v1/allocations":                                jsonBody(`[{"ID":"` + execAllocID + `"}]`),
		"GET /v1/allocation/" + execAllocID:                  jsonBody(execAllocJSON),
		"GET /v1/client/allocation/" + execAllocID + "/exec": exec,
	})
	ui := cli.NewMockUi()
	cmd := &AllocExecCommand{Meta: Meta{Ui: ui}, Stdin: tty, Stdout: tty, Stderr: tty}
	code := cmd.Run([]string{"-address=" + fa.srv.URL, execAllocID, "/bin/sh"})
	must.Eq(t, 5, code, must.Sprint(ui.ErrorWriter.String()))
	reqs := fa.find("GET", "/v1/client/allocation/"+execAllocID+"/exec")
	must.SliceLen(t, 1, reqs)
	must.Eq(t, []string{"true"}, reqs[0].Query["tty"])
	must.True(t, rawDuring, must.Sprint("the terminal is raw during the session"))
	must.Eq(t, &api.TerminalSize{Height: 25, Width: 99}, size)
	must.True(t, echoOn(t, tty), must.Sprint("the terminal is restored after the session"))
}
