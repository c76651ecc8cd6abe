package client

import (
	"github.com/nomadfork/nomad/structs"
)

// LogFileName is the name of a task's log of logType (stdout or stderr) in the allocation's
// alloc/logs directory: the live file (index 0), which rotation copies to archives 1, 2, ...
func LogFileName(task, logType string) string { return task + "." + logType + ".0" }

// TaskLive reports whether a task of an allocation this client runs may still write to its
// logs: it is running, or waiting to start or restart.
func (c *Client) TaskLive(allocID, task string) bool {
	c.mu.Lock()
	r := c.runners[allocID]
	c.mu.Unlock()
	if r == nil || r.isDone() {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ts := r.states[task]
	return ts == nil || ts.State != structs.TaskStateDead
}
