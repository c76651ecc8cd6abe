package client

import (
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func TestAllocHealth_Judge(t *testing.T) {
	start := time.Now().Add(-time.Minute)
	running := func(startedAgo time.Duration) *structs.TaskState {
		return &structs.TaskState{State: structs.TaskStateRunning, StartedAt: time.Now().Add(-startedAgo)}
	}
	cases := []struct {
		name     string
		states   map[string]*structs.TaskState
		stopping bool
		want     *bool // nil: no verdict yet
		waits    bool  // with no verdict: a timer is due (rather than waiting for a change)
	}{
		{name: "all running long enough", states: map[string]*structs.TaskState{"a": running(time.Hour), "b": running(20 * time.Second)},
			want: new(true)},
		{name: "one started too recently", states: map[string]*structs.TaskState{"a": running(time.Hour), "b": running(time.Second)},
			waits: true},
		{name: "one still pending (restarting)", states: map[string]*structs.TaskState{"a": running(time.Hour), "b": {State: structs.TaskStatePending}}},
		{name: "one dead", states: map[string]*structs.TaskState{"a": running(time.Hour), "b": {State: structs.TaskStateDead, Failed: true}},
			want: new(false)},
		{name: "stopped by the servers: no verdict", stopping: true,
			states: map[string]*structs.TaskState{"a": {State: structs.TaskStateDead}}},
		{name: "no tasks yet", states: map[string]*structs.TaskState{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &allocRunner{states: tc.states, stopping: tc.stopping}
			got, wait := r.judgeHealth(start, 10*time.Second, false)
			must.Eq(t, tc.want, got)
			if tc.want == nil {
				must.Eq(t, tc.waits, wait > 0)
			}
		})
	}
}

// The clock starts when the watcher does: tasks running for an hour before an in-place update
// are not healthy in the new deployment until min_healthy_time after it.
func TestAllocHealth_ClockStartsWithTheWatcher(t *testing.T) {
	r := &allocRunner{states: map[string]*structs.TaskState{"a": {State: structs.TaskStateRunning, StartedAt: time.Now().Add(-time.Hour)}}}
	got, wait := r.judgeHealth(time.Now(), 10*time.Second, false)
	must.Nil(t, got)
	must.Greater(t, 9*time.Second, wait)
}

// Deployment health and lifecycle hooks, as upstream: a poststop task never counts, nor does
// a prestart or poststart task that completed or a poststart task not yet run; a prestart
// sidecar counts as a main task does; a failed hook task fails the allocation's health.
func TestAllocHealth_LifecycleKinds(t *testing.T) {
	start := time.Now().Add(-time.Minute)
	main := &structs.TaskState{State: structs.TaskStateRunning, StartedAt: time.Now().Add(-time.Hour)}
	done := &structs.TaskState{State: structs.TaskStateDead}
	failed := &structs.TaskState{State: structs.TaskStateDead, Failed: true}
	pending := &structs.TaskState{State: structs.TaskStatePending}
	cases := []struct {
		name  string
		kind  lifecycleKind
		state *structs.TaskState
		want  *bool
	}{
		{"prestart completed", kindPrestart, done, new(true)},
		{"prestart failed", kindPrestart, failed, new(false)},
		{"prestart sidecar pending", kindPrestartSidecar, pending, nil},
		{"prestart sidecar ended", kindPrestartSidecar, done, new(false)},
		{"poststart not yet run", kindPoststart, pending, new(true)},
		{"poststart completed", kindPoststart, done, new(true)},
		{"poststart failed", kindPoststart, failed, new(false)},
		{"poststop not yet run", kindPoststop, pending, new(true)},
		{"poststop failed", kindPoststop, failed, new(true)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &allocRunner{
				tasks:  []*taskRunner{{task: &api.Task{Name: "main"}, kind: kindMain}, {task: &api.Task{Name: "hook"}, kind: tc.kind}},
				states: map[string]*structs.TaskState{"main": main, "hook": tc.state},
			}
			got, _ := r.judgeHealth(start, 10*time.Second, false)
			must.Eq(t, tc.want, got)
		})
	}
}
