package client

import (
	"testing"
	"time"

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
