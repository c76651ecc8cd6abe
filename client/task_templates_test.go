package client

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/client/template"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// varsAPI answers GET /v1/var/nomad/jobs/x with one fixed variable, or 403 once refuse is set.
// A read at the current index waits a little, as a blocking query does.
func varsAPI(t *testing.T, refuse *atomic.Bool) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuse.Load() {
			http.Error(w, "Permission denied", http.StatusForbidden)
			return
		}
		if r.URL.Query().Get("index") == "7" {
			select {
			case <-time.After(200 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("X-Nomad-Index", "7")
		_ = json.NewEncoder(w).Encode(api.Variable{Namespace: "default", Path: "nomad/jobs/x",
			Items: map[string]string{"a": "one"}, CreateIndex: 7, ModifyIndex: 7})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestClient_TemplateRestore: a task whose templates rendered is re-attached after an agent
// restart even when its templates can no longer render, rather than failed and orphaned.
func TestClient_TemplateRestore(t *testing.T) {
	r := newRestartable(t)
	var refuse atomic.Bool
	url := varsAPI(t, &refuse)
	start := func(alloc *structs.Allocation) (*Client, *fakeServers) {
		servers := newFakeServers()
		servers.setAllocs(alloc)
		c, err := New(&Config{
			Name: "test", AllocDir: r.allocDir, StateDir: r.stateDir,
			Drivers:      []drivers.Driver{drivers.RawExec{}},
			MaxQueryTime: time.Second, RetryInterval: 20 * time.Millisecond,
			TemplateAPI: template.NomadAPI{Address: url},
			Logger:      hclog.New(&hclog.LoggerOptions{Output: r.logs, Level: hclog.Info}),
		}, servers)
		must.NoError(t, err)
		t.Cleanup(c.Shutdown)
		return c, servers
	}
	task := countingTask("600")
	task.Templates = []*api.Template{{EmbeddedTmpl: new(`{{ with nomadVar "nomad/jobs/x" }}{{ .a }}{{ end }}`),
		DestPath: new("local/a.txt")}}
	alloc := testAlloc("a1", structs.JobTypeService, task)

	c1, s1 := start(alloc)
	waitFor(t, "running", reportedStatus(s1, "a1", structs.AllocClientStatusRunning))
	b, err := os.ReadFile(filepath.Join(r.allocDir, "a1", "t", "local", "a.txt"))
	must.NoError(t, err)
	must.Eq(t, "one", string(b))
	pid := c1.TaskPID("a1", "t")
	must.Positive(t, pid)
	killGroup(t, pid)
	c1.Shutdown()

	refuse.Store(true)
	c2, s2 := start(alloc)
	waitFor(t, "re-attached", func() bool { return c2.TaskPID("a1", "t") == pid })
	waitFor(t, "reported running", reportedStatus(s2, "a1", structs.AllocClientStatusRunning))
	must.Eq(t, 1, r.starts("a1"))
	must.StrContains(t, r.logs.String(), "templates not rendered again for a restored task")
	must.StrNotContains(t, r.logs.String(), "jwt.a1")
}

// TestClient_TemplateFailsRunningTask: a template that can no longer render once its task
// runs (its identity lost the right to read the variable) kills the task, failed, saying why.
func TestClient_TemplateFailsRunningTask(t *testing.T) {
	var refuse atomic.Bool
	url := varsAPI(t, &refuse)
	logs := &syncBuffer{}
	servers := newFakeServers()
	c, err := New(&Config{
		Name: "test", AllocDir: t.TempDir(),
		Drivers:      []drivers.Driver{drivers.RawExec{}},
		MaxQueryTime: time.Second, RetryInterval: 20 * time.Millisecond,
		TemplateAPI: template.NomadAPI{Address: url},
		Logger:      hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Info}),
	}, servers)
	must.NoError(t, err)
	t.Cleanup(c.Shutdown)
	task := countingTask("600")
	task.Templates = []*api.Template{{EmbeddedTmpl: new(`{{ with nomadVar "nomad/jobs/x" }}{{ .a }}{{ end }}`),
		DestPath: new("local/a.txt")}}
	task.RestartPolicy = &api.RestartPolicy{Attempts: new(0), Mode: new("fail")}
	servers.setAllocs(testAlloc("a1", structs.JobTypeService, task))
	waitFor(t, "running", reportedStatus(servers, "a1", structs.AllocClientStatusRunning))
	pid := c.TaskPID("a1", "t")
	must.Positive(t, pid)
	killGroup(t, pid)

	refuse.Store(true)
	waitFor(t, "failed", reportedStatus(servers, "a1", structs.AllocClientStatusFailed))
	waitFor(t, "the process to go", func() bool { return processGone(pid) })
	report := servers.lastReport("a1")
	must.True(t, report.TaskStates["t"].Failed)
	var msgs []string
	for _, e := range report.TaskStates["t"].Events {
		msgs = append(msgs, e.Message)
	}
	all := strings.Join(msgs, "\n")
	must.StrContains(t, all, "template failed")
	must.StrContains(t, all, "403")
	must.StrNotContains(t, all, "jwt.a1")
	must.StrNotContains(t, logs.String(), "jwt.a1")
}
