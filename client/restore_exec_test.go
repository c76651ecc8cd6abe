package client

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/client/drivers/execdriver"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// requireExecDriver skips a test of the exec driver off Linux or without root, but fails it
// in CI, where the machine is meant to run it.
func requireExecDriver(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "linux" && os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("the exec driver needs Linux and root in CI (GOOS %s, euid %d)", runtime.GOOS, os.Geteuid())
	}
	t.Skip("the exec driver needs Linux and root")
}

// gatedExecTask is an exec task that counts its starts and exits with code once its gate
// file (local/go in its task directory) appears.
func gatedExecTask(code string) *api.Task {
	return &api.Task{Name: "t", Driver: "exec", Config: map[string]any{"command": "/bin/sh", "args": []any{"-c",
		`echo started >> /local/starts; while [ ! -e /local/go ]; do sleep 0.05; done; exit ` + code}}}
}

// TestClient_ReattachesExec: the agent goes away without stopping its exec tasks (as a
// kill -9 does); the next client on the same state directory finds a running one by its
// shim, reports it running and never starts it again, and stops it when the servers ask; one
// that exited while no agent ran is reported with the exit code its shim recorded.
func TestClient_ReattachesExec(t *testing.T) {
	requireExecDriver(t)
	r := newRestartable(t)
	running := testAlloc("a1", structs.JobTypeService, gatedExecTask("0"))
	exited := testAlloc("a2", structs.JobTypeService, gatedExecTask("3"))
	driver := func() []drivers.Driver { return []drivers.Driver{execdriver.New(execdriver.Options{})} }

	c1, s1 := r.startWith(driver(), running, exited)
	for _, id := range []string{"a1", "a2"} {
		waitFor(t, "running", reportedStatus(s1, id, structs.AllocClientStatusRunning))
		waitFor(t, "the task", func() bool { return r.starts(id) == 1 })
	}
	pid, exitedPID := c1.TaskPID("a1", "t"), c1.TaskPID("a2", "t")
	must.Positive(t, pid)
	must.Positive(t, exitedPID)
	c1.Shutdown()
	must.False(t, processGone(pid), must.Sprint("the task outlives the agent"))
	// a2 ends while no agent runs.
	must.NoError(t, os.WriteFile(filepath.Join(r.allocDir, "a2", "t", "local", "go"), nil, 0o644))
	waitFor(t, "a2 to end", func() bool { return processGone(exitedPID) })

	c2, s2 := r.startWith(driver(), running, exited)
	waitFor(t, "re-attached", func() bool { return c2.TaskPID("a1", "t") == pid })
	waitFor(t, "reported running", reportedStatus(s2, "a1", structs.AllocClientStatusRunning))
	must.StrContains(t, r.logs.String(), "re-attached to task")

	waitFor(t, "a2 failed", reportedStatus(s2, "a2", structs.AllocClientStatusFailed))
	var terminated *structs.TaskEvent
	for _, e := range s2.lastReport("a2").TaskStates["t"].Events {
		if e.Type == structs.TaskEventTerminated {
			terminated = e
		}
	}
	must.NotNil(t, terminated)
	must.Eq(t, 3, terminated.ExitCode, must.Sprint("the exit code the shim recorded while no agent ran"))

	stopped := *running
	stopped.DesiredStatus, stopped.AllocModifyIndex = structs.AllocDesiredStatusStop, 2
	s2.setAllocs(&stopped, exited)
	waitFor(t, "complete", reportedStatus(s2, "a1", structs.AllocClientStatusComplete))
	waitFor(t, "the process to go", func() bool { return processGone(pid) })
	must.Eq(t, structs.TaskEventKilled, lastEvent(s2.lastReport("a1"), "t").Type)
	must.Eq(t, 1, r.starts("a1"), must.Sprint("started once"))
	must.Eq(t, 1, r.starts("a2"), must.Sprint("started once"))
}
