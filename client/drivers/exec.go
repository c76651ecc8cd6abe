package drivers

import (
	"context"
	"errors"
	"io"
)

// FSIsolation is how far a driver's tasks are kept from the host's filesystem. It decides
// which ACL capability running a command in a task needs: a command in a task without
// isolation runs on the node itself, so it takes alloc-node-exec instead of alloc-exec.
// The values are upstream's.
type FSIsolation string

const (
	FSIsolationNone   FSIsolation = "none"
	FSIsolationChroot FSIsolation = "chroot"
	FSIsolationImage  FSIsolation = "image"
)

// TerminalSize is the size of the caller's terminal, for commands run with a TTY.
type TerminalSize struct {
	Height int
	Width  int
}

// ExecOptions is one command to run in a running task's context.
type ExecOptions struct {
	// Command is the program and its arguments; it is not run through a shell.
	Command []string
	// TTY asks for a pseudo-terminal; drivers that cannot give one fail with ErrTTYUnsupported.
	TTY bool
	// Stdin is read until EOF or until the command ends; nil is an empty input.
	Stdin io.Reader
	// Stdout and Stderr receive the command's output; the driver may write to them from
	// several goroutines, one per stream, but never to one stream concurrently.
	Stdout io.Writer
	Stderr io.Writer
	// Resize delivers terminal size changes; without a TTY they are ignored.
	Resize <-chan TerminalSize
}

// ErrTTYUnsupported is what a driver answers to a TTY it cannot allocate.
var ErrTTYUnsupported = errors.New("a TTY is not supported by this agent yet: run the command without one (-t=false)")

// ExecDriver is a driver that can run commands in the context of tasks it started.
type ExecDriver interface {
	Driver
	// FSIsolation is the filesystem isolation of the driver's tasks.
	FSIsolation() FSIsolation
	// Exec runs opts.Command in the context of the task started with cfg and returns its
	// exit code once it ended and its output was delivered. A done ctx kills the command.
	Exec(ctx context.Context, cfg *TaskConfig, opts *ExecOptions) (int, error)
}

// builtin are the drivers this binary has, by name, for questions about a task whose driver
// instance is not at hand (it runs on another node).
var builtin = []ExecDriver{RawExec{}, Mock{}}

// FSIsolationOf is the filesystem isolation of the named driver's tasks. An unknown driver
// counts as having none, so that the stricter rule applies to what we know nothing about.
func FSIsolationOf(driver string) FSIsolation {
	for _, d := range builtin {
		if d.Name() == driver {
			return d.FSIsolation()
		}
	}
	return FSIsolationNone
}

// RegisterBuiltin adds a driver of another package (docker) to those FSIsolationOf knows.
// It is called from that package's init, before any request.
func RegisterBuiltin(d ExecDriver) { builtin = append(builtin, d) }
