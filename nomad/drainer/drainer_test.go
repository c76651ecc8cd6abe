package drainer

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fixture is a state store written through the same transactions the FSM runs.
type fixture struct {
	t     *testing.T
	store *state.StateStore
	index uint64
}

func newFixture(t *testing.T) *fixture {
	store, err := state.NewStateStore(state.Config{})
	must.NoError(t, err)
	return &fixture{t: t, store: store, index: 100}
}

func (f *fixture) write(mt structs.MessageType, fn func(txn *state.Txn) error) {
	f.t.Helper()
	f.index++
	txn := f.store.WriteTxn(mt, f.index, nil)
	defer txn.Abort()
	must.NoError(f.t, fn(txn))
	txn.Commit()
}

// node registers a node; with a strategy it is draining since t0.
func (f *fixture) node(id string, spec *api.DrainSpec) {
	f.t.Helper()
	f.write(structs.NodeRegisterRequestType, func(txn *state.Txn) error { return f.store.UpsertNodeTxn(txn, mock.Node(id)) })
	if spec != nil {
		f.write(structs.NodeUpdateDrainRequestType, func(txn *state.Txn) error {
			return f.store.UpdateNodeDrainTxn(txn, id, structs.NewDrainStrategy(*spec, t0), false, nil, nil, t0.UnixNano())
		})
	}
}

// job registers a job of typ with one group "web" of count and the given migrate block.
func (f *fixture) job(id, typ string, count int, migrate *api.MigrateStrategy) *structs.Job {
	f.t.Helper()
	job := mock.JobWithID(id)
	job.Type = typ
	job.TaskGroups[0].Count = &count
	job.TaskGroups[0].Migrate = migrate
	f.write(structs.JobRegisterRequestType, func(txn *state.Txn) error { return f.store.UpsertJobTxn(txn, job) })
	stored, err := f.store.JobByID(nil, job.Namespace, id)
	must.NoError(f.t, err)
	return stored
}

// alloc places allocation idx of job on node; running ones started at started.
func (f *fixture) alloc(job *structs.Job, idx int, nodeID, status string, started time.Time) *structs.Allocation {
	f.t.Helper()
	a := &structs.Allocation{
		ID: fmt.Sprintf("%s-%d-%s", job.ID, idx, nodeID), Namespace: job.Namespace, JobID: job.ID,
		TaskGroup: "web", Name: structs.AllocName(job.ID, "web", idx), NodeID: nodeID,
		DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: status,
	}
	if status == structs.AllocClientStatusRunning {
		a.TaskStates = map[string]*structs.TaskState{"server": {State: structs.TaskStateRunning, StartedAt: started}}
	}
	f.write(structs.ApplyPlanResultsRequestType, func(txn *state.Txn) error {
		return f.store.ApplyPlanResultsTxn(txn, &structs.ApplyPlanResultsRequest{Job: job, AllocsPlaced: []*structs.Allocation{a}})
	})
	return a
}

// apply is the drainer's Apply on the fixture: the FSM's transactions.
func (f *fixture) apply(mt structs.MessageType, req any) (uint64, error) {
	switch r := req.(type) {
	case *structs.AllocUpdateDesiredTransitionRequest:
		f.index++
		must.NoError(f.t, f.store.ApplyAllocDesiredTransition(f.index, r))
	case *structs.BatchNodeUpdateDrainRequest:
		f.write(mt, func(txn *state.Txn) error { return f.store.CompleteNodeDrainsTxn(txn, r.Complete, r.UpdatedAt) })
	default:
		f.t.Fatalf("unexpected request %T", req)
	}
	return f.index, nil
}

func ids(allocs []*structs.Allocation) []string {
	var out []string
	for _, a := range allocs {
		out = append(out, a.ID)
	}
	sort.Strings(out)
	return out
}

func keys(m map[string]*api.DrainStrategy) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestDecide(t *testing.T) {
	running, pending := structs.AllocClientStatusRunning, structs.AllocClientStatusPending
	now := t0.Add(time.Minute)
	longAgo := t0.Add(-time.Hour)
	fast := &api.MigrateStrategy{MaxParallel: new(1), MinHealthyTime: new(time.Duration(0))}
	cases := []struct {
		name         string
		setup        func(f *fixture)
		wantMigrate  []string
		wantComplete []string
		wantWake     time.Time
	}{
		{
			name:         "empty node completes",
			setup:        func(f *fixture) { f.node("n1", &api.DrainSpec{}) },
			wantComplete: []string{"n1"},
		},
		{
			name: "node that is not draining is left alone",
			setup: func(f *fixture) {
				f.node("n1", nil)
				f.alloc(f.job("web", structs.JobTypeService, 1, nil), 0, "n1", running, longAgo)
			},
		},
		{
			name: "max_parallel 1 moves one healthy allocation at a time",
			setup: func(f *fixture) {
				f.node("n1", &api.DrainSpec{})
				job := f.job("web", structs.JobTypeService, 3, nil)
				for i := range 3 {
					f.alloc(job, i, "n1", running, longAgo)
				}
			},
			wantMigrate: []string{"web-0-n1"},
		},
		{
			name: "max_parallel 2 moves two",
			setup: func(f *fixture) {
				f.node("n1", &api.DrainSpec{})
				job := f.job("web", structs.JobTypeService, 3, &api.MigrateStrategy{MaxParallel: new(2)})
				for i := range 3 {
					f.alloc(job, i, "n1", running, longAgo)
				}
			},
			wantMigrate: []string{"web-0-n1", "web-1-n1"},
		},
		{
			name: "an allocation already migrating uses the budget",
			setup: func(f *fixture) {
				f.node("n1", &api.DrainSpec{})
				job := f.job("web", structs.JobTypeService, 2, nil)
				a := f.alloc(job, 0, "n1", running, longAgo)
				f.alloc(job, 1, "n1", running, longAgo)
				yes := true
				f.write(structs.AllocUpdateDesiredTransitionRequestType, func(txn *state.Txn) error {
					return f.store.UpdateAllocsDesiredTransitionTxn(txn, map[string]*api.DesiredTransition{a.ID: {Migrate: &yes}}, 0)
				})
			},
		},
		{
			name: "a replacement not yet healthy holds the next move until min_healthy_time",
			setup: func(f *fixture) {
				f.node("n1", &api.DrainSpec{})
				f.node("n2", nil)
				job := f.job("web", structs.JobTypeService, 2, nil) // default min_healthy_time 10s
				f.alloc(job, 0, "n2", running, now.Add(-4*time.Second))
				f.alloc(job, 1, "n1", running, longAgo)
			},
			wantWake: now.Add(6 * time.Second),
		},
		{
			name: "once healthy the next one moves",
			setup: func(f *fixture) {
				f.node("n1", &api.DrainSpec{})
				f.node("n2", nil)
				job := f.job("web", structs.JobTypeService, 2, fast)
				f.alloc(job, 0, "n2", running, now)
				f.alloc(job, 1, "n1", running, longAgo)
			},
			wantMigrate: []string{"web-1-n1"},
		},
		{
			name: "allocations that are not running move at once",
			setup: func(f *fixture) {
				f.node("n1", &api.DrainSpec{})
				job := f.job("web", structs.JobTypeService, 3, nil)
				for i := range 3 {
					f.alloc(job, i, "n1", pending, time.Time{})
				}
			},
			wantMigrate: []string{"web-0-n1", "web-1-n1", "web-2-n1"},
		},
		{
			name: "batch allocations are left to finish before the deadline",
			setup: func(f *fixture) {
				f.node("n1", &api.DrainSpec{Deadline: time.Hour})
				f.alloc(f.job("b", structs.JobTypeBatch, 1, nil), 0, "n1", running, longAgo)
			},
			wantWake: t0.Add(time.Hour),
		},
		{
			name: "at the deadline everything left is marked",
			setup: func(f *fixture) {
				f.node("n1", &api.DrainSpec{Deadline: 30 * time.Second})
				f.alloc(f.job("b", structs.JobTypeBatch, 1, nil), 0, "n1", running, longAgo)
				f.alloc(f.job("sys", structs.JobTypeSystem, 1, nil), 0, "n1", running, longAgo)
				job := f.job("web", structs.JobTypeService, 2, nil)
				f.alloc(job, 0, "n1", running, longAgo)
				f.alloc(job, 1, "n1", running, longAgo)
			},
			wantMigrate: []string{"b-0-n1", "sys-0-n1", "web-0-n1", "web-1-n1"},
		},
		{
			name: "force (deadline -1) marks everything at once",
			setup: func(f *fixture) {
				f.node("n1", &api.DrainSpec{Deadline: -1})
				job := f.job("web", structs.JobTypeService, 2, nil)
				f.alloc(job, 0, "n1", running, longAgo)
				f.alloc(job, 1, "n1", running, longAgo)
			},
			wantMigrate: []string{"web-0-n1", "web-1-n1"},
		},
		{
			name: "system allocations wait while others remain",
			setup: func(f *fixture) {
				f.node("n1", &api.DrainSpec{})
				f.alloc(f.job("b", structs.JobTypeBatch, 1, nil), 0, "n1", running, longAgo)
				f.alloc(f.job("sys", structs.JobTypeSystem, 1, nil), 0, "n1", running, longAgo)
			},
		},
		{
			name: "system allocations go last",
			setup: func(f *fixture) {
				f.node("n1", &api.DrainSpec{})
				f.alloc(f.job("sys", structs.JobTypeSystem, 1, nil), 0, "n1", running, longAgo)
			},
			wantMigrate: []string{"sys-0-n1"},
		},
		{
			name: "ignored system allocations stay and the drain completes",
			setup: func(f *fixture) {
				f.node("n1", &api.DrainSpec{IgnoreSystemJobs: true, Deadline: -1})
				f.alloc(f.job("sys", structs.JobTypeSystem, 1, nil), 0, "n1", running, longAgo)
			},
			wantComplete: []string{"n1"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			tc.setup(f)
			d, err := Decide(f.store, now)
			must.NoError(t, err)
			must.Eq(t, tc.wantMigrate, ids(d.Migrate))
			must.Eq(t, tc.wantComplete, keys(d.Complete))
			must.Eq(t, tc.wantWake, d.Wake)
			for _, a := range d.Migrate {
				must.MapContainsKey(t, d.Jobs, structs.NamespacedID{Namespace: a.Namespace, ID: a.JobID})
			}
		})
	}
}

// A drain from start to end through Step: marks with evaluations, the scheduler's stops (done
// here by hand), then completion, which leaves the node ineligible and says complete.
func TestStep_DrainToCompletion(t *testing.T) {
	f := newFixture(t)
	f.node("n1", &api.DrainSpec{})
	job := f.job("web", structs.JobTypeService, 1, nil)
	a := f.alloc(job, 0, "n1", structs.AllocClientStatusRunning, t0.Add(-time.Hour))
	d := New(Config{State: func() *state.StateStore { return f.store }, Apply: f.apply, Now: func() time.Time { return t0.Add(time.Minute) }})

	_, err := d.Step(f.store.PointInTime())
	must.NoError(t, err)
	got, err := f.store.AllocByID(nil, a.ID)
	must.NoError(t, err)
	must.True(t, migrating(got))
	evals, err := f.store.EvalsByJob(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.SliceLen(t, 1, evals)
	must.Eq(t, structs.EvalTriggerNodeDrain, evals[0].TriggeredBy)
	must.Eq(t, structs.EvalStatusPending, evals[0].Status)

	// A second look before the scheduler ran changes nothing.
	before := f.store.LatestIndex()
	_, err = d.Step(f.store.PointInTime())
	must.NoError(t, err)
	must.Eq(t, before, f.store.LatestIndex())

	// The scheduler stops it; the drain completes.
	f.write(structs.ApplyPlanResultsRequestType, func(txn *state.Txn) error {
		return f.store.ApplyPlanResultsTxn(txn, &structs.ApplyPlanResultsRequest{
			AllocsStopped: []*structs.AllocStopUpdate{{AllocID: a.ID, DesiredDescription: "alloc is being migrated"}},
		})
	})
	_, err = d.Step(f.store.PointInTime())
	must.NoError(t, err)
	node, err := f.store.NodeByID(nil, "n1")
	must.NoError(t, err)
	must.Nil(t, node.DrainStrategy)
	must.False(t, node.Drain)
	must.Eq(t, structs.NodeSchedulingIneligible, node.SchedulingEligibility)
	must.Eq(t, api.DrainStatusComplete, node.LastDrain.Status)
	must.Eq(t, t0.Add(time.Minute), node.LastDrain.UpdatedAt)
	last := node.Events[len(node.Events)-1]
	must.Eq(t, structs.NodeEventDrainComplete, last.Message)
	must.Eq(t, structs.NodeEventSubsystemDrain, last.Subsystem)
	must.Eq(t, t0.Add(time.Minute), last.Timestamp)
}

// A drain replaced after the drainer looked is not ended by the drainer's stale decision.
func TestCompleteNodeDrains_SkipsChangedStrategy(t *testing.T) {
	f := newFixture(t)
	f.node("n1", &api.DrainSpec{})
	snap := f.store.PointInTime()
	dec, err := Decide(snap, t0)
	must.NoError(t, err)
	must.Eq(t, []string{"n1"}, keys(dec.Complete))
	f.write(structs.NodeUpdateDrainRequestType, func(txn *state.Txn) error {
		return f.store.UpdateNodeDrainTxn(txn, "n1", structs.NewDrainStrategy(api.DrainSpec{Deadline: time.Hour}, t0.Add(time.Second)), false, nil, nil, 0)
	})
	_, err = f.apply(structs.BatchNodeUpdateDrainRequestType, &structs.BatchNodeUpdateDrainRequest{Complete: dec.Complete})
	must.NoError(t, err)
	node, err := f.store.NodeByID(nil, "n1")
	must.NoError(t, err)
	must.NotNil(t, node.DrainStrategy)
	must.Eq(t, api.DrainStatusDraining, node.LastDrain.Status)
}

// A deadline on a full node marks its allocations in entries of bounded size, each with an
// evaluation of the jobs it marks.
func TestStep_BoundsEntries(t *testing.T) {
	f := newFixture(t)
	f.node("n1", &api.DrainSpec{Deadline: -1})
	job := f.job("b", structs.JobTypeBatch, 1, nil)
	for i := range maxMigratePerEntry + 10 {
		f.alloc(job, i, "n1", structs.AllocClientStatusRunning, t0)
	}
	var sizes []int
	d := New(Config{State: func() *state.StateStore { return f.store }, Now: func() time.Time { return t0 },
		Apply: func(mt structs.MessageType, req any) (uint64, error) {
			r := req.(*structs.AllocUpdateDesiredTransitionRequest)
			sizes = append(sizes, len(r.Allocs))
			must.SliceLen(t, 1, r.Evals)
			return f.apply(mt, req)
		}})
	_, err := d.Step(f.store.PointInTime())
	must.NoError(t, err)
	must.Eq(t, []int{maxMigratePerEntry, 10}, sizes)
}

// Run sleeps while no node drains, wakes when one starts, ends it, and returns once its
// context ends.
func TestRun_WakesOnDrainAndStops(t *testing.T) {
	f := newFixture(t)
	f.node("n1", nil)
	var mu sync.Mutex
	apply := func(mt structs.MessageType, req any) (uint64, error) {
		mu.Lock()
		defer mu.Unlock()
		return f.apply(mt, req)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		New(Config{State: func() *state.StateStore { return f.store }, Apply: apply}).Run(ctx)
	}()
	mu.Lock()
	f.write(structs.NodeUpdateDrainRequestType, func(txn *state.Txn) error {
		return f.store.UpdateNodeDrainTxn(txn, "n1", structs.NewDrainStrategy(api.DrainSpec{}, t0), false, nil, nil, t0.UnixNano())
	})
	mu.Unlock()
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		node, err := f.store.NodeByID(nil, "n1")
		must.NoError(t, err)
		return node.DrainStrategy == nil && node.LastDrain != nil && node.LastDrain.Status == api.DrainStatusComplete
	}), wait.Timeout(5*time.Second), wait.Gap(10*time.Millisecond)))
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}
