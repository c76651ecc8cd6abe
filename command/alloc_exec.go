package command

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

// AllocExecCommand runs a command in a task of a running allocation and exits with the
// command's exit code.
type AllocExecCommand struct {
	Meta

	// Stdin, Stdout and Stderr are the local ends of the remote command's streams; nil means
	// the process's own.
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

func (c *AllocExecCommand) Help() string {
	return helpText(`
Usage: nomad alloc exec [options] <allocation> <command> [<args>...]

  Run a command in the context of a running task: its directory, its
  environment, on its node. The command's output is shown as it comes, the
  local input is sent to it (unless -i=false), and this command exits with
  the remote command's exit code. Everything after <allocation> is the
  command and its arguments, flags included.

  <allocation> is an allocation ID or a unique prefix of at least two
  characters; with -job it is a job ID, and a running allocation of that job
  is picked at random.

  When ACLs are enabled, this needs alloc-exec in the allocation's namespace,
  or alloc-node-exec instead when the task's driver does not isolate its
  filesystem (raw_exec): such a command runs on the node itself. Looking the
  allocation up needs read-job. The command must reach the agent of the node
  that runs the allocation.
`, `
Exec Options:

  -task=<task>
    The task to run the command in. It may be left out when the allocation's
    group has a single task.

  -job
    Treat <allocation> as a job ID and pick one of its running allocations.

  -i
    Pass the local standard input to the command. Defaults to true; with
    -i=false the command's input is empty.

  -t
    Allocate a pseudo-terminal for the command. Defaults to true when the
    local standard input is a terminal. The local terminal is then put in raw
    mode for the session (keys, ^C included, go to the remote command) and
    restored when it ends; its size follows the local window's.
`)
}

func (c *AllocExecCommand) Synopsis() string { return "Run a command in a running allocation" }

func (c *AllocExecCommand) Run(args []string) int {
	var task string
	var byJob, stdinOn, tty bool
	localStdin := c.Stdin
	if localStdin == nil {
		localStdin = os.Stdin
	}
	localTerm := terminalOf(localStdin)
	fs := c.FlagSet("alloc exec")
	fs.StringVar(&task, "task", "", "")
	fs.BoolVar(&byJob, "job", false, "")
	fs.BoolVar(&stdinOn, "i", true, "")
	fs.BoolVar(&tty, "t", localTerm != nil, "")
	// Flags end at the allocation: what follows is the remote command's, dashes and all.
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cli.RunResultHelp
		}
		return c.fail("Error parsing flags: %v", err)
	}
	pos := fs.Args()
	if len(pos) < 2 {
		return c.fail("This command takes at least two arguments: <allocation> <command> [<args>...]")
	}
	target, command := pos[0], pos[1:]

	client, alloc, ok := c.clientAlloc(target, byJob)
	if !ok {
		return 1
	}
	if task, ok = c.pickTask(alloc, task); !ok {
		return 1
	}
	switch alloc.ClientStatus {
	case "complete", "failed", "lost":
		return c.fail("Allocation %s is %s: commands run only in running allocations", shortID(alloc.ID), alloc.ClientStatus)
	}

	var stdin io.Reader = strings.NewReader("")
	if stdinOn {
		stdin = localStdin
	}
	var stdout, stderr io.Writer = c.Stdout, c.Stderr
	if stdout == nil {
		stdout = os.Stdout
	}
	if stderr == nil {
		stderr = os.Stderr
	}

	// An interrupt closes the session, which kills the remote command.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var sizes <-chan api.TerminalSize
	restore := func() {}
	if tty && stdinOn && localTerm != nil {
		var err error
		if restore, sizes, err = rawTerminal(ctx, localTerm); err != nil {
			return c.fail("Failed to put the terminal in raw mode: %v", err)
		}
		// Restored on every way out, and before anything of ours is printed.
		defer restore()
	}
	code, err := client.Allocations().Exec(ctx, alloc, task, tty, command, stdin, stdout, stderr, sizes,
		&api.QueryOptions{Namespace: alloc.Namespace})
	restore()
	if err != nil {
		return c.fail("Failed to exec into task %q: %v", task, err)
	}
	return code
}
