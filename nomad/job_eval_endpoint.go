package nomad

import (
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/nomad/worker"
	"github.com/nomadfork/nomad/structs"
)

func jobEvaluateWrite(req *structs.JobEvaluateRequest) *structs.WriteRequest {
	return &req.WriteRequest
}

// jobEvaluate creates an evaluation of a job as it stands (upstream's force evaluate);
// evaluate-job (which submit-job implies) in the job's namespace is needed. Periodic and
// parameterized jobs have nothing to evaluate themselves: their children do.
var jobEvaluate = write("Job.Evaluate", spec[structs.JobEvaluateRequest, structs.JobRegisterResponse]{
	Prepare:   jobWriteDefaultNamespace(jobEvaluateWrite),
	Authorize: jobWriteRule(jobEvaluateWrite, acl.NamespaceCapabilityEvaluateJob),
	Validate: func(req *structs.JobEvaluateRequest) error {
		if req.JobID == "" {
			return structs.BadRequest("missing job ID for evaluation")
		}
		return nil
	},
	Serve: func(c *rpcCall, req *structs.JobEvaluateRequest, reply *structs.JobRegisterResponse) error {
		job, err := c.srv.State().JobByID(nil, req.Namespace, req.JobID)
		if err != nil {
			return err
		}
		if job == nil {
			return structs.NotFound(structs.ErrJobNotFound)
		}
		if job.IsPeriodic() {
			return structs.BadRequest("can't evaluate periodic job")
		}
		if job.IsParameterized() {
			return structs.BadRequest("can't evaluate parameterized job")
		}
		eval, err := worker.NewEval(job, structs.EvalTriggerJobRegister, 0, now().UnixNano())
		if err != nil {
			return err
		}
		eval.JobModifyIndex = job.JobModifyIndex
		index, err := c.srv.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{
			Evals: []*structs.Evaluation{eval}, WriteRequest: req.WriteRequest,
		})
		if err != nil {
			return err
		}
		reply.EvalID = eval.ID
		reply.EvalCreateIndex = index
		reply.JobModifyIndex = job.JobModifyIndex
		reply.Index = index
		c.srv.setQueryMeta(&reply.QueryMeta)
		return nil
	},
})

// Evaluate creates an evaluation of a job as it stands.
func (j *Job) Evaluate(args *structs.JobEvaluateRequest, reply *structs.JobRegisterResponse) error {
	return jobEvaluate.Call(j.srv, args, reply)
}

func jobPeriodicForceWrite(req *structs.JobPeriodicForceRequest) *structs.WriteRequest {
	return &req.WriteRequest
}

// jobPeriodicForce launches a child of a periodic job now, as its schedule would (the same
// launchPeriodicChild the leader's dispatcher calls): a batch of the job's spec under the ID
// "<parent>/periodic-<unix seconds>", registered with its evaluation and the launch record in
// one Raft entry. dispatch-job in the job's namespace is needed, as upstream.
var jobPeriodicForce = write("Job.PeriodicForce", spec[structs.JobPeriodicForceRequest, structs.PeriodicForceResponse]{
	Prepare:   jobWriteDefaultNamespace(jobPeriodicForceWrite),
	Authorize: jobWriteRule(jobPeriodicForceWrite, acl.NamespaceCapabilityDispatchJob),
	Serve: func(c *rpcCall, req *structs.JobPeriodicForceRequest, reply *structs.PeriodicForceResponse) error {
		parent, err := c.srv.State().JobByID(nil, req.Namespace, req.JobID)
		if err != nil {
			return err
		}
		if parent == nil {
			return structs.NotFound(structs.ErrJobNotFound)
		}
		if !parent.IsPeriodic() {
			return structs.BadRequest("can't force launch non-periodic job")
		}
		if err := c.srv.Endpoints.Job.checkDispatchNamespace(parent); err != nil {
			return err
		}
		eval, index, err := c.srv.launchPeriodicChild(parent, now(), c.actor, req.WriteRequest)
		if err != nil {
			return err
		}
		reply.EvalID = eval.ID
		reply.EvalCreateIndex = index
		reply.Index = index
		return nil
	},
})

// PeriodicForce launches a child of a periodic job now.
func (j *Job) PeriodicForce(args *structs.JobPeriodicForceRequest, reply *structs.PeriodicForceResponse) error {
	return jobPeriodicForce.Call(j.srv, args, reply)
}
