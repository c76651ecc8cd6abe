package client

import (
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/nomadfork/nomad/client/allocdir"
	"github.com/nomadfork/nomad/structs"
)

// OpenTaskLog opens a task's stdout or stderr log on this node for reading. It fails with a
// 404 when the file does not exist (the task never started here, or its allocation directory
// is gone). The file is opened inside the allocation directory: a link a task left in
// alloc/logs cannot make the agent read a file of the host. The caller authorizes first: the
// client holds no ACLs.
func (c *Client) OpenTaskLog(allocID, task, logType string) (*os.File, error) {
	if logType != "stdout" && logType != "stderr" {
		return nil, structs.BadRequest("invalid log type %q: stdout or stderr", logType)
	}
	// IDs and names come from requests: each must stay one path element.
	for _, part := range []string{allocID, task} {
		if err := allocdir.CheckElem(part); err != nil {
			return nil, structs.BadRequest("invalid allocation ID or task name %q", part)
		}
	}
	root, err := allocdir.Join(c.config.AllocDir, allocID)
	if err != nil {
		return nil, structs.BadRequest("invalid allocation ID: %v", err)
	}
	path, err := allocdir.Join(root, "alloc", "logs", LogFileName(task, logType))
	if err != nil {
		return nil, structs.BadRequest("invalid task name: %v", err)
	}
	f, err := allocdir.OpenFile(root, path, os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &structs.CodedError{Code: http.StatusNotFound, Err: structs.ErrNotFound,
				Msg: fmt.Sprintf("no %s log for task %q of allocation %s on this node", logType, task, allocID)}
		}
		if info, lerr := os.Lstat(path); lerr == nil && info.Mode()&os.ModeSymlink != 0 {
			// The task replaced its log with a link; what it points to is not the caller's
			// to read.
			return nil, structs.BadRequest("the %s log of task %q of allocation %s is a link that leaves the allocation directory", logType, task, allocID)
		}
		return nil, err
	}
	return f, nil
}

// LogFileName is the name of a task's log of logType (stdout or stderr) in the allocation's
// alloc/logs directory. Only the first file (index 0) is written: logs are not rotated.
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
