package structs

// JobPurgePlan is what purging a job would do (GET /v1/job/:id/purge-plan, ours): what the
// purge's transaction removes with the job, and what it leaves in place. It is read from one
// point-in-time view of the state, so its parts agree with each other.
type JobPurgePlan struct {
	Namespace string
	JobID     string
	// Protected says the purge would be refused (409) for everyone; ProtectionReason is why.
	Protected        bool
	ProtectionReason string `json:",omitempty"`
	Removes          JobPurgePlanRemoves
	Keeps            JobPurgePlanKeeps
}

// JobPurgePlanRemoves is what the purge removes from state. The purge record keeps the last
// version's spec and each allocation's last state.
type JobPurgePlanRemoves struct {
	// Versions are every stored version, newest first; a tagged one carries its tag's name
	// (tags are what keeps a version through the version limit and a job from the GC).
	Versions []JobPurgePlanVersion
	// Allocations counts the job's allocations by client status. A client still running one
	// kills its tasks.
	Allocations map[string]int
	// Deployments are the IDs of the job's deployments.
	Deployments []string
	// Services are the service registrations of the job's allocations.
	Services []JobPurgePlanService
	// ScalingPolicies are the IDs of the policies derived from the job's scaling blocks.
	ScalingPolicies []string
}

// JobPurgePlanVersion is one version of the job.
type JobPurgePlanVersion struct {
	Version uint64
	Tag     string `json:",omitempty"`
}

// JobPurgePlanService is one service registration of the job.
type JobPurgePlanService struct {
	ID          string
	ServiceName string
	AllocID     string
}

// JobPurgePlanKeeps is what stays after the purge.
type JobPurgePlanKeeps struct {
	// Evaluations is the number of the job's evaluations, which stay until the evaluation GC;
	// CanceledEvaluations of them are pending or blocked and the purge cancels them.
	Evaluations         int
	CanceledEvaluations int
	// Variables are the paths under nomad/jobs/<job> the caller may list: they outlive the
	// job, and a job registered again under its ID reads them. HiddenVariables counts those
	// the caller may not list.
	Variables       []string
	HiddenVariables int `json:",omitempty"`
	// Children are the periodic launches and dispatched instances of the job: they are jobs
	// of their own and keep running.
	Children []string
}

// JobPurgePlanResponse answers a purge plan read.
type JobPurgePlanResponse struct {
	Plan *JobPurgePlan
	QueryMeta
}
