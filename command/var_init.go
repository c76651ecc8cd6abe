package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/nomad/api"
)

// VarInitCommand writes an example variable specification.
type VarInitCommand struct {
	Meta
}

var varSpec = specInit{
	noun:           "variable",
	defaultHCLFile: "spec.nv.hcl",
	defaultJSON:    "spec.nv.json",
	hcl: `# A variable specification, as "nomad var put @<file>" reads it and
# "nomad var get -out hcl" prints it.
#
# path is where the variable lives; a path given on the command line wins.
# Jobs read the variables under nomad/jobs/<job>[/<group>[/<task>]] without a
# policy of their own.
path = "nomad/jobs/example"

# namespace defaults to the command's namespace.
# namespace = "default"

# items are the variable's keys and their string values. They replace every
# item the variable had.
items {
  username = "app"
  password = "change-me"
}
`,
	json: `{
  "Path": "nomad/jobs/example",
  "Items": {
    "username": "app",
    "password": "change-me"
  }
}
`,
}

func (c *VarInitCommand) Help() string {
	return helpText(`
Usage: nomad var init [options] [<filename>]

  Write an example variable specification to a file, to edit and then write
  with "nomad var put @<filename>".
`, varSpec.options())
}

func (c *VarInitCommand) Synopsis() string { return "Create an example variable specification file" }

func (c *VarInitCommand) Run(args []string) int {
	return varSpec.run(&c.Meta, c.FlagSet("var init"), args)
}

// variableSpecHCL is the HCL form of a variable specification.
type variableSpecHCL struct {
	Path        string `hcl:"path,optional"`
	Namespace   string `hcl:"namespace,optional"`
	ModifyIndex uint64 `hcl:"modify_index,optional"`
	Items       *struct {
		Values hcl.Attributes `hcl:",remain"`
	} `hcl:"items,block"`
}

// parseVariableSpec reads a variable specification: JSON when it starts with '{', HCL
// otherwise. Every item value must be a string.
func parseVariableSpec(src []byte) (*api.Variable, error) {
	if strings.HasPrefix(strings.TrimSpace(string(src)), "{") {
		var v api.Variable
		if err := json.Unmarshal(src, &v); err != nil {
			return nil, err
		}
		return &v, nil
	}
	file, diags := hclsyntax.ParseConfig(src, "spec.nv.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diags
	}
	var spec variableSpecHCL
	if diags := gohcl.DecodeBody(file.Body, nil, &spec); diags.HasErrors() {
		return nil, diags
	}
	v := &api.Variable{Path: spec.Path, Namespace: spec.Namespace, ModifyIndex: spec.ModifyIndex, Items: map[string]string{}}
	if spec.Items != nil {
		for k, attr := range spec.Items.Values {
			var s string
			if diags := gohcl.DecodeExpression(attr.Expr, nil, &s); diags.HasErrors() {
				return nil, fmt.Errorf("item %q: %s", k, diags.Error())
			}
			v.Items[k] = s
		}
	}
	return v, nil
}

// VarLockCommand runs a child command while holding a variable's lock.
type VarLockCommand struct {
	Meta
	// ctx ends the wait for the lock and the child; the CLI ends it on an interrupt.
	ctx context.Context
}

func (c *VarLockCommand) Help() string {
	return helpText(`
Usage: nomad var lock [options] <path> <child command> [<args>...]

  Acquire the lock of the variable at <path> (creating the variable if it
  does not exist), run the child command while renewing the lock, and release
  it when the child exits. Only one holder at a time: the command waits, up
  to -max-retry attempts, while another holds the lock. If the lock is lost,
  the child is stopped. The exit code is the child's.
`, `
Lock Options:

  -ttl=<duration>
    How long the lock lives without renewal. The default is 15s.

  -delay=<duration>
    How long the lock stays held after it expires without release. The
    default is 15s.

  -max-retry=<n>
    How many times to try to acquire a held lock, a TTL apart. The default
    is 5.

  -shell
    Run the child command through "sh -c" (the arguments are joined).

  -verbose
    Report acquiring, renewing and releasing the lock.
`)
}

func (c *VarLockCommand) Synopsis() string { return "Run a command while holding a variable lock" }

func (c *VarLockCommand) Run(args []string) int {
	var ttl, delay time.Duration
	var maxRetry int
	var shell, verbose bool
	fs := c.FlagSet("var lock")
	fs.DurationVar(&ttl, "ttl", api.DefaultLockTTL, "")
	fs.DurationVar(&delay, "delay", api.DefaultLockDelay, "")
	fs.IntVar(&maxRetry, "max-retry", 5, "")
	fs.BoolVar(&shell, "shell", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	// The child's own flags must reach it untouched: flags end at the path.
	if err := fs.Parse(args); err != nil {
		return c.fail("Error parsing flags: %v", err)
	}
	rest := fs.Args()
	if len(rest) < 2 {
		return c.fail("This command takes at least two arguments: <path> <child command>")
	}
	if ttl < time.Second {
		return c.fail("Invalid -ttl %s: must be at least 1s", ttl)
	}
	if delay < 0 || maxRetry < 0 {
		return c.fail("Invalid -delay or -max-retry: must not be negative")
	}
	client, ok := c.client()
	if !ok {
		return 1
	}
	path, child := rest[0], rest[1:]
	ctx := c.ctx
	if ctx == nil {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
	}

	v := api.Variable{Path: path, Namespace: c.Namespace(), Lock: &api.VariableLock{TTL: ttl.String(), LockDelay: delay.String()}}
	locks, err := client.Locks(api.WriteOptions{Namespace: c.Namespace()}, v)
	if err != nil {
		return c.fail("Error preparing the lock: %v", err)
	}
	for attempt := 0; ; attempt++ {
		_, err = locks.Acquire(ctx)
		if err == nil {
			break
		}
		if !errors.Is(err, api.ErrLockConflict) || attempt >= maxRetry {
			return c.fail("Error acquiring the lock of %q: %v", path, err)
		}
		if verbose {
			c.Ui.Output(fmt.Sprintf("Lock of %q is held; retrying in %s", path, ttl))
		}
		select {
		case <-time.After(ttl):
		case <-ctx.Done():
			return c.fail("Interrupted while waiting for the lock of %q", path)
		}
	}
	if verbose {
		c.Ui.Output(fmt.Sprintf("Lock of %q acquired", path))
	}
	code := c.runHolding(ctx, locks, child, shell, verbose)

	// Release with a context of its own: an interrupt must not leave the lock held.
	rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := locks.Release(rctx); err != nil {
		c.Ui.Error(fmt.Sprintf("Error releasing the lock of %q: %v", path, err))
		if code == 0 {
			code = 1
		}
	} else if verbose {
		c.Ui.Output(fmt.Sprintf("Lock of %q released", path))
	}
	return code
}

// runHolding runs the child and renews the lock until it exits. The renewal goroutine is
// owned here: it stops with the child and is waited for before returning. A failed renewal
// means the lock may pass to another holder, so the child is killed.
func (c *VarLockCommand) runHolding(ctx context.Context, locks *api.Locks, child []string, shell, verbose bool) int {
	var cmd *exec.Cmd
	if shell {
		joined := ""
		for i, a := range child {
			if i > 0 {
				joined += " "
			}
			joined += a
		}
		cmd = exec.Command("/bin/sh", "-c", joined)
	} else {
		cmd = exec.Command(child[0], child[1:]...)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return c.fail("Error starting the child command: %v", err)
	}

	childCtx, stopRenew := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var lost error
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(locks.LockTTL() / 2)
		defer tick.Stop()
		for {
			select {
			case <-childCtx.Done():
				if ctx.Err() != nil {
					_ = cmd.Process.Signal(os.Interrupt)
				}
				return
			case <-tick.C:
				if err := locks.Renew(childCtx); err != nil && childCtx.Err() == nil {
					lost = err
					_ = cmd.Process.Kill()
					return
				}
				if verbose {
					c.Ui.Output("Lock renewed")
				}
			}
		}
	}()
	err := cmd.Wait()
	stopRenew()
	wg.Wait()
	if lost != nil {
		return c.fail("Lock lost (%v): the child command was stopped", lost)
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return exitErr.ExitCode()
	}
	if err != nil {
		return c.fail("Error running the child command: %v", err)
	}
	return 0
}
