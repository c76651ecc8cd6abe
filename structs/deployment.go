package structs

import (
	"strconv"
	"time"

	"github.com/hashicorp/nomad/api"
)

// AllocDeploymentStatus is an allocation's health within its deployment, in the client
// library's shape: Healthy is nil until the client (or an operator) decides.
type AllocDeploymentStatus = api.AllocDeploymentStatus

// Deployment statuses, as upstream spells them on the wire.
const (
	DeploymentStatusRunning      = "running"
	DeploymentStatusPaused       = "paused"
	DeploymentStatusFailed       = "failed"
	DeploymentStatusSuccessful   = "successful"
	DeploymentStatusCancelled    = "cancelled"
	DeploymentStatusPending      = "pending"
	DeploymentStatusBlocked      = "blocked"
	DeploymentStatusUnblocking   = "unblocking"
	DeploymentStatusInitializing = "initializing"
)

// Deployment status descriptions: the texts upstream shows, which users' scripts match.
const (
	DeploymentDescRunning               = "Deployment is running"
	DeploymentDescRunningNeedsPromotion = "Deployment is running but requires manual promotion"
	DeploymentDescRunningAutoPromotion  = "Deployment is running pending automatic promotion"
	DeploymentDescPaused                = "Deployment is paused"
	DeploymentDescSuccessful            = "Deployment completed successfully"
	DeploymentDescStoppedJob            = "Cancelled because job is stopped"
	DeploymentDescNewerJob              = "Cancelled due to newer version of job"
	DeploymentDescFailedAllocations     = "Failed due to unhealthy allocations"
	DeploymentDescProgressDeadline      = "Failed due to progress deadline"
	DeploymentDescFailedByUser          = "Deployment marked as failed"
)

// DeploymentDescRollback says which version a failed deployment reverted the job to.
func DeploymentDescRollback(desc string, version uint64) string {
	return desc + " - rolling back to job version " + uintString(version)
}

// DeploymentDescRollbackNoop says a failed deployment did not revert: the stable version's
// spec is the failing job's, so reverting would only fail again.
func DeploymentDescRollbackNoop(desc string, version uint64) string {
	return desc + " - not rolling back to stable job version " + uintString(version) + " as current job has same specification"
}

// DeploymentDescNoRollback says a failed deployment found no stable version to revert to.
func DeploymentDescNoRollback(desc string) string {
	return desc + " - no stable job version to auto revert to"
}

// EvalTriggerDeploymentWatcher marks evaluations the deployment watcher creates to place the
// next batch of a rolling update.
const EvalTriggerDeploymentWatcher = "deployment-watcher"

// EvalTriggerRollingUpdate marks evaluations created by a deployment's promotion or resume.
const EvalTriggerRollingUpdate = "rolling-update"

// Deployment tracks the rollout of one version of a job: the scheduler creates it in the plan
// that first places that version, the clients report the health of its allocations, and the
// leader's deployment watcher moves it on, to successful or failed. The field set is upstream's
// wire shape (api.Deployment).
type Deployment struct {
	ID                 string
	Namespace          string
	JobID              string
	JobVersion         uint64
	JobModifyIndex     uint64
	JobSpecModifyIndex uint64
	JobCreateIndex     uint64
	IsMultiregion      bool
	TaskGroups         map[string]*DeploymentState
	Status             string
	StatusDescription  string
	EvalPriority       int
	CreateIndex        uint64
	ModifyIndex        uint64
	// CreateTime and ModifyTime are unix nanoseconds fixed by the leader before the apply.
	CreateTime int64
	ModifyTime int64
}

// DeploymentState is the progress of one task group in a deployment. The alloc counts are
// derived by the state store from the allocations that carry the deployment's ID.
type DeploymentState struct {
	AutoRevert        bool
	AutoPromote       bool
	ProgressDeadline  time.Duration
	RequireProgressBy time.Time
	Promoted          bool
	PlacedCanaries    []string
	DesiredCanaries   int
	DesiredTotal      int
	PlacedAllocs      int
	HealthyAllocs     int
	UnhealthyAllocs   int
}

// Active reports whether the deployment may still change allocations.
func (d *Deployment) Active() bool {
	switch d.Status {
	case DeploymentStatusRunning, DeploymentStatusPaused, DeploymentStatusPending,
		DeploymentStatusBlocked, DeploymentStatusUnblocking, DeploymentStatusInitializing:
		return true
	}
	return false
}

// RequiresPromotion reports whether a group waits for its canaries to be promoted.
func (d *Deployment) RequiresPromotion() bool {
	for _, s := range d.TaskGroups {
		if s.DesiredCanaries > 0 && !s.Promoted {
			return true
		}
	}
	return false
}

// Copy returns a deep copy.
func (d *Deployment) Copy() *Deployment {
	return copyWith(d, func(c *Deployment) {
		if d.TaskGroups != nil {
			c.TaskGroups = make(map[string]*DeploymentState, len(d.TaskGroups))
			for name, s := range d.TaskGroups {
				sc := *s
				sc.PlacedCanaries = append([]string(nil), s.PlacedCanaries...)
				c.TaskGroups[name] = &sc
			}
		}
	})
}

// DeploymentStatusUpdate changes a deployment's status.
type DeploymentStatusUpdate struct {
	DeploymentID      string
	Status            string
	StatusDescription string
}

// DeploymentStatusUpdateRequest changes a deployment's status (fail, pause, resume, success,
// cancel) in one Raft entry, with the evaluation the change calls for and, for an automatic
// revert, the job version registered again. The leader fixes UpdatedAt and every ID.
type DeploymentStatusUpdateRequest struct {
	DeploymentUpdate *DeploymentStatusUpdate
	// Job, when set, is registered as the job's next version (an auto revert).
	Job       *Job
	Eval      *Evaluation
	UpdatedAt int64
	WriteRequest
}

// DeploymentPromoteRequest promotes the canaries of the named groups (every group with All).
type DeploymentPromoteRequest struct {
	DeploymentID string
	All          bool
	Groups       []string
	Eval         *Evaluation
	UpdatedAt    int64
	WriteRequest
}

// DeploymentAllocHealthRequest sets the health of allocations of a deployment by hand (the
// manual health check), and may fail the deployment and revert the job in the same entry.
type DeploymentAllocHealthRequest struct {
	DeploymentID           string
	HealthyAllocationIDs   []string
	UnhealthyAllocationIDs []string
	DeploymentUpdate       *DeploymentStatusUpdate
	Job                    *Job
	Eval                   *Evaluation
	// Timestamp is the time of the health, fixed by the leader.
	Timestamp int64
	UpdatedAt int64
	WriteRequest
}

// DeploymentListRequest lists deployments of a namespace ("*" for all), by ID prefix.
type DeploymentListRequest struct {
	QueryOptions
}

// DeploymentListResponse answers the deployment list reads.
type DeploymentListResponse struct {
	Deployments []*Deployment
	QueryMeta
}

// DeploymentSpecificRequest reads one deployment.
type DeploymentSpecificRequest struct {
	DeploymentID string
	QueryOptions
}

// SingleDeploymentResponse answers DeploymentSpecificRequest; nil when unknown.
type SingleDeploymentResponse struct {
	Deployment *Deployment
	QueryMeta
}

// DeploymentUpdateResponse answers the deployment writes, in upstream's shape.
type DeploymentUpdateResponse struct {
	EvalID                string
	EvalCreateIndex       uint64
	DeploymentModifyIndex uint64
	RevertedJobVersion    *uint64
	WriteMeta
}

// DeploymentEvent is the payload of events on TopicDeployment.
type DeploymentEvent struct {
	Deployment *Deployment
}

func uintString(v uint64) string { return strconv.FormatUint(v, 10) }

// DeploymentFailRequest asks for a running deployment to be marked failed.
type DeploymentFailRequest struct {
	DeploymentID string
	WriteRequest
}

// DeploymentPauseRequest pauses (Pause) or resumes a deployment.
type DeploymentPauseRequest struct {
	DeploymentID string
	Pause        bool
	WriteRequest
}

// JobPromoteRequest promotes the canaries of a job's newest deployment.
type JobPromoteRequest struct {
	JobID  string
	All    bool
	Groups []string
	WriteRequest
}
