package structs

import "github.com/hashicorp/nomad/api"

// AllocListRequest lists allocations of a namespace ("*" for all), filtered by ID prefix.
type AllocListRequest struct {
	QueryOptions
}

// AllocListResponse answers the allocation list reads (all, by job, by eval).
type AllocListResponse struct {
	Allocations []*AllocListStub
	QueryMeta
}

// AllocSpecificRequest reads one allocation.
type AllocSpecificRequest struct {
	AllocID string
	QueryOptions
}

// SingleAllocResponse answers AllocSpecificRequest; Alloc is nil when it does not exist.
type SingleAllocResponse struct {
	Alloc *Allocation
	QueryMeta
}

// AllocUpdateRequest carries what a client reports about allocations of its node: only
// ClientStatus, ClientDescription and TaskStates of each are applied. The leader fixes
// UpdatedAt before the apply.
type AllocUpdateRequest struct {
	NodeID    string
	Alloc     []*Allocation
	UpdatedAt int64
	WriteRequest
}

// AllocStopRequest asks for one allocation to be stopped and replaced (upstream's
// PUT /v1/allocation/:id/stop). Reschedule marks the replacement as a reschedule;
// NoShutdownDelay skips the tasks' shutdown_delay.
type AllocStopRequest struct {
	AllocID         string
	NoShutdownDelay bool
	Reschedule      bool
	WriteRequest
}

// AllocStopResponse answers AllocStopRequest with the evaluation that replaces the allocation.
type AllocStopResponse struct {
	EvalID string
	WriteMeta
}

// AllocUpdateDesiredTransitionRequest sets the desired transition of allocations (by ID) and
// stores the evaluations that act on it, in one Raft entry. The leader fixes the evaluations'
// IDs and times before the apply.
type AllocUpdateDesiredTransitionRequest struct {
	Allocs map[string]*api.DesiredTransition
	Evals  []*Evaluation
	WriteRequest
}

// AllocStopUpdate asks for one allocation to be stopped, saying why.
type AllocStopUpdate struct {
	AllocID            string
	DesiredDescription string
}

// ApplyPlanResultsRequest is one scheduling decision, applied in one Raft entry with the
// evaluation that produced it. The leader fixes every ID and time before the apply.
type ApplyPlanResultsRequest struct {
	// Job is the version placed and in-place updated allocations run. The FSM sets it on them,
	// so the entry carries it once. Nil when the plan only stops allocations.
	Job *Job
	// AllocsPlaced are new allocations.
	AllocsPlaced []*Allocation
	// AllocsUpdated are IDs of allocations that keep running but now run Job (a change that
	// needs no restart, such as a count change of their group).
	AllocsUpdated []string
	// AllocsStopped are allocations the servers no longer want.
	AllocsStopped []*AllocStopUpdate
	// Evals are the processed evaluation with its new status, and any evaluations the plan
	// creates (a blocked follow-up) or supersedes.
	Evals []*Evaluation
	// UpdatedAt becomes ModifyTime of every allocation the plan changes.
	UpdatedAt int64
	WriteRequest
}

// IsNoOp reports whether the plan changes no allocation.
func (p *ApplyPlanResultsRequest) IsNoOp() bool {
	return len(p.AllocsPlaced) == 0 && len(p.AllocsUpdated) == 0 && len(p.AllocsStopped) == 0
}
