package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/structs"
)

// errExecDisabled answers every exec on a node with disable_remote_exec set.
var errExecDisabled = structs.PermissionDenied("remote exec is disabled on this node (client disable_remote_exec)")

// ExecTarget is what the agent needs to decide whether a caller may run a command in a task
// of an allocation this client runs. The client holds no ACLs: the agent authorizes with the
// servers, then calls Exec.
type ExecTarget struct {
	AllocID   string
	Namespace string
	Task      string
	// Driver is the task's driver, "" when the allocation has no such task.
	Driver string
	// FSIsolation is that of the task's driver; an unknown task has none (the stricter rule).
	FSIsolation drivers.FSIsolation
	// Err says why no command can run in the task now (no such task, not running, a driver
	// without exec). It is only for an authorized caller: one who may not exec learns
	// nothing about the allocation's tasks.
	Err error
}

// ExecTarget looks up a task of an allocation on this node. It fails with a 403 when the
// node disables remote exec and a 404 when this client does not run the allocation.
func (c *Client) ExecTarget(allocID, task string) (*ExecTarget, error) {
	t, _, _, err := c.execTask(allocID, task)
	return t, err
}

// Exec runs a command in the context of a running task and returns its exit code. The
// command ends with ctx, when the task is stopped, or when the client shuts down.
func (c *Client) Exec(ctx context.Context, allocID, task string, opts *drivers.ExecOptions) (int, error) {
	if len(opts.Command) == 0 || opts.Command[0] == "" {
		return 0, structs.BadRequest("no command to run")
	}
	t, tr, driver, err := c.execTask(allocID, task)
	if err != nil {
		return 0, err
	}
	if t.Err != nil {
		return 0, t.Err
	}
	// Only the program: its arguments may hold secrets.
	c.logger.Info("running a command in a task", "alloc_id", allocID, "task", task, "command", opts.Command[0])
	return c.execIn(ctx, tr, driver, opts)
}

// execIn runs a command in a running task's context; it ends with ctx, the task or the client.
func (c *Client) execIn(ctx context.Context, tr *taskRunner, driver drivers.ExecDriver, opts *drivers.ExecOptions) (int, error) {
	task := tr.task.Name
	tr.mu.Lock()
	cfg := tr.cfg
	tr.mu.Unlock()

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(c.ctx, func() { cancel(errExecClientShutdown) })
	defer stop()
	go func() {
		select {
		case <-tr.killCh:
			cancel(fmt.Errorf("task %q stopped while the command ran", task))
		case <-ctx.Done():
		}
	}()
	code, err := driver.Exec(ctx, cfg, opts)
	if err != nil && ctx.Err() != nil {
		return 0, context.Cause(ctx)
	}
	return code, err
}

// errExecClientShutdown ends the commands still running when the client shuts down.
var errExecClientShutdown = errors.New("client shutting down")

func (c *Client) execTask(allocID, task string) (*ExecTarget, *taskRunner, drivers.ExecDriver, error) {
	if c.config.DisableRemoteExec {
		return nil, nil, nil, errExecDisabled
	}
	return c.localExecTask(allocID, task)
}

// localExecTask is execTask for what the client itself runs in its tasks (script checks),
// which disable_remote_exec does not concern.
func (c *Client) localExecTask(allocID, task string) (*ExecTarget, *taskRunner, drivers.ExecDriver, error) {
	r := c.runner(allocID)
	if r == nil {
		return nil, nil, nil, structs.NotFound(structs.ErrAllocNotFound)
	}
	r.mu.Lock()
	alloc, state := r.alloc, r.states[task]
	var tr *taskRunner
	for _, candidate := range r.tasks {
		if candidate.task.Name == task {
			tr = candidate
		}
	}
	r.mu.Unlock()

	t := &ExecTarget{AllocID: allocID, Namespace: alloc.Namespace, Task: task, FSIsolation: drivers.FSIsolationNone}
	if tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup); tg != nil {
		for _, spec := range tg.Tasks {
			if spec.Name == task {
				t.Driver = spec.Driver
			}
		}
	}
	if t.Driver == "" {
		t.Err = &structs.CodedError{Code: http.StatusNotFound, Err: structs.ErrNotFound,
			Msg: fmt.Sprintf("task %q not found in allocation %s", task, allocID)}
		return t, nil, nil, nil
	}
	driver, ok := c.drivers[t.Driver].(drivers.ExecDriver)
	if !ok {
		t.Err = structs.BadRequest("driver %q of task %q cannot run commands in its tasks", t.Driver, task)
		return t, nil, nil, nil
	}
	t.FSIsolation = driver.FSIsolation()
	running := false
	if tr != nil && state != nil && state.State == structs.TaskStateRunning {
		tr.mu.Lock()
		running = tr.handle != nil && tr.cfg != nil
		tr.mu.Unlock()
	}
	if !running || tr.killed() {
		t.Err = structs.BadRequest("task %q of allocation %s is not running", task, allocID)
	}
	return t, tr, driver, nil
}
