package client

import (
	"fmt"
	"net/http"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// LogFileName is the name of a task's log of logType (stdout or stderr) in the allocation's
// alloc/logs directory: the live file (index 0), which rotation copies to archives 1, 2, ...
func LogFileName(task, logType string) string { return task + "." + logType + ".0" }

// TaskLive reports whether a task of an allocation this client runs may still write to its
// logs: it is running, or waiting to start or restart.
func (c *Client) TaskLive(allocID, task string) bool {
	r := c.runner(allocID)
	if r == nil || r.isDone() {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ts := r.states[task]
	return ts == nil || ts.State != structs.TaskStateDead
}

// logsDisabled reports a task's `logs { disabled = true }` (or the older `enabled = false`):
// its output is discarded and no log file is written.
func logsDisabled(lc *api.LogConfig) bool {
	return lc != nil && ((lc.Disabled != nil && *lc.Disabled) || (lc.Enabled != nil && !*lc.Enabled))
}

// errLogsDisabled answers a log read of a task that this client runs with its logs disabled,
// rather than a "no log" that would suggest something went wrong.
func (c *Client) errLogsDisabled(allocID, task string) error {
	r := c.runner(allocID)
	if r == nil {
		return nil
	}
	r.mu.Lock()
	alloc := r.alloc
	r.mu.Unlock()
	if alloc == nil || alloc.Job == nil {
		return nil
	}
	tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup)
	if tg == nil {
		return nil
	}
	for _, t := range tg.Tasks {
		if t != nil && t.Name == task && logsDisabled(t.LogConfig) {
			return &structs.CodedError{Code: http.StatusNotFound, Err: structs.ErrNotFound,
				Msg: fmt.Sprintf("logs of task %q of allocation %s are disabled (logs { disabled = true }): nothing is written", task, allocID)}
		}
	}
	return nil
}
