package client

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func withHook(t *api.Task, hook string, sidecar bool) *api.Task {
	t.Lifecycle = &api.TaskLifecycle{Hook: hook, Sidecar: sidecar}
	return t
}

func hasEvent(ts *structs.TaskState, typ string) bool {
	for _, e := range ts.Events {
		if e.Type == typ {
			return true
		}
	}
	return false
}

// A service job's prestart task runs once, to completion, before the main task starts; a
// poststart sidecar starts once the main task runs.
func TestLifecycle_PrestartThenMainThenPoststart(t *testing.T) {
	_, s := testClient(t)
	alloc := testAlloc("a1", structs.JobTypeService,
		withHook(mockTask("init", map[string]any{"run_for": "300ms"}), api.TaskLifecycleHookPrestart, false),
		mockTask("main", map[string]any{"run_for": "1h"}),
		withHook(mockTask("side", map[string]any{"run_for": "1h"}), api.TaskLifecycleHookPoststart, true),
	)
	s.setAllocs(alloc)
	waitFor(t, "all three in their final states", func() bool {
		r := s.lastReport("a1")
		return r != nil && r.TaskStates["init"] != nil && r.TaskStates["init"].State == structs.TaskStateDead &&
			r.TaskStates["main"] != nil && r.TaskStates["main"].State == structs.TaskStateRunning &&
			r.TaskStates["side"] != nil && r.TaskStates["side"].State == structs.TaskStateRunning
	})
	r := s.lastReport("a1")
	init, main, side := r.TaskStates["init"], r.TaskStates["main"], r.TaskStates["side"]
	must.False(t, init.Failed)
	must.Zero(t, init.Restarts)
	must.False(t, hasEvent(init, structs.TaskEventRestarting), must.Sprint("a prestart task that succeeded is not run again"))
	must.False(t, main.StartedAt.Before(init.FinishedAt), must.Sprintf("main started %v, before init finished %v", main.StartedAt, init.FinishedAt))
	must.False(t, side.StartedAt.Before(main.StartedAt))
	must.Eq(t, structs.AllocClientStatusRunning, r.ClientStatus)
	// Each task that waited said what for, once, between Received and its start.
	waits := func(ts *structs.TaskState) []string {
		var out []string
		for _, e := range ts.Events {
			out = append(out, e.Type+": "+e.Message)
		}
		return out
	}
	must.Eq(t, []string{"Received: Task received by client", "Task hook message: Waiting for prestart tasks to complete: init"}, waits(main)[:2])
	must.Eq(t, "Task Setup", main.Events[2].Type)
	must.Eq(t, []string{"Received: Task received by client", "Task hook message: Waiting for main tasks to run: main"}, waits(side)[:2])
	must.Eq(t, "Task Setup", side.Events[2].Type)
	must.Eq(t, "Received", init.Events[0].Type)
	must.False(t, hasEvent(init, structs.TaskEventHookMessage), must.Sprint("a task that starts at once waits for nothing"))
}

// A batch job whose leader ends: the others are stopped with upstream's event, then the
// poststop task runs, and the allocation completes.
func TestLifecycle_LeaderEndsTheOthersThenPoststopRuns(t *testing.T) {
	_, s := testClient(t)
	leader := mockTask("leader", map[string]any{"run_for": "300ms"})
	leader.Leader = true
	alloc := testAlloc("a1", structs.JobTypeBatch,
		leader,
		mockTask("helper", map[string]any{"run_for": "1h"}),
		withHook(mockTask("cleanup", map[string]any{"run_for": "50ms"}), api.TaskLifecycleHookPoststop, false),
	)
	s.setAllocs(alloc)
	waitFor(t, "complete", reportedStatus(s, "a1", structs.AllocClientStatusComplete))
	r := s.lastReport("a1")
	helper, cleanup := r.TaskStates["helper"], r.TaskStates["cleanup"]
	must.True(t, hasEvent(helper, leaderDeadEvent))
	must.Eq(t, structs.TaskStateDead, cleanup.State)
	must.False(t, cleanup.Failed)
	must.False(t, cleanup.StartedAt.Before(helper.FinishedAt), must.Sprint("poststop starts after the others ended"))
	must.False(t, cleanup.StartedAt.Before(r.TaskStates["leader"].FinishedAt))
}

// A prestart task that fails for good fails the allocation: the main task never starts, the
// poststop task still runs.
func TestLifecycle_FailedPrestartSkipsMainAndRunsPoststop(t *testing.T) {
	_, s := testClient(t)
	alloc := testAlloc("a1", structs.JobTypeService,
		withHook(mockTask("init", map[string]any{"run_for": "10ms", "exit_code": 3}), api.TaskLifecycleHookPrestart, false),
		mockTask("main", map[string]any{"run_for": "1h"}),
		withHook(mockTask("cleanup", map[string]any{"run_for": "10ms"}), api.TaskLifecycleHookPoststop, false),
	)
	s.setAllocs(alloc)
	waitFor(t, "failed with every task dead", func() bool {
		r := s.lastReport("a1")
		if r == nil || r.ClientStatus != structs.AllocClientStatusFailed {
			return false
		}
		for _, name := range []string{"init", "main", "cleanup"} {
			if ts := r.TaskStates[name]; ts == nil || ts.State != structs.TaskStateDead {
				return false
			}
		}
		return true
	})
	r := s.lastReport("a1")
	must.True(t, r.TaskStates["init"].Failed)
	must.False(t, hasEvent(r.TaskStates["main"], structs.TaskEventStarted), must.Sprint("main never started"))
	must.True(t, hasEvent(r.TaskStates["cleanup"], structs.TaskEventStarted), must.Sprint("poststop ran"))
}

// Stopped by the servers while its prestart task runs: the main task never starts, the
// poststop task runs, the allocation completes. Removed instead: the poststop task does not
// run.
func TestLifecycle_StopRunsPoststopRemovalDoesNot(t *testing.T) {
	_, s := testClient(t)
	tasks := func() []*api.Task {
		return []*api.Task{
			withHook(mockTask("init", map[string]any{"run_for": "1h"}), api.TaskLifecycleHookPrestart, false),
			mockTask("main", map[string]any{"run_for": "1h"}),
			withHook(mockTask("cleanup", map[string]any{"run_for": "10ms"}), api.TaskLifecycleHookPoststop, false),
		}
	}
	a1 := testAlloc("a1", structs.JobTypeService, tasks()...)
	s.setAllocs(a1)
	waitFor(t, "init running", func() bool {
		r := s.lastReport("a1")
		return r != nil && r.TaskStates["init"] != nil && r.TaskStates["init"].State == structs.TaskStateRunning
	})
	stopped := *a1
	stopped.DesiredStatus, stopped.AllocModifyIndex = structs.AllocDesiredStatusStop, 2
	s.setAllocs(&stopped)
	waitFor(t, "complete", reportedStatus(s, "a1", structs.AllocClientStatusComplete))
	r := s.lastReport("a1")
	must.False(t, hasEvent(r.TaskStates["main"], structs.TaskEventStarted))
	must.True(t, hasEvent(r.TaskStates["cleanup"], structs.TaskEventStarted))
}

// A stop by the servers waits out the group's and the task's shutdown_delay before the kill
// (with upstream's event); a stop that asks for no delay does not wait.
func TestShutdownDelay_WaitsOnStopUnlessAskedNot(t *testing.T) {
	_, s := testClient(t)
	mk := func(id string) *structs.Allocation {
		task := mockTask("t", map[string]any{"run_for": "1h"})
		task.ShutdownDelay = 300 * time.Millisecond
		a := testAlloc(id, structs.JobTypeService, task)
		a.Job.TaskGroups[0].ShutdownDelay = new(200 * time.Millisecond)
		return a
	}
	delayed, immediate := mk("a1"), mk("a2")
	s.setAllocs(delayed, immediate)
	waitFor(t, "both running", func() bool {
		return reportedStatus(s, "a1", structs.AllocClientStatusRunning)() && reportedStatus(s, "a2", structs.AllocClientStatusRunning)()
	})
	stop1, stop2 := *delayed, *immediate
	stop1.DesiredStatus, stop1.AllocModifyIndex = structs.AllocDesiredStatusStop, 2
	stop2.DesiredStatus, stop2.AllocModifyIndex = structs.AllocDesiredStatusStop, 2
	stop2.DesiredTransition.NoShutdownDelay = new(true)
	s.setAllocs(&stop1, &stop2)
	waitFor(t, "both complete", func() bool {
		return reportedStatus(s, "a1", structs.AllocClientStatusComplete)() && reportedStatus(s, "a2", structs.AllocClientStatusComplete)()
	})

	ts := s.lastReport("a1").TaskStates["t"]
	var waited, killing *structs.TaskEvent
	for _, e := range ts.Events {
		switch e.Type {
		case structs.TaskEventWaitingShutdownDelay:
			waited = e
		case structs.TaskEventKilling:
			killing = e
		}
	}
	must.NotNil(t, waited)
	must.StrContains(t, waited.Message, "500ms")
	must.NotNil(t, killing)
	must.GreaterEq(t, int64(500*time.Millisecond), killing.Time-waited.Time, must.Sprint("the kill comes after the delay"))
	must.False(t, hasEvent(s.lastReport("a2").TaskStates["t"], structs.TaskEventWaitingShutdownDelay))
}

// A sticky disk moves from the allocation a destructive update replaced to its replacement
// on the same node, once the previous one's tasks have ended and before the new one starts.
func TestStickyDisk_ReplacementTakesOverAllocData(t *testing.T) {
	c, s := testClient(t)
	mk := func(id string) *structs.Allocation {
		a := testAlloc(id, structs.JobTypeService, mockTask("t", map[string]any{"run_for": "1h"}))
		a.Job.TaskGroups[0].EphemeralDisk = &api.EphemeralDisk{Sticky: new(true)}
		return a
	}
	a1 := mk("a1")
	s.setAllocs(a1)
	waitFor(t, "a1 running", reportedStatus(s, "a1", structs.AllocClientStatusRunning))
	kept := filepath.Join(c.config.AllocDir, "a1", "alloc", "data", "state.db")
	must.NoError(t, os.WriteFile(kept, []byte("kept"), 0o644))
	must.NoError(t, os.WriteFile(filepath.Join(c.config.AllocDir, "a1", "t", "local", "cache"), []byte("local"), 0o644))

	stopped := *a1
	stopped.DesiredStatus, stopped.AllocModifyIndex = structs.AllocDesiredStatusStop, 2
	a2 := mk("a2")
	a2.PreviousAllocation = "a1"
	s.setAllocs(&stopped, a2)
	waitFor(t, "a2 running", reportedStatus(s, "a2", structs.AllocClientStatusRunning))

	got, err := os.ReadFile(filepath.Join(c.config.AllocDir, "a2", "alloc", "data", "state.db"))
	must.NoError(t, err)
	must.Eq(t, "kept", string(got))
	got, err = os.ReadFile(filepath.Join(c.config.AllocDir, "a2", "t", "local", "cache"))
	must.NoError(t, err)
	must.Eq(t, "local", string(got))
	_, err = os.Stat(kept)
	must.True(t, os.IsNotExist(err), must.Sprint("the data moved, it was not copied"))
}

// A prestart task runs once per allocation even when the restart policy would restart a
// service's task that exits: it is restarted only when it fails, and then as the policy says.
func TestLifecycle_PrestartRestartedOnlyOnFailure(t *testing.T) {
	_, s := testClient(t)
	policy := &api.RestartPolicy{Attempts: new(2), Interval: new(time.Minute), Delay: new(50 * time.Millisecond), Mode: new("fail")}
	ok := testAlloc("a1", structs.JobTypeService,
		withHook(mockTask("init", map[string]any{"run_for": "10ms"}), api.TaskLifecycleHookPrestart, false),
		mockTask("main", map[string]any{"run_for": "1h"}))
	ok.Job.TaskGroups[0].RestartPolicy = policy
	failing := testAlloc("a2", structs.JobTypeService,
		withHook(mockTask("init", map[string]any{"run_for": "10ms", "exit_code": 3}), api.TaskLifecycleHookPrestart, false),
		mockTask("main", map[string]any{"run_for": "1h"}))
	failing.Job.TaskGroups[0].RestartPolicy = policy
	s.setAllocs(ok, failing)

	waitFor(t, "a2 failed after its restarts", reportedStatus(s, "a2", structs.AllocClientStatusFailed))
	r := s.lastReport("a2")
	must.Eq(t, uint64(2), r.TaskStates["init"].Restarts, must.Sprint("a failing prestart task goes through the restart policy"))
	must.False(t, hasEvent(r.TaskStates["main"], structs.TaskEventStarted))

	// Many restart delays later, the prestart task that succeeded has still run once.
	time.Sleep(500 * time.Millisecond)
	r = s.lastReport("a1")
	must.Eq(t, structs.AllocClientStatusRunning, r.ClientStatus)
	must.Eq(t, structs.TaskStateDead, r.TaskStates["init"].State)
	must.False(t, r.TaskStates["init"].Failed)
	must.Zero(t, r.TaskStates["init"].Restarts)
	must.False(t, hasEvent(r.TaskStates["init"], structs.TaskEventRestarting))
	must.Eq(t, structs.TaskStateRunning, r.TaskStates["main"].State)
}

// Stopping an allocation deregisters its services first; the tasks then wait out their
// shutdown_delay, still running, before the kill signal.
func TestShutdownDelay_ServicesGoFirst(t *testing.T) {
	_, s := testClient(t)
	task := mockTask("t", map[string]any{"run_for": "1h"})
	task.ShutdownDelay = 2 * time.Second
	a1 := serviceAlloc("a1", task)
	s.setAllocs(a1)
	waitFor(t, "services registered", func() bool { return len(s.serviceIDs()) == 2 })

	stopped := *a1
	stopped.DesiredStatus, stopped.AllocModifyIndex = structs.AllocDesiredStatusStop, 2
	s.setAllocs(&stopped)
	waitFor(t, "services deregistered and the wait reported", func() bool {
		r := s.lastReport("a1")
		return len(s.serviceIDs()) == 0 && r != nil && hasEvent(r.TaskStates["t"], structs.TaskEventWaitingShutdownDelay)
	})
	ts := s.lastReport("a1").TaskStates["t"]
	must.Eq(t, structs.TaskStateRunning, ts.State, must.Sprint("the task still runs while the delay drains traffic"))
	must.False(t, hasEvent(ts, structs.TaskEventKilling))
	waitFor(t, "complete", reportedStatus(s, "a1", structs.AllocClientStatusComplete))
}

// A raw_exec task's kill_signal, kill_timeout and user reach the driver from the job: the
// task runs as nobody, a stop sends SIGINT (which it traps to exit cleanly) and the Killing
// event carries its kill_timeout.
func TestRawExec_KillSignalTimeoutAndUserFromTheJob(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running a task as another user needs root")
	}
	c, s := testClient(t)
	task := &api.Task{Name: "t", Driver: "raw_exec", User: "nobody", KillSignal: "SIGINT", KillTimeout: new(7 * time.Second),
		Config: map[string]any{"command": "/bin/sh", "args": []string{"-c", `trap 'echo got-int; exit 0' INT; id -u; while :; do sleep 0.05; done`}}}
	a1 := testAlloc("a1", structs.JobTypeService, task)
	s.setAllocs(a1)
	stdout := filepath.Join(c.config.AllocDir, "a1", "alloc", "logs", LogFileName("t", "stdout"))
	waitFor(t, "the task's uid on stdout", func() bool {
		b, _ := os.ReadFile(stdout)
		return len(b) > 0
	})
	stopped := *a1
	stopped.DesiredStatus, stopped.AllocModifyIndex = structs.AllocDesiredStatusStop, 2
	s.setAllocs(&stopped)
	waitFor(t, "complete", reportedStatus(s, "a1", structs.AllocClientStatusComplete))

	out, err := os.ReadFile(stdout)
	must.NoError(t, err)
	must.Eq(t, "65534\ngot-int\n", string(out))
	ts := s.lastReport("a1").TaskStates["t"]
	must.False(t, ts.Failed)
	var killing *structs.TaskEvent
	for _, e := range ts.Events {
		if e.Type == structs.TaskEventKilling {
			killing = e
		}
	}
	must.NotNil(t, killing)
	must.Eq(t, 7*time.Second, killing.KillTimeout)
	for _, e := range ts.Events {
		if e.Type == structs.TaskEventTerminated {
			must.Eq(t, 0, e.ExitCode, must.Sprint("ended by its trapped kill_signal, not a SIGKILL"))
		}
	}
}
