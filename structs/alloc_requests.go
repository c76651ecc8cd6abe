package structs

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

// AllocStopRequest stops one allocation so that the scheduler replaces it (alloc stop): it is
// marked to migrate, and an evaluation of its job acts on the mark.
type AllocStopRequest struct {
	AllocID string
	// NoShutdownDelay skips the tasks' shutdown_delay; Reschedule marks the allocation for
	// rescheduling too (DesiredTransition.Reschedule), as upstream's ?reschedule=true.
	NoShutdownDelay bool
	Reschedule      bool
	WriteRequest
}

// AllocStopResponse answers AllocStopRequest, the shape of upstream's.
type AllocStopResponse struct {
	EvalID string
	WriteMeta
}

// AllocUpdateRequest carries what a client reports about allocations of its node: only
// ClientStatus, ClientDescription and TaskStates of each are applied. The leader fixes
// UpdatedAt before the apply.
type AllocUpdateRequest struct {
	NodeID    string
	Alloc     []*Allocation
	UpdatedAt int64
	// Evals are evaluations the server made for the reported failures (trigger
	// alloc-failure), written in the same transaction as the reports.
	Evals []*Evaluation
	WriteRequest
}

// AllocStopUpdate asks for one allocation to be stopped, saying why.
type AllocStopUpdate struct {
	AllocID            string
	DesiredDescription string
}

// AllocPreemption evicts one allocation for the placement PreemptedByAllocation.
type AllocPreemption struct {
	AllocID               string
	PreemptedByAllocation string
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
	// AllocsPreempted are allocations of lower-priority jobs evicted to make room for one of
	// AllocsPlaced (named by PreemptedByAllocation, which lists them in its
	// PreemptedAllocations). They are evicted only when that placement is applied.
	AllocsPreempted []*AllocPreemption
	// AllocsLost are unknown allocations (their node disconnected) whose lost_after passed:
	// they become lost and are stopped.
	AllocsLost []*AllocStopUpdate
	// Evals are the processed evaluation with its new status, and any evaluations the plan
	// creates (a blocked follow-up) or supersedes.
	Evals []*Evaluation
	// Deployment, when set, is the deployment the plan creates or moves on, written in the
	// same entry as the allocations that carry its ID.
	Deployment *Deployment
	// DeploymentUpdates change the status of other deployments of the job (a newer version
	// cancels an older one's).
	DeploymentUpdates []*DeploymentStatusUpdate
	// UpdatedAt becomes ModifyTime of every allocation the plan changes.
	UpdatedAt int64
	WriteRequest
}

// IsNoOp reports whether the plan changes no allocation.
func (p *ApplyPlanResultsRequest) IsNoOp() bool {
	return len(p.AllocsPlaced) == 0 && len(p.AllocsUpdated) == 0 && len(p.AllocsStopped) == 0 &&
		len(p.AllocsPreempted) == 0 && len(p.AllocsLost) == 0 &&
		p.Deployment == nil && len(p.DeploymentUpdates) == 0
}

// AllocMigrateDataRequest asks for the bytes from Offset of the snapshot of allocation
// AllocID's ephemeral disk (a gzipped tar of alloc/data and each task's local/), served by
// the client of the node that ran it. NodeID is the asking node, when a node asks for the
// allocation one of its own replaces.
type AllocMigrateDataRequest struct {
	AllocID string
	NodeID  string
	Offset  int64
	QueryOptions
}

// AllocMigrateChunkSize is how much of a snapshot one AllocMigrateDataResponse carries.
const AllocMigrateChunkSize = 4 << 20

// AllocMigrateDataResponse is one chunk of a snapshot; EOF says it is the last.
type AllocMigrateDataResponse struct {
	Data []byte
	EOF  bool
	QueryMeta
}

// AllocDeleteRequest removes finished allocations of jobs that live on (the allocation GC, run
// with the evaluation GC). A type of its own rather than a field of EvalDeleteRequest: a server
// of an older release stops at an entry it cannot apply instead of applying half of it.
type AllocDeleteRequest struct {
	Allocs []string
	WriteRequest
}
