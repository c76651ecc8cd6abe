package nomad

import (
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/structs"
)

// Evaluate creates an evaluation of a job as it stands (upstream's force evaluate);
// evaluate-job (which submit-job implies) in the job's namespace is needed. Periodic and parameterized jobs have nothing to evaluate
// themselves: their children do.
func (j *Job) Evaluate(args *structs.JobEvaluateRequest, reply *structs.JobRegisterResponse) error {
	if done, err := j.srv.forward("Job.Evaluate", args, reply); done {
		return err
	}
	_, _, err := j.authorizeJobWrite(&args.WriteRequest, acl.NamespaceCapabilityEvaluateJob)
	if err != nil {
		return err
	}
	if args.JobID == "" {
		return structs.BadRequest("missing job ID for evaluation")
	}
	if err := j.srv.checkLeader(); err != nil {
		return err
	}
	job, err := j.srv.State().JobByID(nil, args.Namespace, args.JobID)
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
	eval, err := newEval(job, structs.EvalTriggerJobRegister, 0, now().UnixNano())
	if err != nil {
		return err
	}
	eval.JobModifyIndex = job.JobModifyIndex
	index, err := j.srv.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{
		Evals: []*structs.Evaluation{eval}, WriteRequest: args.WriteRequest,
	})
	if err != nil {
		return err
	}
	reply.EvalID = eval.ID
	reply.EvalCreateIndex = index
	reply.JobModifyIndex = job.JobModifyIndex
	reply.Index = index
	j.srv.setQueryMeta(&reply.QueryMeta)
	return nil
}

// PeriodicForce launches a child of a periodic job now, as its schedule would (the same
// launchPeriodicChild the leader's dispatcher calls): a batch of the job's spec under the ID
// "<parent>/periodic-<unix seconds>", registered with its evaluation and the launch record in
// one Raft entry. dispatch-job in the job's namespace is needed, as upstream.
func (j *Job) PeriodicForce(args *structs.JobPeriodicForceRequest, reply *structs.PeriodicForceResponse) error {
	if done, err := j.srv.forward("Job.PeriodicForce", args, reply); done {
		return err
	}
	_, actor, err := j.authorizeJobWrite(&args.WriteRequest, acl.NamespaceCapabilityDispatchJob)
	if err != nil {
		return err
	}
	if err := j.srv.checkLeader(); err != nil {
		return err
	}
	parent, err := j.srv.State().JobByID(nil, args.Namespace, args.JobID)
	if err != nil {
		return err
	}
	if parent == nil {
		return structs.NotFound(structs.ErrJobNotFound)
	}
	if !parent.IsPeriodic() {
		return structs.BadRequest("can't force launch non-periodic job")
	}
	eval, index, err := j.srv.launchPeriodicChild(parent, now(), actor, args.WriteRequest)
	if err != nil {
		return err
	}
	reply.EvalID = eval.ID
	reply.EvalCreateIndex = index
	reply.Index = index
	return nil
}
