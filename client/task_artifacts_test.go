package client

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestClient_ArtifactBeforeStart: the task starts with its artifact in place (its command
// reads it), and the download is a task event before the start.
func TestClient_ArtifactBeforeStart(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("from the artifact\n"))
	}))
	t.Cleanup(srv.Close)
	_, s := testClient(t)
	task := &api.Task{Name: "t", Driver: "raw_exec", Config: map[string]any{
		"command": "/bin/sh", "args": []any{"-c", `cat "$NOMAD_TASK_DIR/greeting.txt"`}},
		Artifacts: []*api.TaskArtifact{{GetterSource: new(srv.URL + "/greeting.txt")}}}
	s.setAllocs(testAlloc("a1", structs.JobTypeBatch, task))
	waitFor(t, "complete", reportedStatus(s, "a1", structs.AllocClientStatusComplete))
	ts := s.lastReport("a1").TaskStates["t"]
	must.False(t, ts.Failed)
	must.True(t, hasEvent(ts, taskEventDownloadingArtifacts))
	var download, started int
	for i, e := range ts.Events {
		switch e.Type {
		case taskEventDownloadingArtifacts:
			download = i
		case structs.TaskEventStarted:
			started = i
		}
	}
	must.Less(t, started, download)
}

// TestClient_ArtifactFailureFollowsTheRestartPolicy: a download that fails is retried as
// the restart policy allows, with upstream's event naming the error, and then fails the task
// without ever starting it.
func TestClient_ArtifactFailureFollowsTheRestartPolicy(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			calls.Add(1)
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	_, s := testClient(t)
	task := &api.Task{Name: "t", Driver: "raw_exec", Config: map[string]any{"command": "/bin/true"},
		Artifacts: []*api.TaskArtifact{{GetterSource: new(srv.URL + "/missing.tgz")}}}
	alloc := testAlloc("a1", structs.JobTypeBatch, task)
	alloc.Job.TaskGroups[0].RestartPolicy = &api.RestartPolicy{Attempts: new(2), Delay: new(10 * time.Millisecond),
		Interval: new(time.Hour), Mode: new(api.RestartPolicyModeFail)}
	s.setAllocs(alloc)
	waitFor(t, "failed", reportedStatus(s, "a1", structs.AllocClientStatusFailed))
	ts := s.lastReport("a1").TaskStates["t"]
	must.True(t, ts.Failed)
	must.False(t, hasEvent(ts, structs.TaskEventStarted))
	var failures int
	for _, e := range ts.Events {
		if e.Type == taskEventArtifactFailed {
			failures++
			must.StrContains(t, e.DownloadError, "404")
		}
	}
	must.Eq(t, 3, failures, must.Sprint("the first try and the two the policy allows"))
	must.Eq(t, int32(3), calls.Load())
	must.Eq(t, uint64(2), ts.Restarts)
}
