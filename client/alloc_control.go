package client

import (
	"fmt"
	"net/http"
	"sort"

	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/structs"
)

// SignalTask sends a signal (a name such as "SIGHUP" or "HUP"; required) to one task of an
// allocation this client runs, or to every running task when task is "". The caller
// authorizes first: the client holds no ACLs.
func (c *Client) SignalTask(allocID, task, signal string) error {
	sig, err := drivers.ParseSignal(signal)
	if err != nil {
		return structs.BadRequest("invalid Signal: %v", err)
	}
	tasks, err := c.controlTargets(allocID, task)
	if err != nil {
		return err
	}
	for _, tr := range tasks {
		if err := tr.signal(sig, signal); err != nil {
			return err
		}
	}
	return nil
}

// RestartTask restarts one running task of an allocation in place (kill, then start again at
// once, without counting against its restart policy), or every running task with all (or an
// empty task name, as upstream). A task that is not running cannot be restarted.
func (c *Client) RestartTask(allocID, task string, all bool) error {
	if all && task != "" {
		return structs.BadRequest("invalid request: TaskName and AllTasks are exclusive")
	}
	tasks, err := c.controlTargets(allocID, task)
	if err != nil {
		return err
	}
	for _, tr := range tasks {
		if err := tr.restart(); err != nil {
			return err
		}
	}
	return nil
}

// controlTargets are the task runners a signal or restart reaches: the named task, which
// must be running, or every running task of the allocation.
func (c *Client) controlTargets(allocID, task string) ([]*taskRunner, error) {
	r := c.runner(allocID)
	if r == nil {
		return nil, structs.NotFound(structs.ErrAllocNotFound)
	}
	tasks := r.taskRunners()
	var out []*taskRunner
	for _, tr := range tasks {
		if task != "" && tr.task.Name != task {
			continue
		}
		if task != "" && tr.runningHandle() == nil {
			return nil, structs.BadRequest("task %q of allocation %s is not running", task, allocID)
		}
		if tr.runningHandle() != nil {
			out = append(out, tr)
		}
	}
	if task != "" && len(out) == 0 {
		return nil, &structs.CodedError{Code: http.StatusNotFound, Err: structs.ErrNotFound,
			Msg: fmt.Sprintf("task %q not found in allocation %s", task, allocID)}
	}
	if len(out) == 0 {
		return nil, structs.BadRequest("allocation %s has no running task", allocID)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].task.Name < out[j].task.Name })
	return out, nil
}
