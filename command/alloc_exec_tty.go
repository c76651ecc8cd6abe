package command

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/hashicorp/nomad/api"
	"golang.org/x/term"
)

// terminalOf is the terminal stdin is, nil when it is none.
func terminalOf(stdin io.Reader) *os.File {
	f, ok := stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return f
}

// rawTerminal puts the local terminal in raw mode for a session with a remote terminal:
// keys (^C included) go to the remote command, which echoes and edits itself. It returns
// the function that restores the terminal, which the caller must call before it prints
// anything of its own, and the channel of the terminal's sizes (the current one first,
// then one per SIGWINCH until ctx ends).
func rawTerminal(ctx context.Context, tty *os.File) (restore func(), sizes <-chan api.TerminalSize, err error) {
	fd := int(tty.Fd())
	state, err := term.MakeRaw(fd)
	if err != nil {
		return func() {}, nil, err
	}
	restored := false
	restore = func() {
		if !restored {
			restored = true
			_ = term.Restore(fd, state)
		}
	}
	ch := make(chan api.TerminalSize, 1)
	send := func() {
		w, h, err := term.GetSize(fd)
		if err != nil {
			return
		}
		size := api.TerminalSize{Height: h, Width: w}
		// Only the latest size matters.
		select {
		case <-ch:
		default:
		}
		ch <- size
	}
	send()
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	go func() {
		defer signal.Stop(winch)
		for {
			select {
			case <-ctx.Done():
				return
			case <-winch:
				send()
			}
		}
	}()
	return restore, ch, nil
}
