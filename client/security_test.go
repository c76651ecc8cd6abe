package client

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/internal/pathtest"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// The servers refuse such names, but an allocation that reaches the client anyway (a job
// stored before the validation, a bug) must not make the agent, running as root, create,
// write or remove anything outside its allocation directory.
func TestSecurity_ClientRefusesPathsOutsideAllocDir(t *testing.T) {
	cases := []struct {
		name    string
		allocID string
		task    string
	}{
		{name: "traversal task name", allocID: "a1", task: "../../../../../../../../tmp/x"},
		{name: "relative escape", allocID: "a1", task: "../../escaped"},
		{name: "dot dot task", allocID: "a1", task: ".."},
		{name: "dot task", allocID: "a1", task: "."},
		{name: "NUL in task", allocID: "a1", task: "we\x00b"},
		{name: "dot dot allocation ID", allocID: "..", task: "web"},
		{name: "traversal allocation ID", allocID: "../escaped", task: "web"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			allocDir := filepath.Join(base, "data", "alloc")
			servers := newFakeServers()
			c, err := New(&Config{
				Name: "test", AllocDir: allocDir, StateDir: filepath.Join(base, "data", "client"),
				Drivers:      []drivers.Driver{drivers.Mock{}},
				MaxQueryTime: time.Second, RetryInterval: 20 * time.Millisecond,
			}, servers)
			must.NoError(t, err)
			t.Cleanup(c.Shutdown)
			before := pathtest.Tree(t, base)

			alloc := testAlloc(tc.allocID, structs.JobTypeService, mockTask(tc.task, map[string]any{"run_for": "1h"}))
			servers.setAllocs(alloc)
			waitFor(t, "the allocation to fail", reportedStatus(servers, tc.allocID, structs.AllocClientStatusFailed))
			must.StrContains(t, servers.lastReport(tc.allocID).ClientDescription, "invalid")
			must.Eq(t, before, pathtest.Tree(t, base), must.Sprint("the client created something"))

			// Removing the allocation removes nothing either: "" or ".." must not become
			// the allocation directory's parent.
			servers.setAllocs()
			waitFor(t, "the runner to end", func() bool {
				c.mu.Lock()
				defer c.mu.Unlock()
				r := c.runners[tc.allocID]
				return r == nil || r.isDone()
			})
			must.Eq(t, before, pathtest.Tree(t, base))
			for _, p := range before {
				must.False(t, strings.Contains(p, "escaped") || strings.Contains(p, "tmp"))
			}
		})
	}
}

// A task's log read through the agent is opened inside the allocation directory: a link
// the task left in alloc/logs does not make the agent read a file of the host.
func TestSecurity_ClientTaskLogLinkRefused(t *testing.T) {
	c, _ := testClient(t)
	outside := filepath.Join(t.TempDir(), "secret")
	must.NoError(t, os.WriteFile(outside, []byte("s3cret"), 0o600))
	logs := filepath.Join(c.config.AllocDir, "a1", "alloc", "logs")
	must.NoError(t, os.MkdirAll(logs, 0o755))
	must.NoError(t, os.Symlink(outside, filepath.Join(logs, LogFileName("web", "stdout"))))
	must.NoError(t, os.WriteFile(filepath.Join(logs, LogFileName("api", "stdout")), []byte("hello"), 0o644))

	_, err := c.OpenTaskLogReader("a1", "web", "stdout", 0, false)
	must.ErrorContains(t, err, "is a link or not a regular file")
	must.Eq(t, 400, structs.ErrorCode(err))
	f, err := c.OpenTaskLogReader("a1", "api", "stdout", 0, false)
	must.NoError(t, err)
	must.NoError(t, f.Close())
	for _, bad := range []struct{ alloc, task string }{{"..", "api"}, {"a1", "../../a1/alloc/logs/api"}, {"a1", ".."}} {
		_, err := c.OpenTaskLogReader(bad.alloc, bad.task, "stdout", 0, false)
		must.Error(t, err)
		must.StrContains(t, err.Error(), "invalid")
	}
}
