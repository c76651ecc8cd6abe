package worker

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	metrics "github.com/hashicorp/go-metrics"
	"github.com/hashicorp/go-uuid"
	"github.com/nomadfork/nomad/nomad/planapply"
	"github.com/nomadfork/nomad/scheduler"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// MaxPlacementsPerPlan bounds the allocations one evaluation places. A job's count is bounded
// by job_max_count, but a plan of that many allocations would hold them all in memory at once
// and make one Raft entry of them; past this bound the evaluation places a batch and leaves a
// pending follow-up evaluation to continue, behind the evaluations already waiting. A plan
// of 500 placements is a Raft entry of about 0.5 MB.
const MaxPlacementsPerPlan = 500

// maxPlanAttempts bounds how many times a worker plans one delivery of an evaluation when
// the plan applier refuses part of its plan (another worker took the room since its
// snapshot). Past it the delivery is nacked: the broker delivers it again later, and after
// its delivery limit it fails with a follow-up.
const maxPlanAttempts = 5

// Broker is what a worker needs of the leader's evaluation broker.
type Broker interface {
	Dequeue(ctx context.Context, queues []string, timeout time.Duration) (*structs.Evaluation, string, error)
	Ack(evalID, token string) error
	Nack(evalID, token string) error
	Touch(evalID, token string) error
}

// Backend is what a worker needs of the server: the broker, the state, the scheduler's input
// and run (shared with the plan endpoint, so a dry run places as the real run), Raft and the
// leader's clock.
type Backend interface {
	Broker() Broker
	State() *state.StateStore
	// JobMaxCount is server.job_max_count in force.
	JobMaxCount() int
	SchedulerInput(store *state.StateStore, job *structs.Job, namespace, jobID string) (scheduler.Input, error)
	// ComputePlan runs the scheduler, an error where it cannot schedule this input.
	ComputePlan(in scheduler.Input) (*scheduler.Plan, error)
	Apply(t structs.MessageType, msg any) (uint64, error)
	Now() time.Time
	Logger() hclog.Logger
}

// Worker is one of the leader's scheduling workers. Workers run in parallel, each taking
// evaluations from the broker (which hands out at most one per job at a time), planning on
// its own point-in-time snapshot, and submitting the plan to the plan applier, which commits
// what still fits the latest state. Each evaluation's plan and its new status go through
// Raft in one entry (ApplyPlanResults), so a leader change never leaves an evaluation marked
// done without its allocations, or the reverse.
type Worker struct {
	srv     Backend
	applier *planapply.Applier
}

// New is a worker that submits its plans to applier.
func New(srv Backend, applier *planapply.Applier) *Worker {
	return &Worker{srv: srv, applier: applier}
}

// Run runs the pool's configured number of workers until ctx ends (shutdown or loss of
// leadership). A configuration change (the agent API) stops the workers after the
// evaluation each is processing and starts the new number; 0 runs none.
func (p *Pool) Run(ctx context.Context, srv Backend, applier *planapply.Applier) {
	for ctx.Err() == nil {
		cfg, changed, wctx, cancel := p.startGeneration(ctx)
		var wg sync.WaitGroup
		for range cfg.NumSchedulers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				New(srv, applier).run(wctx, cfg.EnabledSchedulers)
			}()
		}
		select {
		case <-ctx.Done():
		case <-changed:
		}
		cancel()
		wg.Wait()
	}
}

// run takes evaluations of the scheduler types until ctx ends. A processed evaluation is
// acknowledged; one whose processing failed is nacked, for the broker to deliver again.
func (w *Worker) run(ctx context.Context, schedulers []string) {
	broker := w.srv.Broker()
	for ctx.Err() == nil {
		start := time.Now()
		eval, token, err := broker.Dequeue(ctx, schedulers, 0)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			// Disabled (paused by the scheduler configuration): look again shortly.
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
			continue
		}
		metrics.MeasureSince([]string{"nomad", "worker", "dequeue_eval"}, start)
		if err := w.Handle(ctx, eval, token); err != nil {
			if ctx.Err() != nil {
				return // the next leader delivers it again from the state
			}
			w.srv.Logger().Error("scheduling failed", "eval_id", eval.ID, "error", err)
			if err := broker.Nack(eval.ID, token); err != nil {
				w.srv.Logger().Debug("nack of evaluation refused", "eval_id", eval.ID, "error", err)
			}
			continue
		}
		if err := broker.Ack(eval.ID, token); err != nil {
			w.srv.Logger().Debug("ack of evaluation refused", "eval_id", eval.ID, "error", err)
		}
	}
}

// Handle processes one delivery. The evaluation is read back from the worker's snapshot:
// a delivery is at least once, and one processed (or deleted) since it was queued is done.
// The caller acknowledges the delivery, or nacks it on an error.
func (w *Worker) Handle(ctx context.Context, delivered *structs.Evaluation, token string) error {
	store, err := w.snapshotMinIndex(ctx, delivered.ModifyIndex)
	if err != nil {
		return err
	}
	eval, err := store.EvalByID(nil, delivered.ID)
	if err != nil {
		return err
	}
	if eval == nil || eval.TerminalStatus() {
		return nil
	}
	for attempt := 1; ; attempt++ {
		res, err := w.process(ctx, store, eval)
		if err != nil || res == nil || res.RefusedAllocs == 0 {
			return err
		}
		if attempt >= maxPlanAttempts {
			return fmt.Errorf("plan refused %d times (last: %d placements on %d nodes)", attempt, res.RefusedAllocs, len(res.Refused))
		}
		// Part of the plan was committed; plan the rest again on a state that holds it.
		if store, err = w.snapshotMinIndex(ctx, res.RefreshIndex); err != nil {
			return err
		}
		if eval, err = store.EvalByID(nil, delivered.ID); err != nil || eval == nil || eval.TerminalStatus() {
			return err
		}
		_ = w.srv.Broker().Touch(delivered.ID, token)
	}
}

// snapshotMinIndex returns a point-in-time view of the state at index or later. On the
// leader the state is there already (the broker is fed after the FSM applied the entry,
// and the applier answers after its entry is applied); the wait is bounded all the same.
func (w *Worker) snapshotMinIndex(ctx context.Context, index uint64) (*state.StateStore, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		store := w.srv.State().PointInTime()
		if store.LatestIndex() >= index {
			return store, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("state did not reach index %d (at %d)", index, store.LatestIndex())
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// failEval marks eval failed with reason, through Raft.
func (w *Worker) failEval(eval *structs.Evaluation, reason string) error {
	failed := eval.Copy()
	failed.Status = structs.EvalStatusFailed
	failed.StatusDescription = reason
	failed.ModifyTime = w.srv.Now().UnixNano()
	_, err := w.srv.Apply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{failed}})
	return err
}

// process runs the scheduler for one evaluation against one point-in-time view of the state
// and submits its plan to the applier, returning what the applier did with it (nil when
// nothing was submitted). A blocked evaluation that still cannot place anything is left as
// it is, unwritten.
func (w *Worker) process(ctx context.Context, store *state.StateStore, eval *structs.Evaluation) (*planapply.Result, error) {
	job, err := store.JobByID(nil, eval.Namespace, eval.JobID)
	if err != nil {
		return nil, err
	}
	// Register refuses such a job; one stored before the limit (or before it was lowered)
	// is not placed, only stopped, so that it cannot fill the state batch after batch.
	if job != nil && !job.Stop {
		if err := job.CheckMaxCount(w.srv.JobMaxCount()); err != nil {
			return nil, w.failEval(eval, "not scheduled: "+err.Error()+"; scale the job down or stop it")
		}
	}
	in, err := w.srv.SchedulerInput(store, job, eval.Namespace, eval.JobID)
	if err != nil {
		return nil, err
	}
	// The ID and time a deployment created by this plan takes, fixed here so that the
	// scheduler stays a function of its input.
	if in.DeploymentID, err = uuid.GenerateUUID(); err != nil {
		return nil, err
	}
	in.Now = w.srv.Now()
	in.MaxPlacements = MaxPlacementsPerPlan
	in.EvalPriority = eval.Priority
	plan, err := w.srv.ComputePlan(in)
	if err != nil {
		// Retrying would fail the same way on the same state: fail this evaluation only, and
		// let the worker go on with the others.
		w.srv.Logger().Error("scheduler failed", "eval_id", eval.ID, "error", err)
		return nil, w.failEval(eval, err.Error())
	}
	queued := 0
	for _, q := range plan.Queued {
		queued += q
	}
	wasBlocked := eval.Status == structs.EvalStatusBlocked
	if wasBlocked && queued > 0 && len(plan.Place) == 0 {
		return nil, nil
	}

	t := w.srv.Now().UnixNano()
	req := &structs.ApplyPlanResultsRequest{UpdatedAt: t}
	if len(plan.Place) > 0 || len(plan.Update) > 0 || plan.Deployment != nil {
		req.Job = job
	}
	req.Deployment, req.DeploymentUpdates = plan.Deployment, plan.DeploymentUpdates
	for _, a := range plan.Place {
		if a.ID, err = uuid.GenerateUUID(); err != nil {
			return nil, err
		}
		a.EvalID = eval.ID
		a.CreateTime, a.ModifyTime = t, t
		// The FSM sets the job from req.Job: the entry carries it once.
		a.Job = nil
		req.AllocsPlaced = append(req.AllocsPlaced, a)
	}
	for _, a := range plan.Update {
		req.AllocsUpdated = append(req.AllocsUpdated, a.ID)
	}
	for _, stop := range plan.Stop {
		req.AllocsStopped = append(req.AllocsStopped, &structs.AllocStopUpdate{AllocID: stop.Alloc.ID, DesiredDescription: stop.Reason})
	}

	done := eval.Copy()
	done.Status = structs.EvalStatusComplete
	done.StatusDescription = ""
	done.ModifyTime = t
	done.QueuedAllocations = plan.Queued
	// Clients (upstream's "job run" among them) follow the deployment an evaluation started
	// or placed into through this field, so that a failing task does not look finished.
	if plan.Deployment != nil {
		done.DeploymentID = plan.Deployment.ID
	} else {
		for _, a := range plan.Place {
			if a.DeploymentID != "" {
				done.DeploymentID = a.DeploymentID
				break
			}
		}
	}
	deferred := plan.DeferredTotal()
	if deferred > 0 {
		// What waits for the follow-up is queued too, as far as the job's summary goes.
		done.QueuedAllocations = map[string]int{}
		for name, q := range plan.Queued {
			done.QueuedAllocations[name] = q
		}
		for name, d := range plan.Deferred {
			done.QueuedAllocations[name] += d
		}
	}
	done.SnapshotIndex = store.LatestIndex()
	done.FailedTGAllocs = nil
	if len(plan.Failed) > 0 {
		done.FailedTGAllocs = map[string]any{}
		for name, m := range plan.Failed {
			done.FailedTGAllocs[name] = m
		}
	}
	req.Evals = []*structs.Evaluation{done}
	if queued > 0 {
		if wasBlocked {
			// Still waiting for room: it stays the job's blocked evaluation.
			done.Status = structs.EvalStatusBlocked
		} else {
			blocked, err := NewEval(EvalJob(job, eval), structs.EvalTriggerQueuedAllocs, eval.Priority, t)
			if err != nil {
				return nil, err
			}
			blocked.Status = structs.EvalStatusBlocked
			blocked.StatusDescription = "created to place remaining allocations"
			blocked.PreviousEval = eval.ID
			blocked.JobModifyIndex = eval.JobModifyIndex
			done.BlockedEval = blocked.ID
			if len(req.AllocsPlaced)+len(req.AllocsUpdated)+len(req.AllocsStopped) == 0 && deferred == 0 {
				// Nothing placed: the blocked evaluation is its own entry, before the one that
				// completes this evaluation, as upstream's worker writes them (the official
				// client's event stream tests expect one evaluation event per entry). Should
				// the second entry never be applied, this evaluation is processed again and
				// the new blocked one supersedes this one.
				if _, err := w.srv.Apply(structs.EvalUpdateRequestType,
					&structs.EvalUpdateRequest{Evals: []*structs.Evaluation{blocked}}); err != nil {
					return nil, err
				}
			} else {
				req.Evals = append(req.Evals, blocked)
			}
		}
	}
	if deferred > 0 {
		next, err := NewEval(EvalJob(job, eval), structs.EvalTriggerQueuedAllocs, eval.Priority, t)
		if err != nil {
			return nil, err
		}
		next.StatusDescription = fmt.Sprintf("created to place the %d allocations left by evaluation %s", deferred, eval.ID)
		next.PreviousEval = eval.ID
		next.JobModifyIndex = eval.JobModifyIndex
		done.NextEval = next.ID
		req.Evals = append(req.Evals, next)
	}
	others, err := store.EvalsByJob(nil, eval.Namespace, eval.JobID)
	if err != nil {
		return nil, err
	}
	// A failed allocation waits for its reschedule delay: one follow-up evaluation, due at
	// the earliest such delay, unless the job already has one due by then.
	if at := plan.RescheduleAt; !at.IsZero() && !followupDue(others, eval.ID, at) {
		next, err := NewEval(EvalJob(job, eval), structs.EvalTriggerRetryFailedAlloc, eval.Priority, t)
		if err != nil {
			return nil, err
		}
		next.WaitUntil = at.UTC()
		next.StatusDescription = "created to reschedule failed allocations once their delay has passed"
		next.PreviousEval = eval.ID
		next.JobModifyIndex = eval.JobModifyIndex
		req.Evals = append(req.Evals, next)
	}
	if err := addPlanExtras(req, plan, job, eval, others, t); err != nil {
		return nil, err
	}
	// This evaluation saw the whole job: earlier blocked ones of the job are superseded.
	for _, other := range others {
		if other.ID == eval.ID || other.Status != structs.EvalStatusBlocked {
			continue
		}
		canceled := other.Copy()
		canceled.Status = structs.EvalStatusCancelled
		canceled.StatusDescription = "superseded by evaluation " + eval.ID
		canceled.ModifyTime = t
		req.Evals = append(req.Evals, canceled)
	}
	start := time.Now()
	res, err := w.applier.Submit(ctx, planapply.Plan{Req: req, SnapshotIndex: store.LatestIndex()})
	metrics.MeasureSince([]string{"nomad", "plan", "submit"}, start)
	return res, err
}
