package planapply

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/scheduler"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// harness is a state store written the way the FSM writes it, and an applier over it.
type harness struct {
	t     *testing.T
	store *state.StateStore
	mu    sync.Mutex
	index uint64
	// applied are the requests written, in order.
	applied []*structs.ApplyPlanResultsRequest
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	store, err := state.NewStateStore(state.Config{})
	must.NoError(t, err)
	return &harness{t: t, store: store, index: 100}
}

func (h *harness) write(msg structs.MessageType, fn func(*state.Txn) error) uint64 {
	h.t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.index++
	txn := h.store.WriteTxn(msg, h.index, nil)
	defer txn.Abort()
	must.NoError(h.t, fn(txn))
	txn.Commit()
	return h.index
}

func (h *harness) apply(req *structs.ApplyPlanResultsRequest) (uint64, error) {
	h.applied = append(h.applied, req)
	return h.write(structs.ApplyPlanResultsRequestType, func(txn *state.Txn) error {
		return h.store.ApplyPlanResultsTxn(txn, req)
	}), nil
}

func (h *harness) node(id string, memMB int64) *structs.Node {
	n := mock.Node(id)
	n.NodeResources = &structs.NodeResources{NodeResources: api.NodeResources{
		Cpu:    api.NodeCpuResources{CpuShares: 4000, TotalCpuCores: 4},
		Memory: api.NodeMemoryResources{MemoryMB: memMB},
		Disk:   api.NodeDiskResources{DiskMB: 100000},
	}}
	h.write(structs.NodeRegisterRequestType, func(txn *state.Txn) error { return h.store.UpsertNodeTxn(txn, n) })
	return n
}

// job registers a service job of count allocations of memMB each and returns it as stored.
func (h *harness) job(id string, count, memMB int) *structs.Job {
	job := mock.JobWithID(id)
	job.TaskGroups[0].Count = new(count)
	job.TaskGroups[0].Tasks[0].Resources = &api.Resources{CPU: new(100), MemoryMB: new(memMB)}
	job.TaskGroups[0].Update = nil
	h.write(structs.JobRegisterRequestType, func(txn *state.Txn) error { return h.store.UpsertJobTxn(txn, job) })
	stored, err := h.store.JobByID(nil, job.Namespace, job.ID)
	must.NoError(h.t, err)
	return stored
}

// plan runs the real scheduler for job on snap and turns its plan into the Raft request a
// worker submits, completing eval.
func (h *harness) plan(snap *state.StateStore, job *structs.Job, evalID string) Plan {
	h.t.Helper()
	allocs, err := snap.AllocsByJob(nil, job.Namespace, job.ID)
	must.NoError(h.t, err)
	nodes, err := snap.Nodes(nil, "")
	must.NoError(h.t, err)
	onNodes := map[string][]*structs.Allocation{}
	for _, n := range nodes {
		on, err := snap.AllocsByNode(nil, n.ID)
		must.NoError(h.t, err)
		onNodes[n.ID] = on
	}
	p := scheduler.Compute(scheduler.Input{Job: job, Allocs: allocs, Nodes: nodes, NodeAllocs: onNodes,
		DeploymentID: "dep-" + evalID, Now: time.Unix(1, 0)})
	req := &structs.ApplyPlanResultsRequest{Job: job, UpdatedAt: 1, Deployment: p.Deployment}
	for i, a := range p.Place {
		a.ID = fmt.Sprintf("%s-%d", evalID, i)
		a.EvalID = evalID
		req.AllocsPlaced = append(req.AllocsPlaced, a)
	}
	req.Evals = []*structs.Evaluation{{ID: evalID, Namespace: job.Namespace, JobID: job.ID, Type: job.Type,
		Status: structs.EvalStatusComplete, QueuedAllocations: p.Queued}}
	return Plan{Req: req, SnapshotIndex: snap.LatestIndex()}
}

func (h *harness) onNode(nodeID string) []*structs.Allocation {
	h.t.Helper()
	allocs, err := h.store.AllocsByNode(nil, nodeID)
	must.NoError(h.t, err)
	return allocs
}

func startApplier(t *testing.T, h *harness) *Applier {
	t.Helper()
	a := New(Config{State: func() *state.StateStore { return h.store }, Apply: h.apply})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		a.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return a
}

// TestApplier_TwoWorkersOneNearlyFullNode is optimistic concurrency: two workers plan at once
// (one snapshot) onto a node with room for one of their allocations. The first plan commits;
// the second is refused on that node with an index to refresh to, and its replan on the
// refreshed snapshot places nothing there, so the node is never over-committed.
func TestApplier_TwoWorkersOneNearlyFullNode(t *testing.T) {
	h := newHarness(t)
	node := h.node("n1", 1000)
	a := h.job("a", 1, 600)
	b := h.job("b", 1, 600)
	a1 := startApplier(t, h)

	snap := h.store.PointInTime()
	planA, planB := h.plan(snap, a, "eval-a"), h.plan(snap, b, "eval-b")
	must.SliceLen(t, 1, planA.Req.AllocsPlaced)
	must.SliceLen(t, 1, planB.Req.AllocsPlaced)
	must.Eq(t, node.ID, planB.Req.AllocsPlaced[0].NodeID)

	resA, err := a1.Submit(context.Background(), planA)
	must.NoError(t, err)
	must.Eq(t, 0, resA.RefusedAllocs)
	must.Positive(t, resA.Index)

	resB, err := a1.Submit(context.Background(), planB)
	must.NoError(t, err)
	must.Eq(t, 1, resB.RefusedAllocs)
	must.Eq(t, "resources exhausted: memory", resB.Refused[node.ID])
	must.GreaterEq(t, resA.Index, resB.RefreshIndex)
	must.SliceLen(t, 1, h.onNode(node.ID))
	// Nothing of plan B was written, its evaluation included.
	must.SliceLen(t, 1, h.applied)

	// The worker refreshes to at least RefreshIndex and plans again: the allocation is queued.
	fresh := h.store.PointInTime()
	must.GreaterEq(t, resB.RefreshIndex, fresh.LatestIndex())
	replan := h.plan(fresh, b, "eval-b")
	must.SliceEmpty(t, replan.Req.AllocsPlaced)
	must.Eq(t, 1, replan.Req.Evals[0].QueuedAllocations["web"])
	res, err := a1.Submit(context.Background(), replan)
	must.NoError(t, err)
	must.Eq(t, 0, res.RefusedAllocs)
	must.SliceLen(t, 1, h.onNode(node.ID))
}

// TestApplier_PartialCommit: placements on a node that still fits are committed, those on a
// node that filled up since the snapshot are refused, and the evaluation is not completed by
// the partial commit.
func TestApplier_PartialCommit(t *testing.T) {
	h := newHarness(t)
	h.node("n1", 1000)
	h.node("n2", 1000)
	filler := h.job("filler", 1, 900)
	job := h.job("web", 2, 500)

	snap := h.store.PointInTime()
	plan := h.plan(snap, job, "eval-web")
	must.SliceLen(t, 2, plan.Req.AllocsPlaced)
	var taken string
	for _, a := range plan.Req.AllocsPlaced {
		taken = a.NodeID
	}
	// Another plan filled one of the two nodes after the snapshot.
	fill := h.plan(h.store.PointInTime(), filler, "eval-filler")
	for _, a := range fill.Req.AllocsPlaced {
		a.NodeID = taken
	}
	_, err := h.apply(fill.Req)
	must.NoError(t, err)

	app := startApplier(t, h)
	res, err := app.Submit(context.Background(), plan)
	must.NoError(t, err)
	must.Eq(t, 1, res.RefusedAllocs)
	must.MapLen(t, 1, res.Refused)
	must.MapContainsKey(t, res.Refused, taken)
	must.Positive(t, res.Index)
	must.Eq(t, res.Index, res.RefreshIndex)

	placed, err := h.store.AllocsByJob(nil, "default", "web")
	must.NoError(t, err)
	must.SliceLen(t, 1, placed)
	must.NotEq(t, taken, placed[0].NodeID)
	eval, err := h.store.EvalByID(nil, "eval-web")
	must.NoError(t, err)
	must.Nil(t, eval)
}

func TestEvaluate_RefusesNodesThatChanged(t *testing.T) {
	cases := []struct {
		name   string
		change func(h *harness, txn *state.Txn, id string) error
		want   string
	}{
		{name: "down", want: "node is down", change: func(h *harness, txn *state.Txn, id string) error {
			return h.store.UpdateNodeStatusTxn(txn, id, structs.NodeStatusDown, 1)
		}},
		{name: "ineligible", want: "node is ineligible", change: func(h *harness, txn *state.Txn, id string) error {
			return h.store.UpdateNodeEligibilityTxn(txn, id, structs.NodeSchedulingIneligible, 1)
		}},
		{name: "draining", want: "node is draining", change: func(h *harness, txn *state.Txn, id string) error {
			return h.store.UpdateNodeDrainTxn(txn, id, &api.DrainStrategy{}, false, nil, nil, 1)
		}},
		{name: "unchanged", want: "", change: func(*harness, *state.Txn, string) error { return nil }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			node := h.node("n1", 1000)
			job := h.job("web", 1, 100)
			plan := h.plan(h.store.PointInTime(), job, "e1")
			h.write(structs.NodeRegisterRequestType, func(txn *state.Txn) error { return tc.change(h, txn, node.ID) })
			req, refused, n, err := Evaluate(h.store.PointInTime(), plan.Req)
			must.NoError(t, err)
			must.Eq(t, tc.want, refused[node.ID])
			if tc.want == "" {
				must.Eq(t, 0, n)
				must.Eq(t, plan.Req, req)
				return
			}
			must.Eq(t, 1, n)
			must.SliceEmpty(t, req.AllocsPlaced)
			must.SliceEmpty(t, req.Evals)
		})
	}
}

func TestEvaluate_PortCollision(t *testing.T) {
	h := newHarness(t)
	node := h.node("n1", 100000)
	mk := func(id string, port int) *structs.Allocation {
		return &structs.Allocation{ID: id, NodeID: node.ID, Namespace: "default", JobID: "web", TaskGroup: "web", DesiredStatus: structs.AllocDesiredStatusRun,
			ClientStatus: structs.AllocClientStatusPending,
			AllocatedResources: &api.AllocatedResources{Shared: api.AllocatedSharedResources{
				Ports: []api.PortMapping{{Label: "http", Value: port}}}}}
	}
	job := h.job("web", 1, 10)
	_, err := h.apply(&structs.ApplyPlanResultsRequest{Job: job, AllocsPlaced: []*structs.Allocation{mk("existing", 8080)}})
	must.NoError(t, err)
	cases := []struct {
		name   string
		placed []*structs.Allocation
		want   string
	}{
		{name: "taken by an existing allocation", placed: []*structs.Allocation{mk("p1", 8080)}, want: "resources exhausted: network: reserved port collision 8080"},
		{name: "taken twice by the plan", placed: []*structs.Allocation{mk("p1", 9000), mk("p2", 9000)}, want: "resources exhausted: network: reserved port collision 9000"},
		{name: "free", placed: []*structs.Allocation{mk("p1", 9000), mk("p2", 9001)}, want: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, refused, _, err := Evaluate(h.store.PointInTime(), &structs.ApplyPlanResultsRequest{Job: job, AllocsPlaced: tc.placed})
			must.NoError(t, err)
			must.Eq(t, tc.want, refused[node.ID])
		})
	}
}

// TestEvaluate_StopsMakeRoom: an allocation the plan stops frees its room for the plan's
// placement on the same node (a destructive update).
func TestEvaluate_StopsMakeRoom(t *testing.T) {
	h := newHarness(t)
	node := h.node("n1", 1000)
	job := h.job("web", 1, 800)
	first := h.plan(h.store.PointInTime(), job, "e1")
	_, err := h.apply(first.Req)
	must.NoError(t, err)
	old := h.onNode(node.ID)[0]
	repl := old.Copy()
	repl.ID = "replacement"
	req := &structs.ApplyPlanResultsRequest{Job: job, AllocsPlaced: []*structs.Allocation{repl}}
	_, refused, _, err := Evaluate(h.store.PointInTime(), req)
	must.NoError(t, err)
	must.Eq(t, "resources exhausted: memory", refused[node.ID])
	req.AllocsStopped = []*structs.AllocStopUpdate{{AllocID: old.ID}}
	_, refused, _, err = Evaluate(h.store.PointInTime(), req)
	must.NoError(t, err)
	must.MapEmpty(t, refused)
}

func TestApplier_SubmitAfterStop(t *testing.T) {
	h := newHarness(t)
	a := New(Config{State: func() *state.StateStore { return h.store }, Apply: h.apply})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a.Run(ctx)
	_, err := a.Submit(context.Background(), Plan{Req: &structs.ApplyPlanResultsRequest{}})
	must.ErrorIs(t, err, ErrStopped)
}
