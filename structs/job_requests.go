package structs

import "github.com/hashicorp/nomad/api"

// JobRegisterRequest registers or updates a job. The leader fixes SubmitTime, Eval and Actor
// before the Raft apply, so the FSM applies it deterministically.
type JobRegisterRequest struct {
	Job            *Job
	Submission     *api.JobSubmission
	EnforceIndex   bool
	JobModifyIndex uint64
	PreserveCounts bool
	// PreserveResources keeps the resources of the stored job's tasks.
	PreserveResources bool
	PolicyOverride    bool
	EvalPriority      int

	Eval  *Evaluation
	Actor *Actor
	// Scaling, when set, is the scaling event this registration's count change records.
	Scaling *ScalingEventRequest
	// PeriodicLaunch, when set, records a launch of the job's periodic parent in the same
	// transaction as the child: it is refused unless it is later than the recorded launch, so
	// a launch cannot happen twice whichever leader asks.
	PeriodicLaunch *PeriodicLaunch
	WriteRequest
}

// JobRegisterResponse answers register, revert and scale.
type JobRegisterResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	JobModifyIndex  uint64
	Warnings        string
	QueryMeta
}

// JobDeregisterRequest stops a job, or with Purge removes it and its versions from state.
// Purge and Actor travel through the Raft log into the write transaction that applies it.
type JobDeregisterRequest struct {
	JobID           string
	Purge           bool
	Global          bool
	EvalPriority    int
	NoShutdownDelay bool

	Eval  *Evaluation
	Actor *Actor
	// PurgeRecordID and PurgeTime identify the purge-history record the FSM writes with a purge;
	// the leader fixes them before the apply.
	PurgeRecordID string
	PurgeTime     int64
	// StopTime becomes the stopped version's SubmitTime, from which the job GC measures
	// how long the job has been stopped.
	StopTime int64
	WriteRequest
}

// JobDeregisterResponse answers a stop or purge.
type JobDeregisterResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	JobModifyIndex  uint64
	VolumeEvalID    string
	VolumeEvalIndex uint64
	QueryMeta
}

// JobBatchDeregisterRequest removes several jobs in one transaction; the job GC uses it.
type JobBatchDeregisterRequest struct {
	Jobs []*JobBatchDeregisterItem
	// PurgeTime is fixed by the leader for the purge-history records.
	PurgeTime int64
	Actor     *Actor
	// ForcedBy is the token that forced this GC run (PUT /v1/system/gc), nil for a scheduled
	// run. Our extension: upstream records only the GC.
	ForcedBy *Actor `json:",omitempty"`
	WriteRequest
}

// JobBatchDeregisterItem names one job of a batch and the record ID its removal writes.
type JobBatchDeregisterItem struct {
	Namespace     string
	JobID         string
	PurgeRecordID string
}

// JobSpecificRequest reads one job.
type JobSpecificRequest struct {
	JobID string
	All   bool
	QueryOptions
}

// SingleJobResponse answers JobSpecificRequest.
type SingleJobResponse struct {
	Job *Job
	QueryMeta
}

// JobListRequest lists jobs.
type JobListRequest struct {
	WithMeta bool
	QueryOptions
}

// JobListResponse answers JobListRequest.
type JobListResponse struct {
	Jobs []*JobListStub
	QueryMeta
}

// JobVersionsRequest reads a job's versions, optionally with diffs between neighbours or
// against one chosen version.
type JobVersionsRequest struct {
	JobID       string
	Diffs       bool
	DiffVersion *uint64
	DiffTag     string
	QueryOptions
}

// JobVersionsResponse answers JobVersionsRequest.
type JobVersionsResponse struct {
	Versions []*Job
	Diffs    []*JobDiff
	QueryMeta
}

// JobSummaryResponse answers a summary read.
type JobSummaryResponse struct {
	JobSummary *JobSummary
	QueryMeta
}

// JobRevertRequest registers an earlier version's spec as a new version.
type JobRevertRequest struct {
	JobID               string
	JobVersion          uint64
	EnforcePriorVersion *uint64
	WriteRequest
}

// JobScaleRequest changes one group's count.
type JobScaleRequest struct {
	JobID          string
	Target         map[string]string
	Count          *int64
	Message        string
	Error          bool
	Meta           map[string]any
	PolicyOverride bool
	JobModifyIndex uint64
	WriteRequest
}

// JobScaleStatusResponse answers a scale status read.
type JobScaleStatusResponse struct {
	JobID          string
	Namespace      string
	JobCreateIndex uint64
	JobModifyIndex uint64
	JobStopped     bool
	TaskGroups     map[string]TaskGroupScaleStatus
}

// TaskGroupScaleStatus is one group's scaling state.
type TaskGroupScaleStatus struct {
	Desired   int
	Placed    int
	Running   int
	Healthy   int
	Unhealthy int
	Events    []*api.ScalingEvent
}

// JobTagRequest tags a version (Tag set) or removes a tag (Unset).
type JobTagRequest struct {
	JobID   string
	Name    string
	Version *uint64
	Unset   bool
	// Tag is built by the leader, with the time fixed, from Name and a description.
	Tag         *JobVersionTag
	Description string
	Actor       *Actor
	WriteRequest
}

// JobTagResponse answers a tag write.
type JobTagResponse struct {
	Name        string
	Description string
	TaggedTime  int64
	QueryMeta
}

// JobStabilityRequest marks a version of a job stable or not (PUT /v1/job/:id/stable), as
// upstream: stable versions are what auto_revert rolls back to.
type JobStabilityRequest struct {
	JobID      string
	JobVersion uint64
	Stable     bool
	Actor      *Actor
	WriteRequest
}

// JobStabilityResponse answers JobStabilityRequest.
type JobStabilityResponse struct {
	JobModifyIndex uint64
	WriteMeta
}

// JobEvaluateRequest asks for a new evaluation of a job (PUT /v1/job/:id/evaluate).
type JobEvaluateRequest struct {
	JobID       string
	EvalOptions api.EvalOptions
	WriteRequest
}

// JobPeriodicForceRequest launches a child of a periodic job now.
type JobPeriodicForceRequest struct {
	JobID string
	WriteRequest
}

// PeriodicForceResponse answers JobPeriodicForceRequest with the child's evaluation.
type PeriodicForceResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	WriteMeta
}
