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
		return c.srv.blockingRPC(&req.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			sub, err := store.JobSubmission(ws, req.Namespace, req.JobID, req.Version)
			if err != nil {
				return 0, err
			}
			reply.Submission = sub
			if sub != nil {
				return sub.ModifyIndex, nil
			}
			return store.Index("job_submission"), nil
		})
	},
})

// GetJobSubmission reads the source one version of a job was registered from.
func (j *Job) GetJobSubmission(args *structs.JobSubmissionRequest, reply *structs.JobSubmissionResponse) error {
	return jobGetSubmission.Call(j.srv, args, reply)
}
