package nomad

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// jobGetSubmission reads the source one version of a job was registered from; read-job in the
// request's namespace is needed.
var jobGetSubmission = read("Job.GetJobSubmission", spec[structs.JobSubmissionRequest, structs.JobSubmissionResponse]{
	Prepare:   jobQueryDefaultNamespace[structs.JobSubmissionRequest],
	Authorize: jobReadRule[structs.JobSubmissionRequest],
	Serve: func(c *rpcCall, req *structs.JobSubmissionRequest, reply *structs.JobSubmissionResponse) error {
		return blockingGet(c, &req.QueryOptions, &reply.QueryMeta,
			func(ws memdb.WatchSet, store *state.StateStore) (*structs.JobSubmission, error) {
				return store.JobSubmission(ws, req.Namespace, req.JobID, req.Version)
			},
			func(sub *structs.JobSubmission) { reply.Submission = sub }, func(sub *structs.JobSubmission) uint64 { return sub.ModifyIndex }, "job_submission")
	},
})

// GetJobSubmission reads the source one version of a job was registered from.
func (j *Job) GetJobSubmission(args *structs.JobSubmissionRequest, reply *structs.JobSubmissionResponse) error {
	return jobGetSubmission.Call(j.srv, args, reply)
}
