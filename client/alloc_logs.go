package client

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/nomadfork/nomad/structs"
)

// TaskLogFile is the path of a task's stdout or stderr log on this node. It fails with a 404
// when the file does not exist (the task never started here, or its allocation directory is
// gone). The caller authorizes first: the client holds no ACLs.
func (c *Client) TaskLogFile(allocID, task, logType string) (string, error) {
	if logType != "stdout" && logType != "stderr" {
		return "", structs.BadRequest("invalid log type %q: stdout or stderr", logType)
	}
	// IDs and names come from requests: they must stay one path element.
	for _, part := range []string{allocID, task} {
		if part == "" || part == "." || part == ".." || strings.ContainsAny(part, `/\`) {
			return "", structs.BadRequest("invalid allocation ID or task name %q", part)
		}
	}
	path := filepath.Join(c.config.AllocDir, allocID, "alloc", "logs", task+"."+logType+".0")
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", &structs.CodedError{Code: http.StatusNotFound, Err: structs.ErrNotFound,
				Msg: fmt.Sprintf("no %s log for task %q of allocation %s on this node", logType, task, allocID)}
		}
		return "", err
	}
	return path, nil
}

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
