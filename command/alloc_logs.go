package command

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/hashicorp/nomad/api"
)

// AllocLogsCommand prints a task's stdout or stderr log.
type AllocLogsCommand struct {
	Meta

	// Stdout receives the log; nil means the process's own.
	Stdout io.Writer
}

func (c *AllocLogsCommand) Help() string {
	return helpText(`
Usage: nomad alloc logs [options] <allocation> [<task>]

  Print the stdout log of a task (its stderr with -stderr), as the agent of
  the node that runs the allocation keeps it. The task may be left out when
  the allocation's group has a single task.

  <allocation> is an allocation ID or a unique prefix of at least two
  characters; with -job it is a job ID, and a running allocation of that job
  is picked at random.

  When ACLs are enabled, this needs read-logs (or read-fs) and read-job in
  the allocation's namespace.
`, `
Logs Options:

  -stderr
    Print the task's stderr log instead of its stdout.

  -f
    Follow the log: keep printing what the task writes until it ends or the
    command is interrupted.

  -tail
    Print the end of the log only: the last 10 lines, or what -n or -c says.

  -n=<lines>
    With -tail, the number of lines to print.

  -c=<bytes>
    With -tail, the number of bytes to print.

  -task=<task>
    The task, instead of the second argument.

  -job
    Treat <allocation> as a job ID and pick one of its running allocations.
`)
}

func (c *AllocLogsCommand) Synopsis() string { return "Print the logs of a task" }

func (c *AllocLogsCommand) Run(args []string) int {
	var stderr, follow, tail, byJob bool
	var lines, size int64
	var task string
	fs := c.FlagSet("alloc logs")
	fs.BoolVar(&stderr, "stderr", false, "")
	fs.BoolVar(&follow, "f", false, "")
	fs.BoolVar(&tail, "tail", false, "")
	fs.Int64Var(&lines, "n", -1, "")
	fs.Int64Var(&size, "c", -1, "")
	fs.StringVar(&task, "task", "", "")
	fs.BoolVar(&byJob, "job", false, "")
	pos, code, ok := c.parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) < 1 || len(pos) > 2 {
		return c.fail("This command takes one or two arguments: <allocation> [<task>]")
	}
	if len(pos) == 2 {
		if task != "" && task != pos[1] {
			return c.fail("The task is named twice: -task=%s and %s", task, pos[1])
		}
		task = pos[1]
	}
	if (lines >= 0 || size >= 0) && !tail {
		return c.fail("-n and -c need -tail")
	}
	if lines >= 0 && size >= 0 {
		return c.fail("-n and -c cannot be used together")
	}

	client, alloc, ok := c.clientAlloc(pos[0], byJob)
	if !ok {
		return 1
	}
	if task, ok = c.pickTask(alloc, task); !ok {
		return 1
	}
	logType := "stdout"
	if stderr {
		logType = "stderr"
	}
	out := c.Stdout
	if out == nil {
		out = os.Stdout
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logs := &logStream{client: client, alloc: alloc, task: task, logType: logType}

	var err error
	switch {
	case !tail:
		_, err = logs.copy(ctx, out, follow, "start", 0)
	case size >= 0:
		_, err = logs.copy(ctx, out, follow, "end", size)
	default:
		// The last lines: read the whole log keeping only them, then follow from where the
		// read ended.
		if lines < 0 {
			lines = 10
		}
		last := &lastLines{n: int(lines)}
		var read int64
		read, err = logs.copy(ctx, last, false, "start", 0)
		if err == nil {
			_, err = out.Write(last.buf)
		}
		if err == nil && follow {
			_, err = logs.copy(ctx, out, true, "start", read)
		}
	}
	if err != nil {
		return c.fail("Error reading the %s log of task %q: %v", logType, task, err)
	}
	return 0
}

// logStream is one task log, read through the official client's framed logs API.
type logStream struct {
	client  *api.Client
	alloc   *api.Allocation
	task    string
	logType string
}

// copy writes the log from origin and offset to w, and returns how many bytes it wrote.
func (l *logStream) copy(ctx context.Context, w io.Writer, follow bool, origin string, offset int64) (int64, error) {
	frames, errCh := l.client.AllocFS().Logs(l.alloc, follow, l.task, l.logType, origin, offset, ctx.Done(),
		&api.QueryOptions{Namespace: l.alloc.Namespace})
	var n int64
	for {
		select {
		case frame, ok := <-frames:
			if !ok {
				return n, nil
			}
			if _, err := w.Write(frame.Data); err != nil {
				return n, err
			}
			n += int64(len(frame.Data))
		case err := <-errCh:
			return n, err
		case <-ctx.Done():
			return n, nil
		}
	}
}

// lastLines keeps the last n lines written to it (a last line without its newline counts).
type lastLines struct {
	n   int
	buf []byte
}

func (l *lastLines) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	end := len(l.buf)
	if end > 0 && l.buf[end-1] == '\n' {
		end--
	}
	cut, seen := 0, 0
	for i := end - 1; i >= 0; i-- {
		if l.buf[i] == '\n' {
			if seen++; seen == l.n {
				cut = i + 1
				break
			}
		}
	}
	if l.n == 0 {
		cut = len(l.buf)
	}
	if cut > 0 {
		l.buf = bytes.Clone(l.buf[cut:])
	}
	return len(p), nil
}
