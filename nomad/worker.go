package nomad

import (
	"context"
	"fmt"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/go-uuid"
	"github.com/nomadfork/nomad/scheduler"
	"github.com/nomadfork/nomad/structs"
)

// maxPlacementsPerPlan bounds the allocations one evaluation places. A job's count is bounded
// by job_max_count, but a plan of that many allocations would hold them all in memory at once
// and make one Raft entry of them; past this bound the evaluation places a batch and leaves a
// pending follow-up evaluation to continue, behind the evaluations already waiting. A plan
// of 500 placements is a Raft entry of about 0.5 MB.
const maxPlacementsPerPlan = 500

// workerMaxAttempts is how many times the worker tries an evaluation before marking it failed,
// so one that cannot be applied does not hold up every other.
const workerMaxAttempts = 3

// worker processes evaluations on the leader, one at a time, oldest first. Each evaluation's
// plan and its new status go through Raft in one entry (ApplyPlanResults), so a leader change
// never leaves an evaluation marked done without its allocations, or the reverse.
type worker struct {
	srv      *Server
	failures map[string]int
	// capacitySeen is the highest index of the nodes and allocations tables at which
	// blocked evaluations were last retried: a node that joins or changes, or an allocation
	// that stops, may make room for them.
	capacitySeen uint64
}

// runWorker runs the worker until ctx ends (shutdown or loss of leadership). While the
// configuration says 0 schedulers it waits for a change.
func (s *Server) runWorker(ctx context.Context) {
	w := &worker{srv: s, failures: map[string]int{}}
	for ctx.Err() == nil {
		cfg, changed := s.workers.get()
		if cfg.NumSchedulers == 0 {
			select {
			case <-ctx.Done():
			case <-changed:
			}
			continue
		}
		if err := w.step(ctx, cfg, changed); err != nil {
			s.logger.Error("scheduling failed", "error", err)
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
}

// step processes the oldest pending evaluation; with none, it retries the blocked ones when
// the nodes or the allocations changed since their last try; with nothing to do, it waits for
// either to change. A cluster without nodes is no exception, as upstream: the evaluation
// completes, its deployment is made, and what cannot be placed waits in a blocked evaluation
// and the job summary's Queued count until a node registers.
func (w *worker) step(ctx context.Context, cfg WorkerPoolConfig, changed <-chan struct{}) error {
	store := w.srv.State()
	ws := memdb.NewWatchSet()
	ws.Add(store.AbandonCh())
	ws.Add(changed)
	if _, err := store.Nodes(ws, ""); err != nil {
		return err
	}
	pending, err := store.EvalsByStatus(ws, structs.EvalStatusPending)
	if err != nil {
		return err
	}
	// A delayed evaluation (a reschedule waiting for its delay) waits until it is due; the
	// earliest one not yet due wakes the worker.
	t := now()
	var nextDue time.Time
	for _, eval := range pending {
		if !cfg.takes(eval) {
			continue
		}
		if eval.WaitUntil.After(t) {
			if nextDue.IsZero() || eval.WaitUntil.Before(nextDue) {
				nextDue = eval.WaitUntil
			}
			continue
		}
		return w.processWithRetry(eval)
	}
	if !nextDue.IsZero() {
		due := make(chan struct{})
		timer := time.AfterFunc(nextDue.Sub(t), func() { close(due) })
		defer timer.Stop()
		ws.Add(due)
	}
	// Watched so that an allocation that stops (room on its node) wakes the worker too.
	if idx := max(store.Index("nodes"), store.WatchIndex(ws, "allocs")); idx > w.capacitySeen {
		blocked, err := store.EvalsByStatus(nil, structs.EvalStatusBlocked)
		if err != nil {
			return err
		}
		for _, eval := range blocked {
			if !cfg.takes(eval) {
				continue
			}
			if err := w.process(eval); err != nil {
				return err
			}
		}
		// Only once every blocked evaluation had its try: a failure retries them all.
		w.capacitySeen = idx
		return nil
	}
	_ = ws.WatchCtx(ctx)
	return nil
}

// processWithRetry processes a pending evaluation, marking it failed once it has failed
// workerMaxAttempts times.
func (w *worker) processWithRetry(eval *structs.Evaluation) error {
	err := w.process(eval)
	if err == nil {
		delete(w.failures, eval.ID)
		return nil
	}
	w.failures[eval.ID]++
	if w.failures[eval.ID] < workerMaxAttempts {
		return err
	}
	delete(w.failures, eval.ID)
	failed := eval.Copy()
	failed.Status = structs.EvalStatusFailed
	failed.StatusDescription = fmt.Sprintf("evaluation failed %d times: %v", workerMaxAttempts, err)
	failed.ModifyTime = now().UnixNano()
	if _, applyErr := w.srv.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{failed}}); applyErr != nil {
		return applyErr
	}
	return err
}

// process runs the scheduler for one evaluation against one point-in-time view of the state
// and applies its plan. A blocked evaluation that still cannot place anything is left as it
// is, unwritten.
func (w *worker) process(eval *structs.Evaluation) error {
	store := w.srv.State().PointInTime()
	job, err := store.JobByID(nil, eval.Namespace, eval.JobID)
	if err != nil {
		return err
	}
	// Register refuses such a job; one stored before the limit (or before it was lowered)
	// is not placed, only stopped, so that it cannot fill the state batch after batch.
	if job != nil && !job.Stop {
		if err := job.CheckMaxCount(w.srv.jobMaxCount()); err != nil {
			failed := eval.Copy()
			failed.Status = structs.EvalStatusFailed
			failed.StatusDescription = "not scheduled: " + err.Error() + "; scale the job down or stop it"
			failed.ModifyTime = now().UnixNano()
			_, err := w.srv.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{failed}})
			return err
		}
	}
	allocs, err := store.AllocsByJob(nil, eval.Namespace, eval.JobID)
	if err != nil {
		return err
	}
	nodes, err := store.Nodes(nil, "")
	if err != nil {
		return err
	}
	// What runs on each node uses its resources, whatever job it belongs to.
	onNodes := map[string][]*structs.Allocation{}
	for _, n := range nodes {
		onNode, err := store.AllocsByNode(nil, n.ID)
		if err != nil {
			return err
		}
		for _, a := range onNode {
			if !a.TerminalStatus() {
				onNodes[n.ID] = append(onNodes[n.ID], a)
			}
		}
	}
	latest, err := store.LatestDeploymentByJob(nil, eval.Namespace, eval.JobID)
	if err != nil {
		return err
	}
	// The ID and time a deployment created by this plan takes, fixed here so that the
	// scheduler stays a function of its input.
	deploymentID, err := uuid.GenerateUUID()
	if err != nil {
		return err
	}
	// A purged job (nil) only has allocations to stop: no pool to take an algorithm from.
	pool := ""
	if job != nil {
		pool = job.NodePool
	}
	plan, err := computePlan(scheduler.Input{Job: job, Allocs: allocs, Nodes: nodes, NodeAllocs: onNodes,
		MaxPlacements: maxPlacementsPerPlan, Algorithm: w.srv.schedulerAlgorithm(store, pool),
		Deployment: latest, DeploymentID: deploymentID, Now: now(), EvalPriority: eval.Priority,
		Preemption: w.srv.schedulerConfigIn(store).PreemptionConfig})
	if err != nil {
		// Retrying would fail the same way on the same state: fail this evaluation only, and
		// let the worker go on with the others.
		w.srv.logger.Error("scheduler failed", "eval_id", eval.ID, "error", err)
		failed := eval.Copy()
		failed.Status = structs.EvalStatusFailed
		failed.StatusDescription = err.Error()
		failed.ModifyTime = now().UnixNano()
		_, err := w.srv.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{failed}})
		return err
	}
	queued := 0
	for _, q := range plan.Queued {
		queued += q
	}
	wasBlocked := eval.Status == structs.EvalStatusBlocked
	if wasBlocked && queued > 0 && len(plan.Place) == 0 {
		return nil
	}

	t := now().UnixNano()
	req := &structs.ApplyPlanResultsRequest{UpdatedAt: t}
	if len(plan.Place) > 0 || len(plan.Update) > 0 || plan.Deployment != nil {
		req.Job = job
	}
	req.Deployment, req.DeploymentUpdates = plan.Deployment, plan.DeploymentUpdates
	for _, a := range plan.Place {
		if a.ID, err = uuid.GenerateUUID(); err != nil {
			return err
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
			blocked, err := newEval(evalJob(job, eval), structs.EvalTriggerQueuedAllocs, eval.Priority, t)
			if err != nil {
				return err
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
				if _, err := w.srv.raftApply(structs.EvalUpdateRequestType,
					&structs.EvalUpdateRequest{Evals: []*structs.Evaluation{blocked}}); err != nil {
					return err
				}
			} else {
				req.Evals = append(req.Evals, blocked)
			}
		}
	}
	if deferred > 0 {
		next, err := newEval(evalJob(job, eval), structs.EvalTriggerQueuedAllocs, eval.Priority, t)
		if err != nil {
			return err
		}
		next.StatusDescription = fmt.Sprintf("created to place the %d allocations left by evaluation %s", deferred, eval.ID)
		next.PreviousEval = eval.ID
		next.JobModifyIndex = eval.JobModifyIndex
		done.NextEval = next.ID
		req.Evals = append(req.Evals, next)
	}
	others, err := store.EvalsByJob(nil, eval.Namespace, eval.JobID)
	if err != nil {
		return err
	}
	// A failed allocation waits for its reschedule delay: one follow-up evaluation, due at
	// the earliest such delay, unless the job already has one due by then.
	if at := plan.RescheduleAt; !at.IsZero() && !followupDue(others, eval.ID, at) {
		next, err := newEval(evalJob(job, eval), structs.EvalTriggerRetryFailedAlloc, eval.Priority, t)
		if err != nil {
			return err
		}
		next.WaitUntil = at.UTC()
		next.StatusDescription = "created to reschedule failed allocations once their delay has passed"
		next.PreviousEval = eval.ID
		next.JobModifyIndex = eval.JobModifyIndex
		req.Evals = append(req.Evals, next)
	}
	if err := addPlanExtras(req, plan, job, eval, others, t); err != nil {
		return err
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
	_, err = w.srv.raftApply(structs.ApplyPlanResultsRequestType, req)
	return err
}

// followupDue reports whether the job has a pending evaluation other than self that is
// delayed to at or before at: a new follow-up would only duplicate it.
func followupDue(evals []*structs.Evaluation, self string, at time.Time) bool {
	for _, e := range evals {
		if e.ID != self && e.Status == structs.EvalStatusPending && !e.WaitUntil.IsZero() && !e.WaitUntil.After(at) {
			return true
		}
	}
	return false
}

// evalJob is the job an evaluation's follow-up names: the job itself, or, when it is gone,
// enough of it to make the evaluation.
func evalJob(job *structs.Job, eval *structs.Evaluation) *structs.Job {
	if job != nil {
		return job
	}
	return &structs.Job{ID: eval.JobID, Namespace: eval.Namespace, Type: eval.Type, Priority: eval.Priority}
}

// compute is the scheduler; tests replace it to make it fail.
var compute = scheduler.Compute

// computePlan runs the scheduler, turning a panic into an error: whatever the state holds,
// one evaluation that cannot be scheduled must not stop the leader's worker.
func computePlan(in scheduler.Input) (plan *scheduler.Plan, err error) {
	defer func() {
		if r := recover(); r != nil {
			plan, err = nil, fmt.Errorf("scheduler failed on this evaluation: %v", r)
		}
	}()
	return compute(in), nil
}
