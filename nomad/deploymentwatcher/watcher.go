package deploymentwatcher

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/go-uuid"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// Backend is what the watcher needs of the server.
type Backend interface {
	// State is the current state store (it is replaced on snapshot restore).
	State() *state.StateStore
	// Apply writes one request through Raft.
	Apply(t structs.MessageType, req any) (uint64, error)
	// Now is the leader's clock.
	Now() time.Time
}

// Watcher moves the running deployments on. Create one per leadership term.
type Watcher struct {
	b      Backend
	logger hclog.Logger
	// evaluated is the number of healthy allocations of each deployment at its last
	// follow-up evaluation: an evaluation is made when more are healthy, to place the next
	// batch.
	evaluated map[string]int
}

// New returns a watcher.
func New(b Backend, logger hclog.Logger) *Watcher {
	return &Watcher{b: b, logger: logger.Named("deployment_watcher"), evaluated: map[string]int{}}
}

// errRetryPause is how long the watcher waits after a failed write before reading again.
const errRetryPause = time.Second

// Run watches until ctx ends. It reads the deployments and their allocations, acts on what
// changed, and sleeps until they change again or the next progress deadline passes.
func (w *Watcher) Run(ctx context.Context) {
	for ctx.Err() == nil {
		ws := memdb.NewWatchSet()
		next, err := w.look(ws)
		if err != nil {
			w.logger.Error("deployment watcher pass failed", "error", err)
			next = w.b.Now().Add(errRetryPause)
		}
		if !next.IsZero() {
			wctx, cancel := context.WithDeadline(ctx, next)
			_ = ws.WatchCtx(wctx)
			cancel()
			continue
		}
		_ = ws.WatchCtx(ctx)
	}
}

// look decides every running deployment from one point-in-time view of the state, so a write
// that lands while it runs (a client's health update, another leader duty) is seen whole by
// the next look, never half by this one: a decision never pairs a deployment with a job or
// versions read at another index. ws fires when anything read changes, or the store is
// replaced by a restore.
func (w *Watcher) look(ws memdb.WatchSet) (time.Time, error) {
	view := w.b.State().PointInTime()
	ws.Add(view.AbandonCh())
	return w.pass(view, ws)
}

// pass handles every running deployment once and returns when the watcher must look again
// without a state change (the earliest progress deadline), zero for never.
func (w *Watcher) pass(store *state.StateStore, ws memdb.WatchSet) (time.Time, error) {
	deployments, err := store.Deployments(ws, structs.AllNamespacesSentinel, "")
	if err != nil {
		return time.Time{}, err
	}
	var next time.Time
	seen := map[string]bool{}
	for _, d := range deployments {
		if d.Status != structs.DeploymentStatusRunning {
			continue
		}
		seen[d.ID] = true
		deadline, err := w.handle(store, ws, d)
		if err != nil {
			return time.Time{}, fmt.Errorf("deployment %s: %w", d.ID, err)
		}
		if !deadline.IsZero() && (next.IsZero() || deadline.Before(next)) {
			next = deadline
		}
	}
	for id := range w.evaluated {
		if !seen[id] {
			delete(w.evaluated, id)
		}
	}
	return next, nil
}

// groupDone reports whether a group has all its allocations healthy and nothing to promote.
func groupDone(st *structs.DeploymentState) bool {
	return st.HealthyAllocs >= st.DesiredTotal && (st.DesiredCanaries == 0 || st.Promoted)
}

// awaitingPromotion reports whether a group's canaries are all healthy and wait to be promoted.
func awaitingPromotion(st *structs.DeploymentState) bool {
	return st.DesiredCanaries > 0 && !st.Promoted && st.HealthyAllocs >= st.DesiredCanaries
}

// handle decides one running deployment: fail it (unhealthy allocations, a missed progress
// deadline), promote its canaries (auto_promote), mark it successful, or ask the scheduler
// for the next batch. It returns the earliest progress deadline still ahead.
func (w *Watcher) handle(store *state.StateStore, ws memdb.WatchSet, d *structs.Deployment) (time.Time, error) {
	now := w.b.Now()
	job, err := store.JobByID(ws, d.Namespace, d.JobID)
	if err != nil || job == nil {
		return time.Time{}, err // a purged job takes its deployments with it
	}
	var next time.Time
	healthy, unhealthy, done, autoRevert := 0, false, true, false
	autoPromote, promotable := true, false
	for _, st := range d.TaskGroups {
		healthy += st.HealthyAllocs
		autoRevert = autoRevert || st.AutoRevert
		if st.UnhealthyAllocs > 0 {
			unhealthy = true
		}
		if !groupDone(st) {
			done = false
		}
		if st.DesiredCanaries > 0 && !st.Promoted {
			autoPromote = autoPromote && st.AutoPromote
			promotable = true
			if !awaitingPromotion(st) {
				autoPromote = false
			}
		}
		if groupDone(st) || awaitingPromotion(st) || st.ProgressDeadline == 0 || st.RequireProgressBy.IsZero() {
			continue
		}
		if !now.Before(st.RequireProgressBy) {
			return time.Time{}, w.fail(store, d, job, structs.DeploymentDescProgressDeadline, autoRevertOf(d))
		}
		if next.IsZero() || st.RequireProgressBy.Before(next) {
			next = st.RequireProgressBy
		}
	}
	switch {
	case unhealthy:
		return time.Time{}, w.fail(store, d, job, structs.DeploymentDescFailedAllocations, autoRevert)
	case done:
		_, err := w.b.Apply(structs.DeploymentStatusUpdateRequestType, &structs.DeploymentStatusUpdateRequest{
			DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: d.ID, Status: structs.DeploymentStatusSuccessful,
				StatusDescription: structs.DeploymentDescSuccessful},
			UpdatedAt: now.UnixNano(),
		})
		return time.Time{}, err
	case promotable && autoPromote:
		eval, err := w.newEval(job, d)
		if err != nil {
			return time.Time{}, err
		}
		if _, err := w.b.Apply(structs.DeploymentPromoteRequestType, &structs.DeploymentPromoteRequest{
			DeploymentID: d.ID, All: true, Eval: eval, UpdatedAt: now.UnixNano()}); err != nil {
			return time.Time{}, err
		}
		w.evaluated[d.ID] = healthy // the promotion carries its evaluation
		return time.Time{}, nil
	}
	// A new leader starts from 0: one evaluation catches up on what healthy allocations
	// the previous leader may not have acted on.
	if healthy > w.evaluated[d.ID] {
		eval, err := w.newEval(job, d)
		if err != nil {
			return time.Time{}, err
		}
		if _, err := w.b.Apply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{eval}}); err != nil {
			return time.Time{}, err
		}
		w.evaluated[d.ID] = healthy
	}
	return next, nil
}

func autoRevertOf(d *structs.Deployment) bool {
	for _, st := range d.TaskGroups {
		if st.AutoRevert {
			return true
		}
	}
	return false
}

// fail marks the deployment failed, with an evaluation, and, when its groups ask for it,
// registers the job's latest stable version again in the same entry.
func (w *Watcher) fail(store *state.StateStore, d *structs.Deployment, job *structs.Job, desc string, autoRevert bool) error {
	req := &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: d.ID, Status: structs.DeploymentStatusFailed, StatusDescription: desc},
		UpdatedAt:        w.b.Now().UnixNano(),
	}
	if autoRevert {
		stable, err := latestStable(store, job, d.JobVersion)
		if err != nil {
			return err
		}
		switch {
		case stable == nil:
			req.DeploymentUpdate.StatusDescription = structs.DeploymentDescNoRollback(desc)
		case !state.SpecChanged(stable, job):
			// The failing job is the stable spec already (a revert that failed too):
			// reverting again would loop.
			req.DeploymentUpdate.StatusDescription = structs.DeploymentDescRollbackNoop(desc, stable.Version)
		default:
			req.DeploymentUpdate.StatusDescription = structs.DeploymentDescRollback(desc, stable.Version)
			revert := stable.Copy()
			revert.VersionTag = nil
			revert.Stop = false
			revert.SubmitTime = w.b.Now().UnixNano()
			req.Job = revert
			job = revert
		}
	}
	eval, err := w.newEval(job, d)
	if err != nil {
		return err
	}
	req.Eval = eval
	w.logger.Info("deployment failed", "deployment_id", d.ID, "job_id", d.JobID, "reason", req.DeploymentUpdate.StatusDescription)
	_, err = w.b.Apply(structs.DeploymentStatusUpdateRequestType, req)
	return err
}

// latestStable is the newest stable version of job other than version, nil when none is kept.
func latestStable(store *state.StateStore, job *structs.Job, version uint64) (*structs.Job, error) {
	versions, err := store.JobVersionsByID(nil, job.Namespace, job.ID)
	if err != nil {
		return nil, err
	}
	for _, v := range versions { // newest first
		if v.Stable && v.Version != version {
			return v, nil
		}
	}
	return nil, nil
}

func (w *Watcher) newEval(job *structs.Job, d *structs.Deployment) (*structs.Evaluation, error) {
	id, err := uuid.GenerateUUID()
	if err != nil {
		return nil, err
	}
	t := w.b.Now().UnixNano()
	priority := d.EvalPriority
	if priority == 0 {
		priority = job.Priority
	}
	return &structs.Evaluation{
		ID: id, Namespace: job.Namespace, Priority: priority, Type: job.Type,
		TriggeredBy: structs.EvalTriggerDeploymentWatcher, JobID: job.ID, JobModifyIndex: job.JobModifyIndex,
		DeploymentID: d.ID, Status: structs.EvalStatusPending, CreateTime: t, ModifyTime: t,
	}, nil
}
