package drivers

import (
	"context"
	"io"
	"strings"
)

// FSIsolation implements ExecDriver: a mock task runs nothing on the host, so it counts as
// isolated, which lets tests reach the alloc-exec (not alloc-node-exec) rule.
func (Mock) FSIsolation() FSIsolation { return FSIsolationImage }

// Exec implements ExecDriver: it prints the command line, then echoes stdin to stdout until
// EOF, and exits 0.
func (Mock) Exec(ctx context.Context, _ *TaskConfig, opts *ExecOptions) (int, error) {
	if opts.TTY {
		return 0, ErrTTYUnsupported
	}
	out := opts.Stdout
	if out == nil {
		out = io.Discard
	}
	if _, err := io.WriteString(out, strings.Join(opts.Command, " ")+"\n"); err != nil {
		return 0, err
	}
	if opts.Stdin != nil {
		done := make(chan error, 1)
		go func() {
			_, err := io.Copy(out, opts.Stdin)
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				return 0, err
			}
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return 0, nil
}
