package deploymentwatcher

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// fakeBackend applies what the watcher writes to a real store, as the FSM would, and keeps
// the requests.
type fakeBackend struct {
	store *state.StateStore
	// mu guards index and reqs, for tests that run the watcher in its own goroutine.
	mu    sync.Mutex
	index uint64
	now   time.Time
	reqs  []any
	// duringDecision, when set, runs (once) at the watcher's first clock read, which each
	// decision makes before it reads the state: it stands for a write landing mid-decision.
	duringDecision func()
}

func (b *fakeBackend) State() *state.StateStore { return b.store }
func (b *fakeBackend) Now() time.Time {
	if f := b.duringDecision; f != nil {
		b.duringDecision = nil
		f()
	}
	return b.now
}
func (b *fakeBackend) Apply(t structs.MessageType, req any) (uint64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.index++
	b.reqs = append(b.reqs, req)
	switch r := req.(type) {
	case *structs.DeploymentStatusUpdateRequest:
		return b.index, b.store.ApplyDeploymentStatusUpdate(b.index, r)
	case *structs.DeploymentPromoteRequest:
		return b.index, b.store.ApplyDeploymentPromotion(b.index, r)
	case *structs.EvalUpdateRequest:
		txn := b.store.WriteTxn(t, b.index, nil)
		defer txn.Abort()
		if err := b.store.UpsertEvalsTxn(txn, r.Evals); err != nil {
			return 0, err
		}
		txn.Commit()
		return b.index, nil
	}
	return 0, fmt.Errorf("unexpected request %T", req)
}

func testJob(version string) *structs.Job {
	return &structs.Job{Namespace: structs.DefaultNamespace, ID: "web", Name: "web", Type: structs.JobTypeService,
		Priority: 50, Meta: map[string]string{"v": version},
		TaskGroups: []*api.TaskGroup{{Name: new("web"), Count: new(2), Tasks: []*api.Task{{Name: "t", Driver: "mock_driver"}}}}}
}

// setup registers version 0 (stable when stable0) and version 1 of job web, and a running
// deployment of version 1 whose two allocations have the given health (nil: unknown).
func setup(t *testing.T, stable0, sameSpec bool, st structs.DeploymentState, health ...*bool) *fakeBackend {
	t.Helper()
	store, err := state.NewStateStore(state.Config{JobTrackedVersions: 6})
	must.NoError(t, err)
	b := &fakeBackend{store: store, index: 100, now: time.Unix(10_000, 0)}
	must.NoError(t, store.ApplyJobRegister(10, &structs.JobRegisterRequest{Job: testJob("0")}))
	if stable0 {
		job, _ := store.JobByID(nil, structs.DefaultNamespace, "web")
		d0 := &structs.Deployment{ID: "dep-0", Namespace: job.Namespace, JobID: "web", JobVersion: 0, JobCreateIndex: job.CreateIndex,
			Status: structs.DeploymentStatusRunning, TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 2}}}
		plan(t, store, 12, job, d0)
		must.NoError(t, store.ApplyDeploymentStatusUpdate(13, &structs.DeploymentStatusUpdateRequest{
			DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: "dep-0", Status: structs.DeploymentStatusSuccessful}}))
	}
	must.NoError(t, store.ApplyJobRegister(20, &structs.JobRegisterRequest{Job: testJob("1")}))
	if sameSpec {
		// Version 2 is version 0's spec again, as a revert registers it.
		must.NoError(t, store.ApplyJobRegister(21, &structs.JobRegisterRequest{Job: testJob("0")}))
	}
	job, _ := store.JobByID(nil, structs.DefaultNamespace, "web")
	d := &structs.Deployment{ID: "dep-1", Namespace: job.Namespace, JobID: "web", JobVersion: job.Version, JobCreateIndex: job.CreateIndex,
		Status: structs.DeploymentStatusRunning, TaskGroups: map[string]*structs.DeploymentState{"web": &st}}
	var allocs []*structs.Allocation
	for i, h := range health {
		allocs = append(allocs, &structs.Allocation{ID: fmt.Sprintf("a%d", i), Namespace: job.Namespace, JobID: "web", TaskGroup: "web",
			Name: structs.AllocName("web", "web", i), NodeID: "n1", DeploymentID: "dep-1", DesiredStatus: structs.AllocDesiredStatusRun,
			ClientStatus:     structs.AllocClientStatusRunning,
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: h, Canary: st.DesiredCanaries > 0, Timestamp: time.Unix(9_000, 0)}})
	}
	plan(t, store, 22, job, d, allocs...)
	return b
}

func plan(t *testing.T, store *state.StateStore, index uint64, job *structs.Job, d *structs.Deployment, allocs ...*structs.Allocation) {
	t.Helper()
	txn := store.WriteTxn(structs.ApplyPlanResultsRequestType, index, nil)
	defer txn.Abort()
	must.NoError(t, store.ApplyPlanResultsTxn(txn, &structs.ApplyPlanResultsRequest{Job: job, Deployment: d, AllocsPlaced: allocs}))
	txn.Commit()
}

// decision summarises what the watcher wrote.
func decision(b *fakeBackend) []string {
	var out []string
	for _, r := range b.reqs {
		switch r := r.(type) {
		case *structs.DeploymentStatusUpdateRequest:
			s := r.DeploymentUpdate.Status + ": " + r.DeploymentUpdate.StatusDescription
			if r.Job != nil {
				s += fmt.Sprintf(" (revert to spec %s)", r.Job.Meta["v"])
			}
			out = append(out, s)
		case *structs.DeploymentPromoteRequest:
			out = append(out, "promote")
		case *structs.EvalUpdateRequest:
			out = append(out, "eval "+r.Evals[0].TriggeredBy)
		}
	}
	return out
}

func TestWatcher_Decisions(t *testing.T) {
	yes, no := new(true), new(false)
	cases := []struct {
		name    string
		stable0 bool
		// sameSpec: the deployment's version has version 0's spec (it is a revert)
		sameSpec bool
		st       structs.DeploymentState
		health   []*bool
		want     []string
	}{
		{name: "all healthy: successful", st: structs.DeploymentState{DesiredTotal: 2}, health: []*bool{yes, yes},
			want: []string{"successful: Deployment completed successfully"}},
		{name: "one healthy: evaluation for the next batch", st: structs.DeploymentState{DesiredTotal: 2}, health: []*bool{yes, nil},
			want: []string{"eval deployment-watcher"}},
		{name: "nothing healthy yet: nothing", st: structs.DeploymentState{DesiredTotal: 2}, health: []*bool{nil}},
		{name: "unhealthy without auto_revert", st: structs.DeploymentState{DesiredTotal: 2}, health: []*bool{no},
			want: []string{"failed: Failed due to unhealthy allocations"}},
		{name: "unhealthy with auto_revert reverts to the stable version", stable0: true,
			st: structs.DeploymentState{DesiredTotal: 2, AutoRevert: true}, health: []*bool{yes, no},
			want: []string{"failed: Failed due to unhealthy allocations - rolling back to job version 0 (revert to spec 0)"}},
		{name: "unhealthy with auto_revert and no stable version",
			st: structs.DeploymentState{DesiredTotal: 2, AutoRevert: true}, health: []*bool{no},
			want: []string{"failed: Failed due to unhealthy allocations - no stable job version to auto revert to"}},
		{name: "a failing revert is not reverted again", stable0: true, sameSpec: true,
			st: structs.DeploymentState{DesiredTotal: 2, AutoRevert: true}, health: []*bool{no},
			want: []string{"failed: Failed due to unhealthy allocations - not rolling back to stable job version 0 as current job has same specification"}},
		{name: "progress deadline passed",
			st:   structs.DeploymentState{DesiredTotal: 2, ProgressDeadline: time.Minute, RequireProgressBy: time.Unix(9_999, 0)},
			want: []string{"failed: Failed due to progress deadline"}},
		{name: "healthy canaries with auto_promote are promoted",
			st: structs.DeploymentState{DesiredTotal: 2, DesiredCanaries: 1, AutoPromote: true}, health: []*bool{yes},
			want: []string{"promote"}},
		{name: "healthy canaries wait for a manual promotion, past the progress deadline too",
			st:     structs.DeploymentState{DesiredTotal: 2, DesiredCanaries: 1, ProgressDeadline: time.Minute, RequireProgressBy: time.Unix(9_999, 0)},
			health: []*bool{yes}, want: []string{"eval deployment-watcher"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t, tc.stable0, tc.sameSpec, tc.st, tc.health...)
			b.reqs = nil
			w := New(b, hclog.NewNullLogger())
			_, err := w.pass(b.store, nil)
			must.NoError(t, err)
			must.Eq(t, tc.want, decision(b))
			// A second look at the same state decides nothing new.
			b.reqs = nil
			_, err = w.pass(b.store, nil)
			must.NoError(t, err)
			must.Eq(t, []string(nil), decision(b))
		})
	}
}

// A write that lands while a decision is being made must not reach it: the deployment was
// read before the write, so the job it is judged with must be the job of that same read.
// A watcher reading the live store would build its evaluation from the job registered
// mid-decision (JobModifyIndex 150) for a deployment of the job at index 20.
func TestWatcher_DecisionReadsOneSnapshot(t *testing.T) {
	yes := new(true)
	b := setup(t, false, false, structs.DeploymentState{DesiredTotal: 2}, yes, nil)
	b.reqs = nil
	b.duringDecision = func() {
		must.NoError(t, b.store.ApplyJobRegister(150, &structs.JobRegisterRequest{Job: testJob("2")}))
	}
	w := New(b, hclog.NewNullLogger())
	_, err := w.look(memdb.NewWatchSet())
	must.NoError(t, err)
	must.Nil(t, b.duringDecision, must.Sprint("the decision never read the clock, so no write landed mid-decision"))
	must.Eq(t, []string{"eval deployment-watcher"}, decision(b))
	eval := b.reqs[0].(*structs.EvalUpdateRequest).Evals[0]
	must.Eq(t, uint64(20), eval.JobModifyIndex, must.Sprint("the evaluation names the job the deployment was read with"))

	// The next look sees the write whole.
	live, err := b.store.JobByID(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	must.Eq(t, uint64(150), live.JobModifyIndex)
}

// Run decides from point-in-time views, whose watches still fire on later writes to the live
// store: a deployment whose allocations become healthy after a look is decided on the next.
func TestWatcher_RunWakesOnAStateChange(t *testing.T) {
	b := setup(t, false, false, structs.DeploymentState{DesiredTotal: 2}, nil, nil)
	b.reqs = nil
	looking := make(chan struct{})
	b.duringDecision = func() { close(looking) }
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		New(b, hclog.NewNullLogger()).Run(ctx)
	}()
	defer func() {
		cancel()
		<-stopped
	}()

	// The write lands after the first look took its view: only a watch can wake the next.
	<-looking
	must.NoError(t, b.store.ApplyDeploymentAllocHealth(30, &structs.DeploymentAllocHealthRequest{
		DeploymentID: "dep-1", HealthyAllocationIDs: []string{"a0", "a1"}, Timestamp: 9_500e9, UpdatedAt: 9_500e9}))
	want := []string{"successful: Deployment completed successfully"}
	deadline := time.Now().Add(5 * time.Second)
	for {
		b.mu.Lock()
		got := decision(b)
		b.mu.Unlock()
		if len(got) > 0 || time.Now().After(deadline) {
			must.Eq(t, want, got)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}
