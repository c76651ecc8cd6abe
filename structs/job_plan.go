package structs

import (
	"time"

	"github.com/hashicorp/nomad/api"
)

// JobPlanRequest asks what registering Job would do, without doing it (a dry run of the
// scheduler against the current state). Diff asks for the difference from the stored job.
type JobPlanRequest struct {
	Job            *Job
	Diff           bool
	PolicyOverride bool
	WriteRequest
}

// JobPlanResponse answers JobPlanRequest in upstream's shape. JobModifyIndex is the stored
// job's (0 when it is new), for `job run -check-index`. CreatedEvals are the evaluations the
// registration would create besides its own (a blocked one when allocations cannot be placed);
// none of them is stored.
type JobPlanResponse struct {
	JobModifyIndex     uint64
	CreatedEvals       []*Evaluation
	Diff               *JobDiff
	Annotations        *api.PlanAnnotations
	FailedTGAllocs     map[string]*api.AllocationMetric
	NextPeriodicLaunch time.Time
	Warnings           string
	WriteMeta
}

// JobValidateRequest asks whether Job would be accepted, without registering it.
type JobValidateRequest struct {
	Job *Job
	WriteRequest
}

// JobValidateResponse answers JobValidateRequest in upstream's shape: every problem found, one
// a string, and Error joining them.
type JobValidateResponse struct {
	DriverConfigValidated bool
	ValidationErrors      []string
	Error                 string
	Warnings              string
}

// Keys of TaskGroupDiff.Updates, as upstream's plan renders them.
const (
	UpdateTypeIgnore            = "ignore"
	UpdateTypeCreate            = "create"
	UpdateTypeDestroy           = "destroy"
	UpdateTypeMigrate           = "migrate"
	UpdateTypeInplaceUpdate     = "in-place update"
	UpdateTypeDestructiveUpdate = "create/destroy update"
	UpdateTypeCanary            = "canary"
)
