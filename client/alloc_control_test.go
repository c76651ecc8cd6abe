package client

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// trapTask writes "hup" to <task dir>/signals on each SIGHUP and counts its starts.
func trapTask(name string) *api.Task {
	return &api.Task{Name: name, Driver: "raw_exec", Config: map[string]any{
		"command": "/bin/sh", "args": []any{"-c", `echo started >> "$NOMAD_TASK_DIR/starts"
trap 'echo hup >> "$NOMAD_TASK_DIR/signals"' HUP
while true; do sleep 0.05; done`},
	}}
}

func taskFile(c *Client, alloc, task, name string) string {
	raw, _ := os.ReadFile(filepath.Join(c.config.AllocDir, alloc, task, "local", name))
	return string(raw)
}

func TestClient_SignalTask(t *testing.T) {
	c, s := testClientNoState(t)
	s.setAllocs(testAlloc("a1", structs.JobTypeService, trapTask("t"), mockTask("m", map[string]any{"run_for": "1h"})))
	waitFor(t, "running", reportedStatus(s, "a1", structs.AllocClientStatusRunning))
	waitFor(t, "the trap set", func() bool { return strings.Contains(taskFile(c, "a1", "t", "starts"), "started") })

	must.NoError(t, c.SignalTask("a1", "t", "SIGHUP"))
	waitFor(t, "the signal", func() bool { return strings.Count(taskFile(c, "a1", "t", "signals"), "hup") == 1 })
	waitFor(t, "the Signaling event", func() bool {
		r := s.lastReport("a1")
		return r != nil && lastEvent(r, "t").Type == structs.TaskEventSignaling && lastEvent(r, "t").TaskSignal == "SIGHUP"
	})

	cases := []struct {
		name     string
		alloc    string
		task     string
		signal   string
		wantCode int
		wantErr  string
	}{
		{name: "unknown signal", alloc: "a1", task: "t", signal: "SIGNOPE", wantCode: http.StatusBadRequest, wantErr: "invalid Signal"},
		{name: "no signal", alloc: "a1", task: "t", signal: "", wantCode: http.StatusBadRequest, wantErr: "invalid Signal"},
		{name: "unknown alloc", alloc: "nope", task: "t", signal: "SIGHUP", wantCode: http.StatusNotFound, wantErr: "alloc not found"},
		{name: "unknown task", alloc: "a1", task: "x", signal: "SIGHUP", wantCode: http.StatusNotFound, wantErr: `task "x" not found`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := c.SignalTask(tc.alloc, tc.task, tc.signal)
			must.ErrorContains(t, err, tc.wantErr)
			must.Eq(t, tc.wantCode, structs.ErrorCode(err))
		})
	}
	// Every running task when none is named.
	must.NoError(t, c.SignalTask("a1", "", "HUP"))
	waitFor(t, "the second signal", func() bool { return strings.Count(taskFile(c, "a1", "t", "signals"), "hup") == 2 })
}

func TestClient_RestartTask(t *testing.T) {
	c, s := testClientNoState(t)
	s.setAllocs(testAlloc("a1", structs.JobTypeService, trapTask("t")))
	waitFor(t, "running", reportedStatus(s, "a1", structs.AllocClientStatusRunning))
	pid := c.TaskPID("a1", "t")
	must.Positive(t, pid)
	// Running is reported once the shim started: a restart before the task wrote its first
	// start would leave one start in the file, not two.
	waitFor(t, "the first start", func() bool { return strings.Count(taskFile(c, "a1", "t", "starts"), "started") == 1 })

	must.NoError(t, c.RestartTask("a1", "t", false))
	waitFor(t, "a new process", func() bool { p := c.TaskPID("a1", "t"); return p != 0 && p != pid })
	waitFor(t, "processGone", func() bool { return processGone(pid) })
	waitFor(t, "running again", func() bool {
		r := s.lastReport("a1")
		return r != nil && r.ClientStatus == structs.AllocClientStatusRunning && r.TaskStates["t"].Restarts == 1 &&
			r.TaskStates["t"].State == structs.TaskStateRunning
	})
	// Running is reported once the task's shim started; the task itself follows.
	waitFor(t, "the second start", func() bool { return strings.Count(taskFile(c, "a1", "t", "starts"), "started") == 2 })
	var types []string
	for _, e := range s.lastReport("a1").TaskStates["t"].Events {
		types = append(types, e.Type)
	}
	must.SliceContains(t, types, structs.TaskEventRestartSignal)

	must.ErrorContains(t, c.RestartTask("a1", "t", true), "exclusive")
	must.NoError(t, c.RestartTask("a1", "", true))
	waitFor(t, "the second restart", func() bool {
		r := s.lastReport("a1")
		return r != nil && r.TaskStates["t"].Restarts == 2 && r.TaskStates["t"].State == structs.TaskStateRunning
	})
}

// TestClient_AllocStats: a task's usage counts the processes of its group, not its raw_exec
// shim; an unknown allocation is a 404.
func TestClient_AllocStats(t *testing.T) {
	c, s := testClientNoState(t)
	s.setAllocs(testAlloc("a1", structs.JobTypeService, trapTask("t")))
	waitFor(t, "running", reportedStatus(s, "a1", structs.AllocClientStatusRunning))
	waitFor(t, "the task", func() bool { return strings.Contains(taskFile(c, "a1", "t", "starts"), "started") })
	shim := c.TaskPID("a1", "t")

	usage, err := c.AllocStats("a1")
	must.NoError(t, err)
	tu := usage.Tasks["t"]
	must.NotNil(t, tu)
	must.MapNotEmpty(t, tu.Pids)
	must.MapNotContainsKey(t, tu.Pids, strconv.Itoa(shim))
	must.Positive(t, tu.ResourceUsage.MemoryStats.RSS)
	must.Eq(t, tu.ResourceUsage.MemoryStats.RSS, usage.ResourceUsage.MemoryStats.RSS)

	_, err = c.AllocStats("nope")
	must.Eq(t, http.StatusNotFound, structs.ErrorCode(err))

	host, err := c.HostStats()
	must.NoError(t, err)
	must.Positive(t, host.Memory.Total)
	must.SliceNotEmpty(t, host.CPU)
}
