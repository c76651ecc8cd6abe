package structs

// JobSubmission is the source a job version was registered from, as its submitter sent it
// (upstream's job submission): kept per version, removed with the version or the job.
type JobSubmission struct {
	Namespace     string
	JobID         string
	Version       uint64
	Source        string
	Format        string
	VariableFlags map[string]string
	Variables     string
	CreateIndex   uint64
	ModifyIndex   uint64
}

// JobSubmissionRequest reads the submission of one version of a job.
type JobSubmissionRequest struct {
	JobID   string
	Version uint64
	QueryOptions
}

// JobSubmissionResponse answers JobSubmissionRequest; Submission is nil when there is none.
type JobSubmissionResponse struct {
	Submission *JobSubmission
	QueryMeta
}
