package planapply

import (
	"context"
	"errors"
	"slices"
	"time"

	metrics "github.com/hashicorp/go-metrics"
	"github.com/nomadfork/nomad/scheduler"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// ErrStopped is returned by Submit when the applier has stopped (leadership lost).
var ErrStopped = errors.New("plan applier stopped")

// Plan is a worker's plan: the Raft request it would write and the index of the snapshot it
// was computed on.
type Plan struct {
	Req           *structs.ApplyPlanResultsRequest
	SnapshotIndex uint64
}

// Result says what became of a plan.
type Result struct {
	// Index is the Raft index of the commit, 0 when nothing was written.
	Index uint64
	// Refused names, per node, why its placements were refused; empty when all were applied.
	Refused map[string]string
	// RefusedAllocs counts the placements refused.
	RefusedAllocs int
	// RefreshIndex is the index a worker must refresh its snapshot to before planning the
	// refused part again; 0 when nothing was refused.
	RefreshIndex uint64
}

// Config is what the applier needs from the server.
type Config struct {
	// State returns the live state store.
	State func() *state.StateStore
	// Apply writes the request through Raft and returns once it is applied locally.
	Apply func(*structs.ApplyPlanResultsRequest) (uint64, error)
}

type pending struct {
	plan  Plan
	reply chan reply
}

type reply struct {
	res *Result
	err error
}

// Applier serialises the workers' plans. Make one per leadership term.
type Applier struct {
	cfg   Config
	queue chan *pending
	done  chan struct{}
}

// New returns an applier; Run must be started for Submit to return.
func New(cfg Config) *Applier {
	return &Applier{cfg: cfg, queue: make(chan *pending, 64), done: make(chan struct{})}
}

// Run applies plans until ctx ends. Plans still queued then get ErrStopped.
func (a *Applier) Run(ctx context.Context) {
	defer close(a.done)
	for {
		select {
		case <-ctx.Done():
			return
		case p := <-a.queue:
			res, err := a.apply(p.plan)
			p.reply <- reply{res: res, err: err}
		}
	}
}

// Submit queues a plan and waits for what became of it.
func (a *Applier) Submit(ctx context.Context, plan Plan) (*Result, error) {
	p := &pending{plan: plan, reply: make(chan reply, 1)}
	select {
	case a.queue <- p:
	case <-a.done:
		return nil, ErrStopped
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case r := <-p.reply:
		return r.res, r.err
	case <-a.done:
		// Run may have answered just before it ended.
		select {
		case r := <-p.reply:
			return r.res, r.err
		default:
			return nil, ErrStopped
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (a *Applier) apply(plan Plan) (*Result, error) {
	start := time.Now()
	store := a.cfg.State()
	req, refused, refusedAllocs, err := Evaluate(store.PointInTime(), plan.Req)
	metrics.MeasureSince([]string{"nomad", "plan", "evaluate"}, start)
	if err != nil {
		return nil, err
	}
	res := &Result{Refused: refused, RefusedAllocs: refusedAllocs}
	if refusedAllocs > 0 && req.IsNoOp() {
		// Nothing of it still fits: nothing to write; the worker replans on the state that
		// refused it.
		res.RefreshIndex = store.LatestIndex()
		return res, nil
	}
	index, err := a.cfg.Apply(req)
	if err != nil {
		return nil, err
	}
	res.Index = index
	if refusedAllocs > 0 {
		res.RefreshIndex = max(index, store.LatestIndex())
	}
	return res, nil
}

// Evaluate checks a plan's placements against store (the latest state) and returns the
// request to write: the plan itself when everything fits, otherwise the plan without the
// placements on refused nodes and without its evaluation updates (the worker replans and
// completes the evaluation then). refused names why each refused node was refused. All
// placements on a node are refused together, as the fit is of their sum.
func Evaluate(store *state.StateStore, req *structs.ApplyPlanResultsRequest) (*structs.ApplyPlanResultsRequest, map[string]string, int, error) {
	byNode := map[string][]*structs.Allocation{}
	var order []string
	for _, alloc := range req.AllocsPlaced {
		if _, ok := byNode[alloc.NodeID]; !ok {
			order = append(order, alloc.NodeID)
		}
		byNode[alloc.NodeID] = append(byNode[alloc.NodeID], alloc)
	}
	// What this plan stops makes room on its node, as it did when the plan was computed.
	stopped := map[string]bool{}
	for _, s := range req.AllocsStopped {
		stopped[s.AllocID] = true
	}
	// A preemption frees its victim's room only while the victim still runs on the node its
	// preemptor is placed on; otherwise the placement must fit without it (and is refused,
	// then replanned, when it does not). The FSM evicts a victim only together with the
	// placement that preempts it.
	placedOn := map[string]string{}
	for _, a := range req.AllocsPlaced {
		placedOn[a.ID] = a.NodeID
	}
	for _, p := range req.AllocsPreempted {
		victim, err := store.AllocByID(nil, p.AllocID)
		if err != nil {
			return nil, nil, 0, err
		}
		if victim != nil && !victim.TerminalStatus() && victim.NodeID == placedOn[p.PreemptedByAllocation] {
			stopped[victim.ID] = true
		}
	}
	refused := map[string]string{}
	refusedAllocs := 0
	for _, nodeID := range order {
		reason, err := nodeRefusal(store, nodeID, byNode[nodeID], stopped)
		if err != nil {
			return nil, nil, 0, err
		}
		if reason != "" {
			refused[nodeID] = reason
			refusedAllocs += len(byNode[nodeID])
		}
	}
	if refusedAllocs == 0 {
		return req, refused, 0, nil
	}
	partial := *req
	partial.AllocsPlaced = slices.DeleteFunc(slices.Clone(req.AllocsPlaced), func(a *structs.Allocation) bool {
		return refused[a.NodeID] != ""
	})
	partial.Evals = nil
	if len(partial.AllocsPlaced) == 0 && len(partial.AllocsUpdated) == 0 {
		// A deployment is written with the placements that carry its ID; with none left, the
		// replan decides it again.
		partial.Deployment = nil
	}
	return &partial, refused, refusedAllocs, nil
}

// nodeRefusal says why placed cannot go on the node in the latest state, "" when they can.
func nodeRefusal(store *state.StateStore, nodeID string, placed []*structs.Allocation, stopped map[string]bool) (string, error) {
	node, err := store.NodeByID(nil, nodeID)
	if err != nil {
		return "", err
	}
	switch {
	case node == nil:
		return "node not found", nil
	case node.Status != structs.NodeStatusReady:
		return "node is " + node.Status, nil
	case node.Drain || node.DrainStrategy != nil:
		return "node is draining", nil
	case node.SchedulingEligibility == structs.NodeSchedulingIneligible:
		return "node is ineligible", nil
	}
	onNode, err := store.AllocsByNode(nil, nodeID)
	if err != nil {
		return "", err
	}
	existing := slices.DeleteFunc(slices.Clone(onNode), func(a *structs.Allocation) bool { return stopped[a.ID] })
	if dim := scheduler.NodeFits(node, existing, placed); dim != "" {
		return "resources exhausted: " + dim, nil
	}
	return "", nil
}
