package scheduler

import (
	"sort"

	"github.com/nomadfork/nomad/structs"
)

// PreemptPriorityDelta is how much higher a job's priority must be than another's for its
// allocations to evict the other's, as upstream: jobs of close priorities never preempt each
// other, so two jobs of equal weight cannot take turns evicting one another.
const PreemptPriorityDelta = 10

// ReasonPreempted starts the DesiredDescription of a preempted allocation; the applier
// appends the ID of the allocation that took its place.
const ReasonPreempted = "Preempted by alloc ID"

// preemptionEnabled reports whether the scheduler configuration lets jobs of this type
// preempt.
func (st *state) preemptionEnabled(jobType string) bool {
	c := st.in.Preemption
	switch jobType {
	case structs.JobTypeSystem:
		return c.SystemSchedulerEnabled
	case structs.JobTypeSysBatch:
		return c.SysBatchSchedulerEnabled
	case structs.JobTypeBatch:
		return c.BatchSchedulerEnabled
	case structs.JobTypeService:
		return c.ServiceSchedulerEnabled
	}
	return false
}

// preemptible lists the allocations on c's node that one of the group may evict: running
// (counted in the node's usage, not stopped or preempted by this plan), of another job whose
// priority is at least PreemptPriorityDelta lower. Lowest priority first; within a priority
// the largest first, so that few are evicted; then by ID, so the choice is the same for the
// same input.
func (g *group) preemptible(c *candidate, u *usage) []*structs.Allocation {
	var out []*structs.Allocation
	for _, a := range g.st.in.NodeAllocs[c.node.ID] {
		if a == nil || a.Job == nil || !u.ids[a.ID] || g.st.stopped[a.ID] {
			continue
		}
		if a.Namespace == g.job.Namespace && a.JobID == g.job.ID {
			continue
		}
		if g.job.Priority-a.Job.Priority < PreemptPriorityDelta {
			continue
		}
		out = append(out, a)
	}
	size := func(a *structs.Allocation) int64 {
		am := allocAmount(a)
		return am.cpu + am.mem + am.disk
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Job.Priority != b.Job.Priority {
			return a.Job.Priority < b.Job.Priority
		}
		if sa, sb := size(a), size(b); sa != sb {
			return sa > sb
		}
		return a.ID < b.ID
	})
	return out
}

// preemptFor looks for allocations to evict on c's node so that one allocation of the group
// fits there, and returns them, nil when no set of preemptible allocations makes room. It
// evicts greedily in preemptible's order until the allocation fits, then gives back every
// victim it can do without, the highest priorities first. On success the victims' use of
// the node is taken off its usage; on failure the usage is left as it was.
func (g *group) preemptFor(c *candidate) []*structs.Allocation {
	if !g.st.preemptionEnabled(g.job.Type) {
		return nil
	}
	if c.u == nil {
		c.u = g.st.usageOf(c.node)
	}
	u := c.u
	if g.fit(c.capy, u) == "" {
		return nil // it fits already: what stopped it was not room
	}
	var chosen []*structs.Allocation
	fits := false
	for _, a := range g.preemptible(c, u) {
		u.add(allocAmount(a), -1)
		chosen = append(chosen, a)
		if g.fit(c.capy, u) == "" {
			fits = true
			break
		}
	}
	if !fits {
		for _, a := range chosen {
			u.add(allocAmount(a), 1)
		}
		return nil
	}
	// The last one chosen was needed (the set did not fit without it); of the others, keep
	// running whatever is not needed for the fit.
	keep := make([]bool, len(chosen))
	for i := len(chosen) - 2; i >= 0; i-- {
		u.add(allocAmount(chosen[i]), 1)
		if g.fit(c.capy, u) == "" {
			keep[i] = true
			continue
		}
		u.add(allocAmount(chosen[i]), -1)
	}
	var victims []*structs.Allocation
	for i, a := range chosen {
		if !keep[i] {
			victims = append(victims, a)
		}
	}
	return victims
}

// preempt records the eviction of victims on node for the placement about to be made there
// (their usage is already off the node's).
func (st *state) preempt(nodeID string, victims []*structs.Allocation) {
	if st.plan.NodePreemptions == nil {
		st.plan.NodePreemptions = map[string][]*structs.Allocation{}
	}
	u := st.usage[nodeID]
	for _, a := range victims {
		st.plan.NodePreemptions[nodeID] = append(st.plan.NodePreemptions[nodeID], a)
		st.stopped[a.ID] = true
		if u != nil {
			delete(u.ids, a.ID)
		}
		if st.load[nodeID] > 0 {
			st.load[nodeID]--
		}
	}
}

// placeWithPreemption places one allocation of the group on c's node by evicting
// lower-priority allocations there, when the configuration allows it and some do make room.
// It reports whether it placed.
func (g *group) placeWithPreemption(c *candidate, idx int) bool {
	if g.distinctInfeasible(c.node) != "" {
		return false
	}
	victims := g.preemptFor(c)
	if len(victims) == 0 {
		return false
	}
	a := &attempt{}
	if !g.try(a, c) {
		// Cannot happen (preemptFor checked the fit); give the room back rather than
		// evict for nothing.
		for _, v := range victims {
			c.u.add(allocAmount(v), 1)
		}
		return false
	}
	g.st.preempt(c.node.ID, victims)
	g.place(idx, a)
	placed := g.plan.Place[len(g.plan.Place)-1]
	for _, v := range victims {
		placed.PreemptedAllocations = append(placed.PreemptedAllocations, v.ID)
	}
	return true
}
