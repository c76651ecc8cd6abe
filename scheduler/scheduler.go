package scheduler

import (
	"path"
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
)

// Input is what the scheduler decides from.
type Input struct {
	// Job is the job's current version; nil when it was purged.
	Job *structs.Job
	// Allocs are every allocation of the job.
	Allocs []*structs.Allocation
	// Nodes are every node; Compute filters them.
	Nodes []*structs.Node
	// NodeLoad counts the running allocations of every job on each node, for placing on the
	// least loaded node. Nil counts nothing.
	NodeLoad map[string]int
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

// Compute reconciles the job with its allocations and returns the plan that does it.
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

	// Allocations of groups the job no longer has are stopped; the rest are handled by group.
	byGroup := map[string][]*structs.Allocation{}
	for _, a := range allocs {
		if a.DesiredStatus != structs.AllocDesiredStatusRun {
			continue
		}
		if job.LookupTaskGroup(a.TaskGroup) == nil {
			p.Stop = append(p.Stop, Stop{Alloc: a, Reason: ReasonGroupRemoved})
			continue
		}
		byGroup[a.TaskGroup] = append(byGroup[a.TaskGroup], a)
	}
	nodes := sortedNodes(in.Nodes)
	load := map[string]int{}
	for id, n := range in.NodeLoad {
		load[id] = n
	}
	for _, tg := range job.TaskGroups {
		if tg.Name == nil {
			continue
		}
		g := &group{plan: p, job: job, tg: tg, name: *tg.Name, nodes: nodes, load: load}
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
	plan  *Plan
	job   *structs.Job
	tg    *api.TaskGroup
	name  string
	nodes []*structs.Node
	// load is shared by the groups of one plan, so later groups see earlier placements.
	load map[string]int
	// onNode counts this group's allocations per node, to spread the group.
	onNode map[string]int
	// feasible is filled on first use, with the metric explaining what was filtered.
	feasible []*structs.Node
	metric   *api.AllocationMetric
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
	g.onNode = map[string]int{}
	g.plan.Queued[g.name] = 0
	var keep []*structs.Allocation // running, or a finished batch allocation
	for _, a := range allocs {
		switch {
		case a.ClientStatus == structs.AllocClientStatusLost:
			// Its node is down: stop it, so that the client kills it should the node return,
			// and let a replacement take its place.
			g.plan.Stop = append(g.plan.Stop, Stop{Alloc: a, Reason: ReasonLost})
		case a.ClientTerminalStatus() && !g.batch():
			// A service allocation that finished or failed is replaced.
		default:
			keep = append(keep, a)
		}
	}
	if g.system() {
		g.reconcileSystem(keep)
		return
	}

	count := 1
	if g.tg.Count != nil {
		count = *g.tg.Count
	}
	// One allocation per name index; past the count, the highest indexes go first.
	used := map[int]bool{}
	var kept []*structs.Allocation
	for _, a := range keep {
		idx := a.Index()
		if used[idx] || idx < 0 {
			g.plan.Stop = append(g.plan.Stop, Stop{Alloc: a, Reason: ReasonCountReduced})
			continue
		}
		used[idx] = true
		kept = append(kept, a)
	}
	for len(kept) > count {
		last := kept[len(kept)-1]
		kept = kept[:len(kept)-1]
		delete(used, last.Index())
		g.plan.Stop = append(g.plan.Stop, Stop{Alloc: last, Reason: ReasonCountReduced})
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

// placeOrCount places the allocation with name index idx, one of left still to place. When
// the plan is full it defers all left, when no node is feasible it queues all left, and it
// reports false: the caller places no more of them.
func (g *group) placeOrCount(idx, left int) bool {
	if g.plan.full() {
		g.plan.Deferred[g.name] += left
		return false
	}
	if g.computeFeasible(); len(g.feasible) == 0 {
		g.queue(left)
		return false
	}
	g.place(idx, nil)
	return true
}

// queue counts n allocations of the group that no node can take.
func (g *group) queue(n int) {
	g.plan.Queued[g.name] += n
	m := g.plan.Failed[g.name]
	if m == nil {
		m = copyMetric(g.metric)
		g.plan.Failed[g.name] = m
		n--
	}
	m.CoalescedFailures += n
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
	g.plan.Stop = append(g.plan.Stop, Stop{Alloc: a, Reason: ReasonReplaced})
	g.onNode[a.NodeID]--
	return false
}

// reconcileSystem keeps one allocation of the group on every feasible node.
func (g *group) reconcileSystem(keep []*structs.Allocation) {
	g.computeFeasible()
	feasible := map[string]*structs.Node{}
	for _, n := range g.feasible {
		feasible[n.ID] = n
	}
	covered := map[string]bool{}
	for _, a := range keep {
		if covered[a.NodeID] {
			g.plan.Stop = append(g.plan.Stop, Stop{Alloc: a, Reason: ReasonCountReduced})
			continue
		}
		covered[a.NodeID] = true
		if a.ClientTerminalStatus() {
			continue // a finished sysbatch allocation is done on its node
		}
		if feasible[a.NodeID] == nil {
			g.plan.Stop = append(g.plan.Stop, Stop{Alloc: a, Reason: ReasonNodeRemoved})
			continue
		}
		if !g.updateOrReplace(a) {
			g.placeOn(feasible[a.NodeID])
		}
	}
	for _, n := range g.feasible {
		if !covered[n.ID] {
			g.placeOn(n)
		}
	}
}

// placeOn places a system group's allocation on node, or defers it when the plan is full.
func (g *group) placeOn(node *structs.Node) {
	if g.plan.full() {
		g.plan.Deferred[g.name]++
		return
	}
	g.place(0, node)
}

// place plans a new allocation with name index idx on node, or on the best feasible node
// when node is nil; with no feasible node it is counted as queued.
func (g *group) place(idx int, node *structs.Node) {
	if node == nil {
		node = g.pick()
	}
	if node == nil {
		g.queue(1)
		return
	}
	g.onNode[node.ID]++
	g.load[node.ID]++
	g.plan.Place = append(g.plan.Place, &structs.Allocation{
		Namespace:     g.job.Namespace,
		Name:          structs.AllocName(g.job.ID, g.name, idx),
		NodeID:        node.ID,
		NodeName:      node.Name,
		JobID:         g.job.ID,
		Job:           g.job,
		TaskGroup:     g.name,
		Metrics:       copyMetric(g.metric),
		DesiredStatus: structs.AllocDesiredStatusRun,
		ClientStatus:  structs.AllocClientStatusPending,
	})
}

// pick returns the feasible node with the fewest allocations of this group, then the fewest
// allocations overall, then the lowest ID: nil when none is feasible.
func (g *group) pick() *structs.Node {
	g.computeFeasible()
	var best *structs.Node
	for _, n := range g.feasible {
		if best == nil || g.onNode[n.ID] < g.onNode[best.ID] ||
			(g.onNode[n.ID] == g.onNode[best.ID] && g.load[n.ID] < g.load[best.ID]) {
			best = n
		}
	}
	return best
}

// computeFeasible filters the nodes once per group and records why each was left out.
func (g *group) computeFeasible() {
	if g.metric != nil {
		return
	}
	g.metric = &api.AllocationMetric{
		NodePool:           g.job.NodePool,
		NodesAvailable:     map[string]int{},
		ConstraintFiltered: map[string]int{},
	}
	for _, n := range g.nodes {
		g.metric.NodesEvaluated++
		if n.Schedulable() {
			g.metric.NodesAvailable[n.Datacenter]++
		}
		if reason := g.infeasible(n); reason != "" {
			g.metric.NodesFiltered++
			g.metric.ConstraintFiltered[reason]++
			continue
		}
		g.metric.NodesInPool++
		g.feasible = append(g.feasible, n)
	}
}

// infeasible says why node cannot run the group, or "" when it can.
func (g *group) infeasible(n *structs.Node) string {
	switch {
	case !n.Schedulable():
		return "node not ready"
	case !inPool(g.job.NodePool, n.NodePool):
		return "node pool"
	case !inDatacenters(g.job.Datacenters, n.Datacenter):
		return "datacenter"
	}
	for _, task := range g.tg.Tasks {
		if !n.HasDriver(task.Driver) {
			return "missing driver " + task.Driver
		}
	}
	return ""
}

func inPool(jobPool, nodePool string) bool {
	if nodePool == "" {
		nodePool = structs.DefaultNodePool
	}
	return jobPool == "" || jobPool == "all" || jobPool == nodePool
}

// inDatacenters matches the node's datacenter against the job's list, whose entries may be
// globs ("*", "dc-*").
func inDatacenters(patterns []string, dc string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if ok, err := path.Match(p, dc); err == nil && ok {
			return true
		}
	}
	return false
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
	c.ConstraintFiltered = map[string]int{}
	for k, v := range m.ConstraintFiltered {
		c.ConstraintFiltered[k] = v
	}
	return &c
}

// sortedAllocs orders allocations by group and name index, then ID, so that every decision is
// the same for the same input.
func sortedAllocs(in []*structs.Allocation) []*structs.Allocation {
	out := slices.Clone(in)
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
	out := slices.Clone(in)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
