package nomad

import (
	"maps"
	"slices"

	"github.com/nomadfork/nomad/scheduler"
	"github.com/nomadfork/nomad/structs"
)

// addPlanExtras puts on req what a plan decides besides placements, updates and stops:
// the allocations its placements preempt (with an evaluation for each preempted job, so that
// it is placed again elsewhere), the unknown allocations it makes lost, and its delayed
// follow-up evaluations (a disconnect's lost_after, a system job's next staggered batch).
// The placements must already have their IDs. others are the job's evaluations, so that a
// follow-up already due by then is not made twice.
func addPlanExtras(req *structs.ApplyPlanResultsRequest, plan *scheduler.Plan, job *structs.Job,
	eval *structs.Evaluation, others []*structs.Evaluation, t int64) error {
	seen := map[structs.NamespacedID]bool{}
	byID := map[string]*structs.Allocation{}
	for _, v := range plan.Preempted() {
		byID[v.ID] = v
	}
	for _, a := range req.AllocsPlaced {
		for _, victimID := range a.PreemptedAllocations {
			req.AllocsPreempted = append(req.AllocsPreempted, &structs.AllocPreemption{AllocID: victimID, PreemptedByAllocation: a.ID})
			v := byID[victimID]
			if v == nil || v.Job == nil {
				continue
			}
			id := structs.NamespacedID{Namespace: v.Namespace, ID: v.JobID}
			if seen[id] {
				continue
			}
			seen[id] = true
			e, err := newEval(v.Job, structs.EvalTriggerPreemption, 0, t)
			if err != nil {
				return err
			}
			e.JobModifyIndex = v.Job.JobModifyIndex
			e.StatusDescription = "created to place allocations preempted by evaluation " + eval.ID
			req.Evals = append(req.Evals, e)
		}
	}
	for _, a := range plan.Lost {
		req.AllocsLost = append(req.AllocsLost, &structs.AllocStopUpdate{AllocID: a.ID, DesiredDescription: scheduler.ReasonDisconnectLost})
	}
	for _, trigger := range slices.Sorted(maps.Keys(plan.Followups)) {
		at := plan.Followups[trigger]
		if followupDue(others, eval.ID, at) {
			continue
		}
		next, err := newEval(evalJob(job, eval), trigger, eval.Priority, t)
		if err != nil {
			return err
		}
		next.WaitUntil = at.UTC()
		next.StatusDescription = "created as a delayed follow-up (" + trigger + ") of evaluation " + eval.ID
		next.PreviousEval = eval.ID
		next.JobModifyIndex = eval.JobModifyIndex
		req.Evals = append(req.Evals, next)
	}
	return nil
}
