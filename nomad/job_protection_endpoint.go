package nomad

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// Deletion protection (ours): a protected job cannot be purged or garbage-collected by
// anyone, management included, until a holder of protect-job clears it. protect-job is in no
// shorthand policy, so whoever may purge a namespace's jobs cannot lift it unless granted.

func jobProtectionWrite(req *structs.JobProtectionRequest) *structs.WriteRequest {
	return &req.WriteRequest
}

// jobSetProtection sets or clears a job's protection; it needs protect-job in the job's
// namespace. A missing job is a 404.
var jobSetProtection = write("Job.SetProtection", spec[structs.JobProtectionRequest, structs.JobProtectionResponse]{
	Prepare:   jobWriteDefaultNamespace(jobProtectionWrite),
	Authorize: jobWriteRule(jobProtectionWrite, acl.NamespaceCapabilityProtectJob),
	Validate:  (*structs.JobProtectionRequest).Validate,
	Serve: func(c *rpcCall, req *structs.JobProtectionRequest, reply *structs.JobProtectionResponse) error {
		job, err := c.srv.State().JobByID(nil, req.Namespace, req.JobID)
		if err != nil {
			return err
		}
		if job == nil {
			return structs.NotFound(structs.ErrJobNotFound)
		}
		req.Actor = c.actor
		req.ModifyTime = now().UnixNano()
		index, err := c.srv.raftApply(structs.JobProtectionRequestType, req)
		if err != nil {
			return err
		}
		reply.Index = index
		return nil
	},
})

// jobGetProtection reads a job's protection; it needs read-job. A job never protected reads
// as unprotected; a missing job is a 404.
var jobGetProtection = read("Job.GetProtection", spec[structs.JobSpecificRequest, structs.JobProtectionGetResponse]{
	Prepare:   jobQueryDefaultNamespace[structs.JobSpecificRequest],
	Authorize: jobReadRule[structs.JobSpecificRequest],
	Serve: func(c *rpcCall, req *structs.JobSpecificRequest, reply *structs.JobProtectionGetResponse) error {
		return c.srv.blockingRPC(&req.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			job, err := store.JobByID(ws, req.Namespace, req.JobID)
			if err != nil {
				return 0, err
			}
			if job == nil {
				return 0, structs.NotFound(structs.ErrJobNotFound)
			}
			p, err := store.JobProtectionByID(ws, req.Namespace, req.JobID)
			if err != nil {
				return 0, err
			}
			if p == nil {
				p = &structs.JobProtection{Namespace: req.Namespace, JobID: req.JobID}
			}
			reply.Protection = p
			return maxIndex(store, "jobs", "job_protection"), nil
		})
	},
})

// SetProtection sets or clears a job's deletion protection.
func (j *Job) SetProtection(args *structs.JobProtectionRequest, reply *structs.JobProtectionResponse) error {
	return jobSetProtection.Call(j.srv, args, reply)
}

// GetProtection reads a job's deletion protection.
func (j *Job) GetProtection(args *structs.JobSpecificRequest, reply *structs.JobProtectionGetResponse) error {
	return jobGetProtection.Call(j.srv, args, reply)
}
