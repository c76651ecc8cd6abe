package structs

// JobStatusesRequest asks for a compact status of many jobs at once, as the web UI's job list
// reads it (/v1/jobs/statuses). Jobs, when set, limits the answer to those jobs; otherwise
// the answer pages through every visible job, most recently modified first.
type JobStatusesRequest struct {
	Jobs            []NamespacedID
	IncludeChildren bool
	QueryOptions
}

// JobStatusesResponse answers JobStatusesRequest.
type JobStatusesResponse struct {
	Jobs []JobStatusesJob
	QueryMeta
}

// JobStatusesJob is one job's compact status: its identity, its allocations' statuses, the
// sum of its groups' counts and its latest deployment.
type JobStatusesJob struct {
	NamespacedID
	Name             string
	Type             string
	NodePool         string
	Datacenters      []string
	Priority         int
	Version          uint64
	SubmitTime       int64
	ModifyIndex      uint64
	Allocs           []JobStatusesAlloc
	GroupCountSum    int
	ChildStatuses    []string
	ParentID         string
	LatestDeployment *JobStatusesLatestDeployment
	Stop             bool
	Status           string
}

// JobStatusesAlloc is one allocation as the job status list shows it.
type JobStatusesAlloc struct {
	ID               string
	Group            string
	ClientStatus     string
	NodeID           string
	DeploymentStatus JobStatusesDeployment
	JobVersion       uint64
	FollowupEvalID   string
	HasPausedTask    bool
}

// JobStatusesDeployment is an allocation's place in its deployment.
type JobStatusesDeployment struct {
	Canary  bool
	Healthy *bool
}

// JobStatusesLatestDeployment is the summary of a job's newest deployment.
type JobStatusesLatestDeployment struct {
	ID                string
	IsActive          bool
	JobVersion        uint64
	Status            string
	StatusDescription string
	AllAutoPromote    bool
	RequiresPromotion bool
}
