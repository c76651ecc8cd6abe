package scheduler

import (
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// Reasons specific to deployments.
const (
	ReasonCanaryNotPromoted = "alloc not needed: canary of a deployment that did not complete"
)

// rollout is the deployment of the job's current version the plan works with: the stored one,
// or one this plan creates (Plan.Deployment) when a version first needs placing.
//
// The rules, per group whose update block has max_parallel > 0 (service jobs only):
//   - a change of anything but the count (and scaling) replaces an allocation: at most
//     max_parallel replacements are in flight (placed, health not yet known) at a time; the
//     deployment watcher asks for the next batch as allocations turn healthy;
//   - a count-only change updates allocations in place, without a restart; they join the
//     deployment and report their health again;
//   - with canary = N, the first N replacements are canaries placed beside the old
//     allocations, which all keep running until the canaries are promoted;
//   - new allocations (a count increase, replacing a failed one) are placed at once;
//   - a paused or failed deployment replaces nothing.
type rollout struct {
	dep   *structs.Deployment
	isNew bool
}

// running reports whether the deployment may move on: place canaries and replace allocations.
func (r *rollout) running() bool {
	return r != nil && r.dep.Status == structs.DeploymentStatusRunning
}

// startRollout finds the deployment of the job's current version, cancels an older active one,
// and prepares a new one when the version has none. The new one joins the plan only if one of
// its groups has something to roll out (see group.joinDeployment).
func startRollout(in Input, p *Plan) *rollout {
	job := in.Job
	d := in.Deployment
	if d != nil && d.JobCreateIndex != job.CreateIndex {
		d = nil // a deployment of an earlier job of the same ID
	}
	if d != nil && d.JobVersion == job.Version {
		return &rollout{dep: d}
	}
	if d != nil && d.Active() {
		p.DeploymentUpdates = append(p.DeploymentUpdates, &structs.DeploymentStatusUpdate{
			DeploymentID: d.ID, Status: structs.DeploymentStatusCancelled, StatusDescription: structs.DeploymentDescNewerJob})
	}
	if !job.HasUpdateStrategy() || in.DeploymentID == "" {
		return nil
	}
	now := in.Now.UnixNano()
	return &rollout{isNew: true, dep: &structs.Deployment{
		ID: in.DeploymentID, Namespace: job.Namespace, JobID: job.ID, JobVersion: job.Version,
		JobModifyIndex: job.ModifyIndex, JobSpecModifyIndex: job.JobModifyIndex, JobCreateIndex: job.CreateIndex,
		IsMultiregion: job.Multiregion != nil, TaskGroups: map[string]*structs.DeploymentState{},
		Status: structs.DeploymentStatusRunning, StatusDescription: structs.DeploymentDescRunning,
		EvalPriority: in.EvalPriority, CreateTime: now, ModifyTime: now,
	}}
}

// cancelOnStop cancels the job's active deployment when the job is stopped.
func cancelOnStop(in Input, p *Plan) {
	if d := in.Deployment; d != nil && in.Job != nil && d.JobCreateIndex == in.Job.CreateIndex && d.Active() {
		p.DeploymentUpdates = append(p.DeploymentUpdates, &structs.DeploymentStatusUpdate{
			DeploymentID: d.ID, Status: structs.DeploymentStatusCancelled, StatusDescription: structs.DeploymentDescStoppedJob})
	}
}

// finishRollout adds a new deployment to the plan when a group joined it.
func finishRollout(r *rollout, p *Plan) {
	if r == nil || !r.isNew || len(r.dep.TaskGroups) == 0 {
		return
	}
	for _, st := range r.dep.TaskGroups {
		if st.DesiredCanaries > 0 && !st.Promoted {
			r.dep.StatusDescription = structs.DeploymentDescRunningNeedsPromotion
			if st.AutoPromote {
				r.dep.StatusDescription = structs.DeploymentDescRunningAutoPromotion
			}
		}
	}
	p.Deployment = r.dep
}

// isCanary reports whether a is a canary not yet promoted.
func isCanary(a *structs.Allocation) bool {
	return a.DeploymentStatus != nil && a.DeploymentStatus.Canary
}

// joinDeployment decides whether this group takes part in a new deployment: when it has
// nothing running yet, or has allocations to update. count is how many allocations the group
// wants: its count, or for a system job its feasible nodes. It returns the group's state in
// the deployment, or nil.
func (g *group) joinDeployment(hadRunning bool, destructive, inplace, count int) *structs.DeploymentState {
	if g.roll == nil || g.strategy == nil {
		return nil
	}
	if !g.roll.isNew {
		return g.roll.dep.TaskGroups[g.name]
	}
	if count == 0 || (hadRunning && destructive+inplace == 0) {
		return nil
	}
	u := g.strategy
	st := &structs.DeploymentState{
		AutoRevert:   boolOf(u.AutoRevert),
		AutoPromote:  boolOf(u.AutoPromote),
		DesiredTotal: count,
	}
	if u.ProgressDeadline != nil && *u.ProgressDeadline > 0 {
		st.ProgressDeadline = *u.ProgressDeadline
		st.RequireProgressBy = time.Unix(0, g.roll.dep.CreateTime).UTC().Add(st.ProgressDeadline)
	}
	if u.Canary != nil && *u.Canary > 0 && destructive > 0 {
		st.DesiredCanaries = *u.Canary
		if g.system() {
			st.DesiredCanaries = systemCanaries(*u.Canary, intOf(u.MaxParallel), count, destructive)
		}
	}
	g.roll.dep.TaskGroups[g.name] = st
	return st
}

// rollOut plans the group's destructive updates under its deployment: canaries first, then
// at most max_parallel replacements in flight. It returns the name indexes of the stopped
// allocations, for the caller to place their replacements.
func (g *group) rollOut(destructive []*structs.Allocation, canaries int, inflight int) []int {
	st := g.dstate
	if st == nil || !g.roll.running() {
		return nil // paused, failed or finished: the old allocations keep running
	}
	if st.DesiredCanaries > 0 && !st.Promoted {
		for i := 0; i < st.DesiredCanaries-canaries && len(destructive) > 0; i++ {
			idx := destructive[i%len(destructive)].Index()
			if !g.placeOrCount(idx, 1) {
				break
			}
			g.tagLast(true)
		}
		return nil
	}
	limit := intOf(g.strategy.MaxParallel) - inflight
	var missing []int
	for _, a := range destructive {
		if limit <= 0 {
			break
		}
		g.replaceDestructively(a)
		missing = append(missing, a.Index())
		limit--
	}
	return missing
}

// tagLast makes the plan's last placement part of the group's deployment.
func (g *group) tagLast(canary bool) {
	if g.dstate == nil || len(g.plan.Place) == 0 || !g.roll.dep.Active() {
		return
	}
	a := g.plan.Place[len(g.plan.Place)-1]
	a.DeploymentID = g.roll.dep.ID
	if canary {
		a.DeploymentStatus = &api.AllocDeploymentStatus{Canary: true}
	}
}

func boolOf(b *bool) bool { return b != nil && *b }

func intOf(i *int) int {
	if i == nil {
		return 0
	}
	return *i
}

// systemCanaries is how many canaries a system job's update places: canary is a percentage
// of the feasible nodes (rounded up, so any percentage places at least one), at most
// max_parallel, as upstream documents, and at most the allocations there are to update.
func systemCanaries(percent, maxParallel, feasible, destructive int) int {
	n := (percent*feasible + 99) / 100
	return max(min(n, maxParallel, destructive), 0)
}

// rollOutSystem plans a system group's destructive updates under its deployment: each
// replacement goes to the node of the allocation it replaces. Until promotion only the
// canaries are placed (each replacing the old allocation on its node; the others keep
// running the old version); after it, at most max_parallel replacements are in flight, the
// deployment watcher asking for the next batch as they turn healthy. Outside a deployment
// (none for this version, as in a plan's dry run, or its deployment finished) everything is
// replaced at once.
func (g *group) rollOutSystem(destructive []*structs.Allocation, feasible map[string]*candidate, canaries, inflight int) {
	replace := func(a *structs.Allocation, canary bool) {
		g.replaceDestructively(a)
		g.placeOnTagged(feasible[a.NodeID], canary)
		delete(g.destroyed, a.Index()) // as in reconcileSystem: only a's node's placement names a
	}
	if g.dstate == nil {
		for _, a := range destructive {
			replace(a, false)
		}
		return
	}
	st := g.dstate
	if !g.roll.running() {
		return // paused, failed or finished: the old allocations keep running
	}
	if st.DesiredCanaries > 0 && !st.Promoted {
		for i := 0; i < st.DesiredCanaries-canaries && i < len(destructive); i++ {
			replace(destructive[i], true)
		}
		return
	}
	limit := intOf(g.strategy.MaxParallel) - inflight
	for _, a := range destructive {
		if limit <= 0 {
			break
		}
		replace(a, false)
		limit--
	}
}

// placeOnTagged places the group on c and, when it did, makes the placement part of the
// group's deployment.
func (g *group) placeOnTagged(c *candidate, canary bool) {
	n := len(g.plan.Place)
	g.placeOn(c)
	if len(g.plan.Place) > n {
		g.tagLast(canary)
	}
}
