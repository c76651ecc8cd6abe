package agent

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// eventually polls cond every 20ms until it holds, failing the test with what after timeout.
// cond returns a description of what it saw, shown when the wait fails.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, seen := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last seen: %s", timeout, what, seen)
		}
		<-tick.C
	}
}

// allocsIn waits until the job's allocations, by client status, are exactly want (e.g.
// {"running": 2, "complete": 1}) and returns them.
func allocsIn(t *testing.T, c *api.Client, jobID string, want map[string]int) []*api.AllocationListStub {
	t.Helper()
	var allocs []*api.AllocationListStub
	eventually(t, 20*time.Second, fmt.Sprintf("allocations of %s to be %v", jobID, want), func() (bool, string) {
		var err error
		allocs, _, err = c.Jobs().Allocations(jobID, false, nil)
		if err != nil {
			return false, err.Error()
		}
		got := map[string]int{}
		var why []string
		for _, a := range allocs {
			got[a.ClientStatus]++
			if a.ClientStatus == "failed" {
				why = append(why, failureEvents(a))
			}
		}
		return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprint(got, " ", why)
	})
	return allocs
}

// failureEvents names a failed allocation's task events, so that a test that did not expect
// the failure says why it happened.
func failureEvents(a *api.AllocationListStub) string {
	out := a.ID + ":"
	for task, ts := range a.TaskStates {
		for _, e := range ts.Events {
			out += fmt.Sprintf(" %s[%s: %s %s exit=%d]", task, e.Type, e.DisplayMessage, e.DriverError, e.ExitCode)
		}
	}
	return out
}

func jobStatus(t *testing.T, c *api.Client, jobID, want string) *api.Job {
	t.Helper()
	var job *api.Job
	eventually(t, 10*time.Second, fmt.Sprintf("job %s to be %s", jobID, want), func() (bool, string) {
		var err error
		job, _, err = c.Jobs().Info(jobID, nil)
		if err != nil {
			return false, err.Error()
		}
		return *job.Status == want, *job.Status
	})
	return job
}

// processGone waits until no process has pid.
func processGone(t *testing.T, pid int) {
	t.Helper()
	must.Positive(t, pid)
	eventually(t, 10*time.Second, fmt.Sprintf("process %d to be gone", pid), func() (bool, string) {
		err := syscall.Kill(pid, 0)
		return errors.Is(err, syscall.ESRCH), fmt.Sprint(err)
	})
}

func running(t *testing.T, pid int) {
	t.Helper()
	must.Positive(t, pid)
	must.NoError(t, syscall.Kill(pid, 0), must.Sprintf("process %d is not running", pid))
}

// taskPIDs are the process IDs of the "sleep" task of each allocation.
func taskPIDs(t *testing.T, ta *TestAgent, allocs []*api.AllocationListStub) []int {
	t.Helper()
	var pids []int
	for _, a := range allocs {
		var pid int
		eventually(t, 5*time.Second, "the task's process", func() (bool, string) {
			pid = ta.Agent.Client().TaskPID(a.ID, "sleep")
			return pid > 0, "no pid"
		})
		pids = append(pids, pid)
	}
	return pids
}

// TestClient_ServiceJobLifecycle runs a raw_exec service job on the agent's own client through
// its whole life, checking allocations, the job's status and the processes at each step.
func TestClient_ServiceJobLifecycle(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	job := testJob("web")
	job.TaskGroups[0].Count = new(2)

	resp, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	allocs := allocsIn(t, c, "web", map[string]int{"running": 2})
	jobStatus(t, c, "web", "running")
	pids := taskPIDs(t, ta, allocs)
	for _, pid := range pids {
		running(t, pid)
	}

	t.Run("reads", func(t *testing.T) {
		evalAllocs, _, err := c.Evaluations().Allocations(resp.EvalID, nil)
		must.NoError(t, err)
		must.Len(t, 2, evalAllocs)
		eval, _, err := c.Evaluations().Info(resp.EvalID, nil)
		must.NoError(t, err)
		must.Eq(t, structs.EvalStatusComplete, eval.Status)
		must.Eq(t, map[string]int{"web": 0}, eval.QueuedAllocations)

		alloc, _, err := c.Allocations().Info(allocs[0].ID, nil)
		must.NoError(t, err)
		must.Eq(t, "web", *alloc.Job.ID)
		must.StrHasPrefix(t, "web.web[", alloc.Name)
		must.Eq(t, structs.TaskStateRunning, alloc.TaskStates["sleep"].State)
		must.False(t, alloc.TaskStates["sleep"].StartedAt.IsZero())
		must.Eq(t, ta.Agent.Client().NodeID(), alloc.NodeID)

		list, _, err := c.Allocations().List(nil)
		must.NoError(t, err)
		must.Len(t, 2, list)

		nodes, _, err := c.Nodes().List(nil)
		must.NoError(t, err)
		must.Len(t, 1, nodes)
		must.Eq(t, "ready", nodes[0].Status)
		must.True(t, nodes[0].Drivers["raw_exec"].Healthy)
		nodeAllocs, _, err := c.Nodes().Allocations(nodes[0].ID, nil)
		must.NoError(t, err)
		must.Len(t, 2, nodeAllocs)
		raw := doHTTP(t, ta, "GET", "/v1/node/"+nodes[0].ID, nil, nil)
		must.Eq(t, 200, raw.status)
		must.StrContains(t, raw.body, `"SecretID":""`, must.Sprint("the node's secret never leaves the servers"))

		summary, _, err := c.Jobs().Summary("web", nil)
		must.NoError(t, err)
		must.Eq(t, 2, summary.Summary["web"].Running)
	})

	// Scale to zero: the allocations stop and complete, the processes go, the job is dead but
	// not stopped, and a forced GC keeps it.
	_, _, err = c.Jobs().Scale("web", "web", new(0), "to zero", false, nil, nil)
	must.NoError(t, err)
	stopped := allocsIn(t, c, "web", map[string]int{"complete": 2})
	for _, a := range stopped {
		must.Eq(t, structs.AllocDesiredStatusStop, a.DesiredStatus)
	}
	for _, pid := range pids {
		processGone(t, pid)
	}
	dead := jobStatus(t, c, "web", "dead")
	must.False(t, *dead.Stop)
	err = c.System().GarbageCollect()
	must.NoError(t, err)
	_, _, err = c.Jobs().Info("web", nil)
	must.NoError(t, err, must.Sprint("a job scaled to zero survives the GC"))
	// Its finished allocations do not (the allocation GC), but its summary keeps them.
	allocsIn(t, c, "web", map[string]int{})
	summary, _, err := c.Jobs().Summary("web", nil)
	must.NoError(t, err)
	must.Eq(t, 2, summary.Summary["web"].Complete)

	// Back to one.
	_, _, err = c.Jobs().Scale("web", "web", new(1), "back", false, nil, nil)
	must.NoError(t, err)
	allocsIn(t, c, "web", map[string]int{"running": 1})
	jobStatus(t, c, "web", "running")

	// Stop: complete, dead, Stop true.
	_, _, err = c.Jobs().Deregister("web", false, nil)
	must.NoError(t, err)
	allocsIn(t, c, "web", map[string]int{"complete": 1})
	stoppedJob := jobStatus(t, c, "web", "dead")
	must.True(t, *stoppedJob.Stop)

	// Run again, then purge: the allocations leave state and the process is killed.
	_, _, err = c.Jobs().Register(testJob("web"), nil)
	must.NoError(t, err)
	again := allocsIn(t, c, "web", map[string]int{"running": 1, "complete": 1})
	var live []*api.AllocationListStub
	for _, a := range again {
		if a.ClientStatus == "running" {
			live = append(live, a)
		}
	}
	pid := taskPIDs(t, ta, live)[0]
	running(t, pid)
	_, _, err = c.Jobs().DeregisterOpts("web", &api.DeregisterOptions{Purge: true}, nil)
	must.NoError(t, err)
	left, err := ta.Server().State().AllocsByJob(nil, "default", "web")
	must.NoError(t, err)
	must.SliceEmpty(t, left)
	processGone(t, pid)
	list, _, err := c.Allocations().List(nil)
	must.NoError(t, err)
	must.SliceEmpty(t, list)
}

// TestClient_BatchJobs: a batch job that exits 0 completes and leaves its job dead; one that
// fails with no restarts left fails.
func TestClient_BatchJobs(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")

	ok := api.NewBatchJob("ok", "ok", "global", 50)
	ok.AddTaskGroup(api.NewTaskGroup("work", 1).AddTask(
		api.NewTask("sh", "raw_exec").SetConfig("command", "/bin/sh").SetConfig("args", []string{"-c", "echo hello from $NOMAD_TASK_NAME"})))
	_, _, err := c.Jobs().Register(ok, nil)
	must.NoError(t, err)
	allocs := allocsIn(t, c, "ok", map[string]int{"complete": 1})
	jobStatus(t, c, "ok", "dead")
	alloc, _, err := c.Allocations().Info(allocs[0].ID, nil)
	must.NoError(t, err)
	state := alloc.TaskStates["sh"]
	must.Eq(t, structs.TaskStateDead, state.State)
	must.False(t, state.Failed)
	var types []string
	for _, e := range state.Events {
		types = append(types, e.Type)
	}
	must.Eq(t, []string{"Received", "Task Setup", "Started", "Terminated"}, types)

	fail := api.NewBatchJob("fail", "fail", "global", 50)
	fail.AddTaskGroup(api.NewTaskGroup("work", 1).AddTask(api.NewTask("t", "mock_driver").SetConfig("exit_code", 3)))
	fail.TaskGroups[0].RestartPolicy = &api.RestartPolicy{Attempts: new(1), Delay: new(10 * time.Millisecond)}
	_, _, err = c.Jobs().Register(fail, nil)
	must.NoError(t, err)
	failed := allocsIn(t, c, "fail", map[string]int{"failed": 1})
	info, _, err := c.Allocations().Info(failed[0].ID, nil)
	must.NoError(t, err)
	must.True(t, info.TaskStates["t"].Failed)
	must.Eq(t, uint64(1), info.TaskStates["t"].Restarts)
	jobStatus(t, c, "fail", "dead")
}

// TestClient_GCWaitsForAllocations: a stopped job is collected only once its client has
// finished with its allocations.
func TestClient_GCWaitsForAllocations(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	job := testJob("slow")
	// The task ignores SIGTERM: the stop takes the whole kill timeout.
	task := job.TaskGroups[0].Tasks[0]
	task.Config = map[string]any{"command": "/bin/sh", "args": []string{"-c", "trap '' TERM; sleep 600 & wait; sleep 600"}}
	task.KillTimeout = new(2 * time.Second)
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	allocs := allocsIn(t, c, "slow", map[string]int{"running": 1})
	pid := taskPIDs(t, ta, allocs)[0]

	_, _, err = c.Jobs().Deregister("slow", false, nil)
	must.NoError(t, err)
	eventually(t, 5*time.Second, "the stop to reach the allocation", func() (bool, string) {
		a, _, err := c.Allocations().Info(allocs[0].ID, nil)
		if err != nil {
			return false, err.Error()
		}
		return a.DesiredStatus == "stop" && a.ClientStatus == "running", a.DesiredStatus + "/" + a.ClientStatus
	})
	err = c.System().GarbageCollect()
	must.NoError(t, err)
	kept, _, err := c.Jobs().Info("slow", nil)
	must.NoError(t, err, must.Sprint("the GC keeps a stopped job whose allocation still runs"))
	must.Eq(t, "running", *kept.Status)

	allocsIn(t, c, "slow", map[string]int{"complete": 1})
	processGone(t, pid)
	err = c.System().GarbageCollect()
	must.NoError(t, err)
	_, _, err = c.Jobs().Info("slow", nil)
	code, _ := responseError(t, err)
	must.Eq(t, 404, code)
	records, err := ta.Server().State().PurgeRecords(nil)
	must.NoError(t, err)
	must.Len(t, 1, records)
	must.True(t, strings.Contains(records[0].JobID, "slow"))
}

// TestClient_NoNodeForDriver: a job whose driver no node has stays pending with its
// allocations queued, and is placed once it changes to a driver the node has.
func TestClient_NoNodeForDriver(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	job := testJob("web")
	job.TaskGroups[0].Tasks[0].Driver = "qemu"
	resp, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	eventually(t, 10*time.Second, "the evaluation to complete with queued allocations", func() (bool, string) {
		eval, _, err := c.Evaluations().Info(resp.EvalID, nil)
		if err != nil {
			return false, err.Error()
		}
		return eval.Status == "complete" && eval.BlockedEval != "", eval.Status
	})
	eval, _, err := c.Evaluations().Info(resp.EvalID, nil)
	must.NoError(t, err)
	must.Eq(t, map[string]int{"web": 1}, eval.QueuedAllocations)
	must.Eq(t, 1, eval.FailedTGAllocs["web"].ConstraintFiltered["missing drivers"])
	blocked, _, err := c.Evaluations().Info(eval.BlockedEval, nil)
	must.NoError(t, err)
	must.Eq(t, "blocked", blocked.Status)
	jobStatus(t, c, "web", "pending")
	summary, _, err := c.Jobs().Summary("web", nil)
	must.NoError(t, err)
	must.Eq(t, 1, summary.Summary["web"].Queued)

	_, _, err = c.Jobs().Register(testJob("web"), nil)
	must.NoError(t, err)
	allocsIn(t, c, "web", map[string]int{"running": 1})
	jobStatus(t, c, "web", "running")
	old, _, err := c.Evaluations().Info(eval.BlockedEval, nil)
	must.NoError(t, err)
	must.Eq(t, "canceled", old.Status, must.Sprint("the newer evaluation supersedes the blocked one"))
}
