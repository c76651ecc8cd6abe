package drainer

import (
	"context"
	"slices"
	"time"

	"github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/go-uuid"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// ApplyFunc writes one Raft entry: the leader's raftApply.
type ApplyFunc func(t structs.MessageType, req any) (uint64, error)

// Config is what a Drainer needs from the server.
type Config struct {
	// State returns the current state store (a snapshot restore replaces it).
	State  func() *state.StateStore
	Apply  ApplyFunc
	Logger hclog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// RetryInterval is the wait after a failed step; 0 is one second.
	RetryInterval time.Duration
}

// Drainer drains nodes for one leadership term.
type Drainer struct {
	cfg Config
}

// New returns a drainer; Run starts it.
func New(cfg Config) *Drainer {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.RetryInterval <= 0 {
		cfg.RetryInterval = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	return &Drainer{cfg: cfg}
}

// Run drains until ctx ends. It wakes when nodes or allocations change, or when a deadline
// or an allocation's min_healthy_time passes.
func (d *Drainer) Run(ctx context.Context) {
	for ctx.Err() == nil {
		store := d.cfg.State()
		ws := memdb.NewWatchSet()
		ws.Add(store.AbandonCh())
		store.WatchIndex(ws, "nodes")
		others := memdb.NewWatchSet()
		store.WatchIndex(others, "allocs")
		store.WatchIndex(others, "jobs")
		wake, draining, err := d.step(store.PointInTime())
		if draining || err != nil {
			// Allocations and jobs matter only while a node drains.
			for ch := range others {
				ws.Add(ch)
			}
		}
		wctx, cancel := ctx, context.CancelFunc(func() {})
		switch {
		case err != nil:
			d.cfg.Logger.Error("drain step failed", "error", err)
			wctx, cancel = context.WithTimeout(ctx, d.cfg.RetryInterval)
		case !wake.IsZero():
			wctx, cancel = context.WithDeadline(ctx, wake.Add(10*time.Millisecond))
		}
		_ = ws.WatchCtx(wctx)
		cancel()
	}
}

// maxMigratePerEntry bounds the allocations one Raft entry marks, so a deadline on a full node
// is several entries of bounded size rather than one of any size.
const maxMigratePerEntry = 500

// Step decides on one snapshot and writes the decision: the migrations with their
// evaluations in one entry, the completed drains in another. It returns when to look again
// without a change.
func (d *Drainer) Step(snap *state.StateStore) (time.Time, error) {
	wake, _, err := d.step(snap)
	return wake, err
}

func (d *Drainer) step(snap *state.StateStore) (wake time.Time, draining bool, err error) {
	now := d.cfg.Now()
	dec, err := Decide(snap, now)
	if err != nil {
		return time.Time{}, false, err
	}
	for batch := range slices.Chunk(dec.Migrate, maxMigratePerEntry) {
		req := &structs.AllocUpdateDesiredTransitionRequest{
			Allocs: map[string]*api.DesiredTransition{}, UpdatedAt: now.UnixNano(),
		}
		yes := true
		var jobs []*structs.Job
		for _, a := range batch {
			req.Allocs[a.ID] = &api.DesiredTransition{Migrate: &yes}
			id := structs.NamespacedID{Namespace: a.Namespace, ID: a.JobID}
			if job := dec.Jobs[id]; job != nil && !slices.Contains(jobs, job) {
				jobs = append(jobs, job)
			}
		}
		for _, job := range jobs {
			id, err := uuid.GenerateUUID()
			if err != nil {
				return time.Time{}, true, err
			}
			req.Evals = append(req.Evals, &structs.Evaluation{
				ID: id, Namespace: job.Namespace, Priority: job.Priority, Type: job.Type,
				TriggeredBy: structs.EvalTriggerNodeDrain, JobID: job.ID, JobModifyIndex: job.JobModifyIndex,
				Status: structs.EvalStatusPending, CreateTime: now.UnixNano(), ModifyTime: now.UnixNano(),
			})
		}
		d.cfg.Logger.Info("marking allocations for migration", "count", len(req.Allocs), "evals", len(req.Evals))
		if _, err := d.cfg.Apply(structs.AllocUpdateDesiredTransitionRequestType, req); err != nil {
			return time.Time{}, true, err
		}
	}
	if len(dec.Complete) > 0 {
		for id := range dec.Complete {
			d.cfg.Logger.Info("node drain complete", "node_id", id)
		}
		if _, err := d.cfg.Apply(structs.BatchNodeUpdateDrainRequestType, &structs.BatchNodeUpdateDrainRequest{
			Complete: dec.Complete, UpdatedAt: now.UnixNano(),
		}); err != nil {
			return time.Time{}, true, err
		}
	}
	return dec.Wake, dec.Draining, nil
}
