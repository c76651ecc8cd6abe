package scheduler

import (
	"maps"
	"reflect"
	"slices"
	"sort"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// Reasons an allocation is stopped; they become its DesiredDescription.
const (
	ReasonJobStopped   = "alloc not needed: job stopped"
	ReasonJobPurged    = "alloc not needed: job purged"
	ReasonCountReduced = "alloc not needed: group count reduced"
	ReasonGroupRemoved = "alloc not needed: group removed from job"
	ReasonReplaced     = "alloc replaced by a new version of the job"
	ReasonLost         = "alloc lost: its node is down"
	ReasonNodeRemoved  = "alloc not needed: node no longer eligible"
	ReasonMigrating    = "alloc is being migrated"
)

// Input is what the scheduler decides from.
type Input struct {
	// Job is the job's current version; nil when it was purged.
	Job *structs.Job
	// Allocs are every allocation of the job.
	Allocs []*structs.Allocation
	// Nodes are every node; Compute filters them.
	Nodes []*structs.Node
	// NodeAllocs are the allocations of every job on each node that are not terminal: what
	// uses the node's CPU, memory, disk and ports. Nil counts nothing.
	NodeAllocs map[string][]*structs.Allocation
	// NodeLoad counts the running allocations of every job on each node, a tie-break among
	// nodes that score the same. Nil counts NodeAllocs.
	NodeLoad map[string]int
	// Algorithm is the scheduler configuration's scheduler_algorithm: "binpack" (the
	// default) fills nodes, "spread" prefers the emptiest.
	Algorithm string
	// MaxPlacements bounds the allocations one plan places, so that the memory and the Raft
	// entry of a plan stay bounded whatever the job's count; what is left over is counted in
	// Plan.Deferred for a later plan. 0 places everything.
	MaxPlacements int
	// Deployment is the job's latest deployment, nil when it has none.
	Deployment *structs.Deployment
	// DeploymentID is the ID a deployment this plan creates takes, and Now its creation time;
	// the caller fixes both, so that the scheduler stays a function of its input.
	DeploymentID string
	Now          time.Time
	// EvalPriority is the priority of the evaluation being processed.
	EvalPriority int
	// Preemption is the scheduler configuration's preemption_config: whether a job of each
	// type may evict allocations of lower-priority jobs to make room (preempt.go).
	Preemption structs.PreemptionConfig
}

// Stop is an allocation to stop and why.
type Stop struct {
	Alloc  *structs.Allocation
	Reason string
}

// Plan is what Compute decided. Allocations in Place have no ID, EvalID or times yet.
type Plan struct {
	Place []*structs.Allocation
	// Update are allocations that keep running but move to the job's current version.
	Update []*structs.Allocation
	Stop   []Stop
	// Queued has an entry for every group of a job that runs: how many of its allocations
	// could not be placed.
	Queued map[string]int
	// Failed explains, per group with queued allocations, why no node took them.
	Failed map[string]*api.AllocationMetric
	// Deferred counts, per group, the allocations that could be placed but were left for a
	// later plan because this one reached Input.MaxPlacements.
	Deferred map[string]int
	// Deployment is a deployment the plan creates, nil when none. Placements of its groups
	// carry its ID.
	Deployment *structs.Deployment
	// DeploymentUpdates cancel the job's earlier deployments (a newer version, a stop).
	DeploymentUpdates []*structs.DeploymentStatusUpdate
	// RescheduleAt is when the earliest failed allocation that waits for its reschedule
	// delay may be replaced: the caller makes a follow-up evaluation for then. Zero when none.
	RescheduleAt time.Time
	// Followups are the other follow-up evaluations the plan needs, by trigger
	// (structs.EvalTrigger*): when the earliest unknown allocation's lost_after passes
	// (max-disconnect-timeout), when a system job's next staggered batch is due
	// (rolling-update). The caller makes one delayed evaluation per entry.
	Followups map[string]time.Time
	// NodePreemptions are allocations of lower-priority jobs evicted, per node, to make
	// room for placements of this plan; each such placement lists them in its
	// PreemptedAllocations.
	NodePreemptions map[string][]*structs.Allocation
	// Lost are unknown allocations whose node stayed disconnected past their group's
	// lost_after: they become lost and stopped (and are replaced by this plan).
	Lost []*structs.Allocation
	// maxPlace is Input.MaxPlacements.
	maxPlace int
}

// full reports whether the plan may place no more allocations.
func (p *Plan) full() bool { return p.maxPlace > 0 && len(p.Place) >= p.maxPlace }

// DeferredTotal is the number of allocations left for a later plan.
func (p *Plan) DeferredTotal() int {
	n := 0
	for _, d := range p.Deferred {
		n += d
	}
	return n
}

// IsNoOp reports whether the plan changes no allocation.
func (p *Plan) IsNoOp() bool {
	return len(p.Place) == 0 && len(p.Update) == 0 && len(p.Stop) == 0 && p.Deployment == nil && len(p.DeploymentUpdates) == 0 &&
		len(p.NodePreemptions) == 0 && len(p.Lost) == 0
}

// noteFollowup keeps, per trigger, the earliest time a follow-up evaluation is needed.
func (p *Plan) noteFollowup(trigger string, at time.Time) {
	if p.Followups == nil {
		p.Followups = map[string]time.Time{}
	}
	if cur, ok := p.Followups[trigger]; !ok || at.Before(cur) {
		p.Followups[trigger] = at
	}
}

// Preempted lists every allocation the plan preempts, ordered by node then ID.
func (p *Plan) Preempted() []*structs.Allocation {
	var out []*structs.Allocation
	nodes := slices.Sorted(maps.Keys(p.NodePreemptions))
	for _, n := range nodes {
		out = append(out, p.NodePreemptions[n]...)
	}
	return out
}

// Compute reconciles the job with its allocations and returns the plan that does it. It
// never panics on what it reads: a malformed job or node makes nodes infeasible, not errors.
func Compute(in Input) *Plan {
	p := &Plan{Queued: map[string]int{}, Failed: map[string]*api.AllocationMetric{}, Deferred: map[string]int{},
		maxPlace: in.MaxPlacements}
	job := in.Job
	allocs := sortedAllocs(in.Allocs)
	if job == nil || job.Stop {
		reason := ReasonJobPurged
		if job != nil {
			reason = ReasonJobStopped
			cancelOnStop(in, p)
		}
		for _, a := range allocs {
			if a.DesiredStatus == structs.AllocDesiredStatusRun {
				p.Stop = append(p.Stop, Stop{Alloc: a, Reason: reason})
			}
		}
		return p
	}
	st := newState(in, p)
	roll := startRollout(in, p)

	// Allocations of groups the job no longer has are stopped; the rest are handled by group.
	byGroup := map[string][]*structs.Allocation{}
	for _, a := range allocs {
		if a.DesiredStatus != structs.AllocDesiredStatusRun {
			continue
		}
		if !a.ClientTerminalStatus() {
			st.jobOnNode[a.NodeID]++
		}
		if job.LookupTaskGroup(a.TaskGroup) == nil {
			st.stop(a, ReasonGroupRemoved)
			continue
		}
		byGroup[a.TaskGroup] = append(byGroup[a.TaskGroup], a)
	}
	for _, tg := range job.TaskGroups {
		if tg == nil || tg.Name == nil {
			continue
		}
		g := &group{st: st, plan: p, job: job, tg: tg, name: *tg.Name, roll: roll, strategy: job.UpdateStrategyFor(tg)}
		g.reconcile(byGroup[g.name])
	}
	finishRollout(roll, p)
	for name, q := range p.Queued {
		if q == 0 {
			delete(p.Failed, name)
		}
	}
	return p
}

// group reconciles one task group.
type group struct {
	st   *state
	plan *Plan
	job  *structs.Job
	tg   *api.TaskGroup
	name string
	// holds is assignPorts' scratch, reused from one candidate node to the next.
	holds portHolds
	// roll is the deployment of the job's version, strategy the group's update block (nil:
	// updated all at once), dstate the group's state in the deployment (nil: not in it).
	roll     *rollout
	strategy *api.UpdateStrategy
	dstate   *structs.DeploymentState
	// onNode counts this group's allocations per node, to spread the group.
	onNode map[string]int
	// cands are the nodes that pass the group's static checks, filled on first use, with the
	// metric explaining what was filtered.
	cands  []*candidate
	cursor int // where the next placement's scan of cands starts
	// failedOn are the nodes each name index failed on; penalised holds those of the
	// placement being ranked.
	failedOn  map[int][]string
	penalised []string
	metric    *api.AllocationMetric
	ask       *ask
	// constraints are the job's, the group's and its tasks', in that order; props counts the
	// group's or the job's allocations by property value, per distinct_property and spread.
	constraints []*api.Constraint
	affinities  []*api.Affinity
	spreads     []*api.Spread
	jobLevel    map[*api.Constraint]bool
	props       map[string]map[string]int
	propTargets []propTarget
	// spreadVals counts, per spread, the distinct values its attribute takes on candidates;
	// spreadCounts are its allocations by value (propCounts), looked up once.
	spreadVals   []int
	spreadCounts []map[string]int
	// spreadBuckets is the number of distinct tuples of spread values among the candidates,
	// counted on the first placement.
	spreadBuckets int
	// rescheduled are the failed allocations replaced by this plan, by name index: the
	// replacement links to them and carries their reschedule tracker.
	rescheduled map[int]*structs.Allocation
	// replaced are allocations that a later allocation already replaced (named as the
	// previous one in its reschedule tracker).
	replaced map[string]bool
	// disconnected are unknown allocations, by name index, that a placement of this plan
	// replaces while their node is disconnected: the replacement names them as its previous
	// allocation, so that the reconcile strategy finds the pair should they come back.
	disconnected map[int]*structs.Allocation
	// destroyed are the allocations this plan stops for a replacement, by name index (a
	// destructive update, a migration off a draining node, or a lost allocation, see
	// replacingLost): the replacement names them as its previous allocation, as upstream, so
	// that the state links them back (NextAllocation) and a client whose group has a sticky or
	// migrating ephemeral disk hands their alloc/data over; with such a disk, an updated one's
	// replacement also goes to the same node when it fits there.
	destroyed map[int]*structs.Allocation
}

func (g *group) system() bool {
	return g.job.Type == structs.JobTypeSystem || g.job.Type == structs.JobTypeSysBatch
}

func (g *group) batch() bool {
	return g.job.Type == structs.JobTypeBatch || g.job.Type == structs.JobTypeSysBatch
}

// reconcile sorts the group's allocations (DesiredStatus run, sorted by name index) into what
// keeps running, what is stopped and what is missing, and plans each.
func (g *group) reconcile(allocs []*structs.Allocation) {
	g.plan.Queued[g.name] = 0
	g.onNode = map[string]int{}
	var keep []*structs.Allocation // running, or a finished batch allocation
	canaries, liveCanaries := 0, 0 // canaries of the current deployment: placed, still running
	g.replaced = ReplacedAllocs(allocs)
	// An allocation back from a disconnect and its replacement: the group's reconcile
	// strategy stops one of them.
	losers := g.reconnectLosers(allocs)
	replace := structs.DisconnectFor(g.tg).Replace
	for _, a := range allocs {
		if reason := losers[a.ID]; reason != "" {
			g.st.stop(a, reason)
			continue
		}
		switch {
		case a.ClientStatus == structs.AllocClientStatusUnknown:
			// Its node disconnected: lost once lost_after has passed; until then it keeps
			// its name, or, with replace, leaves it to a replacement placed beside it (a
			// system job's replacement would go to the same node: none is placed).
			switch {
			case g.judgeUnknown(a) == unknownLost:
				g.st.lose(a)
				g.replacingLost(a)
			case replace && !g.system():
				if g.disconnected == nil {
					g.disconnected = map[int]*structs.Allocation{}
				}
				g.disconnected[a.Index()] = a
			default:
				keep = append(keep, a)
			}
			continue
		case isCanary(a) && g.system() && !a.ClientTerminalStatus():
			// A system job's canary replaced the allocation on its node: it holds the node
			// like any other, promoted or not (one of a failed deployment stays until the job
			// changes again rather than being replaced by the same version).
			if g.strategy != nil && g.roll != nil && !g.roll.isNew && a.DeploymentID == g.roll.dep.ID {
				canaries++
			}
			keep = append(keep, a)
			continue
		case isCanary(a) && g.strategy != nil && g.roll != nil && !g.roll.isNew && a.DeploymentID == g.roll.dep.ID && g.roll.dep.Active():
			// A canary runs beside the allocation whose name it took, until promoted.
			canaries++
			if !a.ClientTerminalStatus() {
				liveCanaries++
				g.onNode[a.NodeID]++
			}
			continue
		case isCanary(a) && !a.ClientTerminalStatus():
			g.st.stop(a, ReasonCanaryNotPromoted)
			continue
		case a.ClientStatus == structs.AllocClientStatusLost:
			// Its node is down: stop it, so that the client kills it should the node return,
			// and let a replacement take its place (naming it).
			g.st.stop(a, ReasonLost)
			g.replacingLost(a)
		case awaitsReplacement(g.job, a, g.replaced):
			// A failed allocation is replaced as its group's reschedule policy says: once
			// its delay has passed, away from the node it failed on if another will do, or
			// never once the attempts are used up (it then keeps its name, failed).
			// One of an older version is replaced at once: it would be replaced by the
			// update to the current version anyway (an auto-revert after failures, say).
			verdict, at := rescheduleNow, time.Time{}
			if g.current(a) {
				verdict, at = g.reschedule(a, g.st.in.Now)
			}
			switch verdict {
			case rescheduleNow:
				if g.failedOn == nil {
					g.failedOn = map[int][]string{}
				}
				g.failedOn[a.Index()] = append(g.failedOn[a.Index()], a.NodeID)
				if g.rescheduled == nil {
					g.rescheduled = map[int]*structs.Allocation{}
				}
				g.rescheduled[a.Index()] = a
			case rescheduleLater:
				g.plan.noteRescheduleAt(at)
				keep = append(keep, a)
			default:
				keep = append(keep, a)
			}
		case a.ClientStatus == structs.AllocClientStatusFailed && !g.system() && g.replaced[a.ID]:
			// Already replaced: its replacement holds the name.
		case a.ClientTerminalStatus() && !g.batch():
			// A service allocation that finished is replaced.
		default:
			keep = append(keep, a)
		}
	}
	if g.system() {
		g.reconcileSystem(keep, canaries)
		return
	}

	count := g.count()
	// One allocation per name index, one of the current version if there is one (a promoted
	// canary wins over what it replaces); past the count, the highest indexes go first.
	used := map[int]bool{}
	var kept []*structs.Allocation
	for _, a := range g.preferCurrent(keep) {
		idx := a.Index()
		if used[idx] || idx < 0 {
			reason := ReasonCountReduced
			if used[idx] && idx >= 0 && !g.current(a) {
				reason = ReasonReplaced
			}
			g.st.stop(a, reason)
			continue
		}
		used[idx] = true
		kept = append(kept, a)
	}
	for len(kept) > count {
		last := kept[len(kept)-1]
		kept = kept[:len(kept)-1]
		delete(used, last.Index())
		g.st.stop(last, ReasonCountReduced)
	}
	var missing []int
	var destructive []*structs.Allocation
	inplace, inflight, hadRunning := 0, 0, false
	for _, a := range kept {
		if a.ClientTerminalStatus() {
			continue // a finished batch allocation is done, whatever the version
		}
		hadRunning = true
		if a.ClientStatus == structs.AllocClientStatusUnknown {
			// Out of reach until its node comes back: neither updated nor migrated.
			g.onNode[a.NodeID]++
			continue
		}
		if migrating(a) {
			// The drainer wants it off its node: stopped, and its replacement (same name)
			// placed on a schedulable node in this same plan.
			g.st.stop(a, ReasonMigrating)
			g.replacing(a)
			missing = append(missing, a.Index())
			continue
		}
		g.onNode[a.NodeID]++
		if g.keep(a, &inflight, &inplace) {
			if g.strategy != nil {
				destructive = append(destructive, a)
			} else {
				g.replaceDestructively(a)
				missing = append(missing, a.Index())
			}
		}
	}
	if g.strategy != nil {
		g.dstate = g.joinDeployment(hadRunning || liveCanaries > 0, len(destructive), inplace, g.count())
		if g.dstate == nil {
			// Not part of a deployment (its version's deployment finished without it):
			// replaced at once, as without an update block.
			for _, a := range destructive {
				g.replaceDestructively(a)
				missing = append(missing, a.Index())
			}
		} else {
			missing = append(missing, g.rollOut(destructive, canaries, inflight)...)
		}
	}
	// Replacements keep the name of what they replace; new allocations take the lowest free
	// indexes until the count is reached. Once no node is feasible or the plan is full, the
	// rest is counted at once rather than one by one: the count may be large.
	for i, idx := range missing {
		if !g.placeOrCount(idx, len(missing)-i) {
			break
		}
		g.tagLast(false)
	}
	for idx, total := 0, len(kept); total < count; idx++ {
		if used[idx] {
			continue
		}
		if !g.placeOrCount(idx, count-total) {
			break
		}
		g.tagLast(false)
		used[idx] = true
		total++
	}
}

// current reports whether a runs the job's current version.
func (g *group) current(a *structs.Allocation) bool { return isCurrent(g.job, a) }

// isCurrent reports whether a runs job's current version.
func isCurrent(job *structs.Job, a *structs.Allocation) bool {
	return a.Job != nil && a.Job.Version == job.Version && a.Job.JobModifyIndex == job.JobModifyIndex
}

// keep sorts a running allocation the group keeps: on the current version (counted in
// inflight while it awaits its health), updated in place (counted in inplace), or, reported
// true, one that only a destructive update moves to the current version.
func (g *group) keep(a *structs.Allocation, inflight, inplace *int) (destructive bool) {
	switch {
	case g.current(a):
		if g.awaitingHealth(a) {
			*inflight++
		}
	case !g.destructive(a):
		g.plan.Update = append(g.plan.Update, a)
		*inplace++
	default:
		return true
	}
	return false
}

// awaitingHealth reports whether a, placed by the running rollout, has no health verdict yet: it
// counts against the rollout's max_parallel.
func (g *group) awaitingHealth(a *structs.Allocation) bool {
	return g.roll != nil && a.DeploymentID == g.roll.dep.ID && (a.DeploymentStatus == nil || a.DeploymentStatus.Healthy == nil)
}

// destructive reports whether moving a to the current version needs a restart.
func (g *group) destructive(a *structs.Allocation) bool {
	return a.Job == nil || tasksChanged(a.Job.LookupTaskGroup(g.name), g.tg)
}

// preferCurrent orders allocations so that, of two with the same name index, the one on the
// current version comes first; otherwise the order (by index, then ID) is kept.
func (g *group) preferCurrent(in []*structs.Allocation) []*structs.Allocation {
	out := slices.Clone(in)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Index() != out[j].Index() {
			return out[i].Index() < out[j].Index()
		}
		return g.current(out[i]) && !g.current(out[j])
	})
	return out
}

// updateOrReplace moves a running allocation to the job's current version: in place when its
// group's tasks are unchanged, otherwise by stopping it (the caller places the replacement).
// It reports whether the allocation keeps running.
func (g *group) updateOrReplace(a *structs.Allocation) bool {
	if a.Job != nil && a.Job.Version == g.job.Version && a.Job.JobModifyIndex == g.job.JobModifyIndex {
		return true
	}
	if a.Job != nil && !tasksChanged(a.Job.LookupTaskGroup(g.name), g.tg) {
		g.plan.Update = append(g.plan.Update, a)
		return true
	}
	g.replaceDestructively(a)
	return false
}

// replaceDestructively stops a for a replacement of the job's current version, which the
// caller places, and remembers it for that placement.
func (g *group) replaceDestructively(a *structs.Allocation) {
	g.st.stop(a, ReasonReplaced)
	g.onNode[a.NodeID]--
	g.replacing(a)
}

// replacing remembers a, stopped by this plan, as the allocation the placement of its name
// index replaces (destroyed).
func (g *group) replacing(a *structs.Allocation) {
	if g.destroyed == nil {
		g.destroyed = map[int]*structs.Allocation{}
	}
	g.destroyed[a.Index()] = a
}

// replacingLost remembers a lost allocation (its node down, or disconnected past lost_after),
// stopped by this plan, as the one the placement of its name index replaces, as upstream names
// it: the state links it to its replacement (NextAllocation), so that `alloc status` of the
// lost one shows what took over. The replacement is not a reschedule of a failure: it carries
// no reschedule tracker (see place), so a node going down never uses up the group's attempts.
//
// A system job's lost allocation is replaced by nothing elsewhere (its node is not feasible),
// and the group's names share one index: remembering it would make a placement on a node new
// to the job name it, so it is not. Of two lost allocations of one index, the later one of a
// chain (a replacement that was lost in turn) is the one named, whatever the order they come
// in.
func (g *group) replacingLost(a *structs.Allocation) {
	if g.system() {
		return
	}
	if prev := g.destroyed[a.Index()]; prev != nil && prev.PreviousAllocation == a.ID {
		return
	}
	g.replacing(a)
}

// keepsDisk reports whether the group's ephemeral disk follows its allocations across
// updates (sticky or migrate).
func (g *group) keepsDisk() bool {
	d := g.tg.EphemeralDisk
	return d != nil && ((d.Sticky != nil && *d.Sticky) || (d.Migrate != nil && *d.Migrate))
}

// reconcileSystem keeps one allocation of the group on every feasible node. A group with an
// update strategy (a system job with canaries) is updated through a deployment, see
// rollOutSystem; canaries are the canaries of that deployment already placed.
func (g *group) reconcileSystem(keep []*structs.Allocation, canaries int) {
	g.computeFeasible()
	feasible := map[string]*candidate{}
	for _, c := range g.cands {
		feasible[c.node.ID] = c
	}
	covered := map[string]bool{}
	limit, stagger := g.systemStagger()
	replacing := 0
	var destructive []*structs.Allocation
	inplace, inflight, hadRunning := 0, 0, false
	for _, a := range keep {
		if covered[a.NodeID] {
			g.st.stop(a, ReasonCountReduced)
			continue
		}
		covered[a.NodeID] = true
		if a.ClientTerminalStatus() {
			continue // a finished sysbatch allocation is done on its node
		}
		if a.ClientStatus == structs.AllocClientStatusUnknown {
			continue // its node is disconnected, within the group's lost_after
		}
		if migrating(a) {
			g.st.stop(a, ReasonMigrating)
			continue
		}
		if feasible[a.NodeID] == nil {
			if n := g.st.byID[a.NodeID]; n != nil && n.Status == structs.NodeStatusReady && !n.Schedulable() {
				// Ineligible or draining: nothing new goes there, but what runs stays
				// until the drainer marks it for migration.
				continue
			}
			g.st.stop(a, ReasonNodeRemoved)
			continue
		}
		if g.strategy != nil {
			hadRunning = true
			if g.keep(a, &inflight, &inplace) {
				destructive = append(destructive, a)
			}
			continue
		}
		if limit > 0 && !g.current(a) && g.destructive(a) {
			// A staggered update: max_parallel replacements per plan, the next batch
			// once the stagger has passed.
			if replacing >= limit {
				g.plan.noteFollowup(structs.EvalTriggerRollingUpdate, g.st.in.Now.Add(stagger))
				continue
			}
			replacing++
		}
		if !g.updateOrReplace(a) {
			g.placeOn(feasible[a.NodeID])
			// A system group's names share one index: one not placed on a's node must not
			// name a as the previous allocation of a placement on another.
			delete(g.destroyed, a.Index())
		}
	}
	if g.strategy != nil {
		g.dstate = g.joinDeployment(hadRunning, len(destructive), inplace, len(g.cands))
		g.rollOutSystem(destructive, feasible, canaries, inflight)
	}
	for _, c := range g.cands {
		if !covered[c.node.ID] {
			g.placeOnTagged(c, false)
		}
	}
}

// defaultStagger is upstream's update stagger, for a block that does not set one.
const defaultStagger = 30 * time.Second

// systemStagger reads a system job's update block (the group's, else the job's): how many
// allocations one plan replaces when the job changes (0: all) and how long after a batch the
// next one is due.
func (g *group) systemStagger() (int, time.Duration) {
	u := g.tg.Update
	if u == nil {
		u = g.job.Update
	}
	if u == nil || u.MaxParallel == nil || *u.MaxParallel <= 0 {
		return 0, 0
	}
	stagger := defaultStagger
	if u.Stagger != nil && *u.Stagger > 0 {
		stagger = *u.Stagger
	}
	return *u.MaxParallel, stagger
}

// migrating reports whether the drainer marked the allocation to leave its node.
func migrating(a *structs.Allocation) bool {
	return a.DesiredTransition.Migrate != nil && *a.DesiredTransition.Migrate
}

// tasksChanged reports whether running an allocation of old as new needs a restart: anything
// in the group but its count differs.
func tasksChanged(old, new *api.TaskGroup) bool {
	if old == nil || new == nil {
		return true
	}
	a, b := *old, *new
	a.Count, b.Count = nil, nil
	a.Scaling, b.Scaling = nil, nil
	return !reflect.DeepEqual(&a, &b)
}

func copyMetric(m *api.AllocationMetric) *api.AllocationMetric {
	if m == nil {
		return nil
	}
	c := *m
	c.NodesAvailable = map[string]int{}
	for k, v := range m.NodesAvailable {
		c.NodesAvailable[k] = v
	}
	c.ConstraintFiltered = maps.Clone(m.ConstraintFiltered)
	c.ClassFiltered = maps.Clone(m.ClassFiltered)
	c.ClassExhausted = maps.Clone(m.ClassExhausted)
	c.DimensionExhausted = maps.Clone(m.DimensionExhausted)
	c.ScoreMetaData = nil
	for _, mp := range []*map[string]int{&c.ConstraintFiltered, &c.ClassFiltered, &c.ClassExhausted, &c.DimensionExhausted} {
		if *mp == nil {
			*mp = map[string]int{}
		}
	}
	return &c
}

// sortedAllocs orders allocations by group and name index, then ID, so that every decision is
// the same for the same input.
func sortedAllocs(in []*structs.Allocation) []*structs.Allocation {
	out := slices.DeleteFunc(slices.Clone(in), func(a *structs.Allocation) bool { return a == nil })
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.TaskGroup != b.TaskGroup {
			return a.TaskGroup < b.TaskGroup
		}
		if a.Index() != b.Index() {
			return a.Index() < b.Index()
		}
		return a.ID < b.ID
	})
	return out
}

func sortedNodes(in []*structs.Node) []*structs.Node {
	out := slices.DeleteFunc(slices.Clone(in), func(n *structs.Node) bool { return n == nil })
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
