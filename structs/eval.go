package structs

import "time"

// Evaluation statuses.
const (
	EvalStatusPending   = "pending"
	EvalStatusBlocked   = "blocked"
	EvalStatusComplete  = "complete"
	EvalStatusFailed    = "failed"
	EvalStatusCancelled = "canceled"
)

// What triggered an evaluation.
const (
	EvalTriggerJobRegister   = "job-register"
	EvalTriggerJobDeregister = "job-deregister"
	EvalTriggerAllocStop     = "alloc-stop"
	EvalTriggerScaling       = "job-scaling"
	EvalTriggerNodeUpdate    = "node-update"
	EvalTriggerPeriodicJob   = "periodic-job"
	EvalTriggerQueuedAllocs  = "queued-allocs"
	// EvalTriggerRetryFailedAlloc is a follow-up that reschedules failed allocations once
	// their delay has passed; EvalTriggerAllocFailure is made when a client reports a failure.
	EvalTriggerRetryFailedAlloc = "failed-follow-up"
	EvalTriggerAllocFailure     = "alloc-failure"
	// EvalTriggerPreemption evaluates a job whose allocations a higher-priority one
	// preempted; EvalTriggerReconnect a job whose allocation's node came back after a
	// disconnect; EvalTriggerMaxDisconnectTimeout one whose unknown allocation's lost_after
	// passed. (EvalTriggerRollingUpdate, in deployment.go, also names the next batch of a
	// system job's staggered update.)
	EvalTriggerPreemption           = "preemption"
	EvalTriggerReconnect            = "reconnect"
	EvalTriggerMaxDisconnectTimeout = "max-disconnect-timeout"
	// EvalTriggerFailedFollowUp is the delayed follow-up of an evaluation that reached the
	// broker's delivery limit and was marked failed (upstream's name and value; the same
	// value as EvalTriggerRetryFailedAlloc above).
	EvalTriggerFailedFollowUp = "failed-follow-up"
)

// Evaluation records that the scheduler must reconcile a job with its allocations.
type Evaluation struct {
	ID                string
	Namespace         string
	Priority          int
	Type              string
	TriggeredBy       string
	JobID             string
	JobModifyIndex    uint64
	NodeID            string
	NodeModifyIndex   uint64
	DeploymentID      string
	Status            string
	StatusDescription string
	Wait              time.Duration
	WaitUntil         time.Time
	NextEval          string
	PreviousEval      string
	BlockedEval       string
	RelatedEvals      []*EvaluationStub
	FailedTGAllocs    map[string]any
	ClassEligibility  map[string]bool
	// EscapedComputedClass and QuotaLimitReached keep the upstream shape the CLI decodes.
	EscapedComputedClass bool
	QuotaLimitReached    string
	AnnotatePlan         bool
	QueuedAllocations    map[string]int
	SnapshotIndex        uint64
	CreateIndex          uint64
	ModifyIndex          uint64
	CreateTime           int64
	ModifyTime           int64
}

// EvaluationStub is the short form used in RelatedEvals.
type EvaluationStub struct {
	ID          string
	Namespace   string
	Priority    int
	Type        string
	TriggeredBy string
	JobID       string
	Status      string
	CreateIndex uint64
}

// TerminalStatus reports whether the evaluation will not be processed again.
func (e *Evaluation) TerminalStatus() bool {
	switch e.Status {
	case EvalStatusComplete, EvalStatusFailed, EvalStatusCancelled:
		return true
	}
	return false
}

// Copy returns a copy safe to change at the top level.
func (e *Evaluation) Copy() *Evaluation {
	return copyWith(e, nil)
}

// EvalSpecificRequest reads one evaluation; IncludeRelated (?related=true) fills the
// answer's RelatedEvals.
type EvalSpecificRequest struct {
	EvalID         string
	IncludeRelated bool
	QueryOptions
}

// SingleEvalResponse answers EvalSpecificRequest.
type SingleEvalResponse struct {
	Eval *Evaluation
	QueryMeta
}

// EvalListRequest lists evaluations, optionally of one job.
type EvalListRequest struct {
	JobID  string
	Status string
	QueryOptions
}

// EvalListResponse answers EvalListRequest.
type EvalListResponse struct {
	Evaluations []*Evaluation
	QueryMeta
}

// EvalUpdateRequest upserts evaluations.
type EvalUpdateRequest struct {
	Evals []*Evaluation
	WriteRequest
}

// EvalDeleteRequest deletes evaluations by ID (eval GC).
type EvalDeleteRequest struct {
	Evals []string
	WriteRequest
}

// EvalCountResponse answers Eval.Count: how many evaluations match the request's namespace,
// prefix and filter, as /v1/evaluations/count.
type EvalCountResponse struct {
	Count int
	QueryMeta
}
