package worker

import (
	"maps"
	"slices"
	"time"

	"github.com/hashicorp/go-uuid"

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
			e, err := NewEval(v.Job, structs.EvalTriggerPreemption, 0, t)
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
		next, err := NewEval(EvalJob(job, eval), trigger, eval.Priority, t)
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

// EvalJob is the job an evaluation's follow-up names: the job itself, or, when it is gone,
// enough of it to make the evaluation.
func EvalJob(job *structs.Job, eval *structs.Evaluation) *structs.Job {
	if job != nil {
		return job
	}
	return &structs.Job{ID: eval.JobID, Namespace: eval.Namespace, Type: eval.Type, Priority: eval.Priority}
}

// NewEval is a pending evaluation of job, triggered by trigger, at priority (the job's when 0).
// The caller fixes the time (the leader's clock), so that the entry carries it.
func NewEval(job *structs.Job, trigger string, priority int, nowNanos int64) (*structs.Evaluation, error) {
	id, err := uuid.GenerateUUID()
	if err != nil {
		return nil, err
	}
	if priority == 0 {
		priority = job.Priority
	}
	return &structs.Evaluation{
		ID:          id,
		Namespace:   job.Namespace,
		Priority:    priority,
		Type:        job.Type,
		TriggeredBy: trigger,
		JobID:       job.ID,
		Status:      structs.EvalStatusPending,
		CreateTime:  nowNanos,
		ModifyTime:  nowNanos,
	}, nil
}
