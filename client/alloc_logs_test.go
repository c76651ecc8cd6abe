package client

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestLogsDisabled: a task with logs { disabled = true } writes no log file (its output goes
// nowhere), and a log read says the logs are disabled; its neighbour's logs are kept.
func TestLogsDisabled(t *testing.T) {
	c, s := testClient(t)
	quiet := &api.Task{Name: "quiet", Driver: "raw_exec", Config: map[string]any{
		"command": "/bin/sh", "args": []string{"-c", "echo out; echo err >&2"}},
		LogConfig: &api.LogConfig{Disabled: new(true)}}
	loud := &api.Task{Name: "loud", Driver: "raw_exec", Config: map[string]any{
		"command": "/bin/sh", "args": []string{"-c", "echo out"}}}
	a := testAlloc("a1", structs.JobTypeBatch, quiet, loud)
	s.setAllocs(a)
	waitFor(t, "a1 complete", reportedStatus(s, "a1", structs.AllocClientStatusComplete))

	logs := filepath.Join(c.config.AllocDir, "a1", "alloc", "logs")
	entries, err := os.ReadDir(logs)
	must.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	must.SliceContains(t, names, LogFileName("loud", "stdout"))
	for _, n := range names {
		must.StrNotHasPrefix(t, "quiet.", n, must.Sprintf("no log file of the task with logs disabled: %v", names))
	}

	_, err = c.OpenTaskLogReader("a1", "quiet", "stdout", 0, false)
	must.Error(t, err)
	must.Eq(t, http.StatusNotFound, structs.ErrorCode(err))
	must.StrContains(t, err.Error(), "disabled")
	rd, err := c.OpenTaskLogReader("a1", "loud", "stdout", 0, false)
	must.NoError(t, err)
	must.NoError(t, rd.Close())
}
