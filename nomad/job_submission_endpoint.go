package nomad

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// GetJobSubmission reads the source one version of a job was registered from; read-job in the
// request's namespace is needed.
func (j *Job) GetJobSubmission(args *structs.JobSubmissionRequest, reply *structs.JobSubmissionResponse) error {
	if done, err := j.srv.forwardRead("Job.GetJobSubmission", &args.QueryOptions, args, reply); done {
		return err
	}
	if err := j.authorizeRead(&args.QueryOptions); err != nil {
		return err
	}
	return j.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		sub, err := store.JobSubmission(ws, args.Namespace, args.JobID, args.Version)
		if err != nil {
			return 0, err
		}
		reply.Submission = sub
		if sub != nil {
			return sub.ModifyIndex, nil
		}
		return store.Index("job_submission"), nil
	})
}
