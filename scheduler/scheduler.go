package scheduler

import (
	"maps"
	"reflect"
	"slices"
	"sort"

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
func (p *Plan) IsNoOp() bool { return len(p.Place) == 0 && len(p.Update) == 0 && len(p.Stop) == 0 }

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
		}
		for _, a := range allocs {
			if a.DesiredStatus == structs.AllocDesiredStatusRun {
				p.Stop = append(p.Stop, Stop{Alloc: a, Reason: reason})
			}
		}
		return p
	}
	st := newState(in, p)

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
		g := &group{st: st, plan: p, job: job, tg: tg, name: *tg.Name}
		g.reconcile(byGroup[g.name])
	}
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
	var keep []*structs.Allocation // running, or a finished batch allocation
	for _, a := range allocs {
		switch {
		case a.DesiredTransition.ShouldMigrate() && !a.ClientTerminalStatus():
			// Stopped through the API (alloc stop): a replacement takes its place.
			g.st.stop(a, ReasonMigrating)
		case a.ClientStatus == structs.AllocClientStatusLost:
			// Its node is down: stop it, so that the client kills it should the node return,
			// and let a replacement take its place.
			g.st.stop(a, ReasonLost)
		case a.ClientTerminalStatus() && !g.batch():
			// A service allocation that finished or failed is replaced, away from the node
			// it failed on if another will do.
			if a.ClientStatus == structs.AllocClientStatusFailed {
				if g.failedOn == nil {
					g.failedOn = map[int][]string{}
				}
				g.failedOn[a.Index()] = append(g.failedOn[a.Index()], a.NodeID)
			}
		default:
			keep = append(keep, a)
		}
	}
	g.onNode = map[string]int{}
	if g.system() {
		g.reconcileSystem(keep)
		return
	}

	count := g.count()
	// One allocation per name index; past the count, the highest indexes go first.
	used := map[int]bool{}
	var kept []*structs.Allocation
	for _, a := range keep {
		idx := a.Index()
		if used[idx] || idx < 0 {
			g.st.stop(a, ReasonCountReduced)
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
	for _, a := range kept {
		if a.ClientTerminalStatus() {
			continue // a finished batch allocation is done, whatever the version
		}
		g.onNode[a.NodeID]++
		if !g.updateOrReplace(a) {
			missing = append(missing, a.Index())
		}
	}
	// Replacements keep the name of what they replace; new allocations take the lowest free
	// indexes until the count is reached. Once no node is feasible or the plan is full, the
	// rest is counted at once rather than one by one: the count may be large.
	for i, idx := range missing {
		if !g.placeOrCount(idx, len(missing)-i) {
			break
		}
	}
	for idx, total := 0, len(kept); total < count; idx++ {
		if used[idx] {
			continue
		}
		if !g.placeOrCount(idx, count-total) {
			break
		}
		used[idx] = true
		total++
	}
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
	g.st.stop(a, ReasonReplaced)
	g.onNode[a.NodeID]--
	return false
}

// reconcileSystem keeps one allocation of the group on every feasible node.
func (g *group) reconcileSystem(keep []*structs.Allocation) {
	g.computeFeasible()
	feasible := map[string]*candidate{}
	for _, c := range g.cands {
		feasible[c.node.ID] = c
	}
	covered := map[string]bool{}
	for _, a := range keep {
		if covered[a.NodeID] {
			g.st.stop(a, ReasonCountReduced)
			continue
		}
		covered[a.NodeID] = true
		if a.ClientTerminalStatus() {
			continue // a finished sysbatch allocation is done on its node
		}
		if feasible[a.NodeID] == nil {
			g.st.stop(a, ReasonNodeRemoved)
			continue
		}
		if !g.updateOrReplace(a) {
			g.placeOn(feasible[a.NodeID])
		}
	}
	for _, c := range g.cands {
		if !covered[c.node.ID] {
			g.placeOn(c)
		}
	}
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
