package nomad

import (
	"errors"

	"github.com/hashicorp/go-uuid"
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/nomad/worker"
	"github.com/nomadfork/nomad/structs"
)

func jobDispatchWrite(req *structs.JobDispatchRequest) *structs.WriteRequest {
	return &req.WriteRequest
}

// jobDispatch creates a child of a parameterized job: the parent's spec under
// "<parent>/dispatch-[<prefix>-]<unix>-<8 hex>" with the request's payload and meta, and its
// evaluation, in one Raft entry. dispatch-job in the job's namespace is needed. A request
// carrying an idempotency token that a live (not stopped) child of the parent was dispatched
// with answers with that child and writes nothing.
var jobDispatch = write("Job.Dispatch", spec[structs.JobDispatchRequest, structs.JobDispatchResponse]{
	Prepare:   jobWriteDefaultNamespace(jobDispatchWrite),
	Authorize: jobRegistrationRule(jobDispatchWrite, acl.NamespaceCapabilityDispatchJob),
	Validate: func(req *structs.JobDispatchRequest) error {
		if req.JobID == "" {
			return structs.BadRequest("missing parameterized job ID")
		}
		return nil
	},
	Serve: func(c *rpcCall, req *structs.JobDispatchRequest, reply *structs.JobDispatchResponse) error {
		return c.srv.Endpoints.Job.dispatch(req, c.actor, reply)
	},
})

// Dispatch creates a child of a parameterized job.
func (j *Job) Dispatch(args *structs.JobDispatchRequest, reply *structs.JobDispatchResponse) error {
	return jobDispatch.Call(j.srv, args, reply)
}

// dispatch makes the child of an authorized, valid dispatch request, on the leader.
func (j *Job) dispatch(args *structs.JobDispatchRequest, actor *structs.Actor, reply *structs.JobDispatchResponse) error {
	store := j.srv.State()
	parent, err := store.JobByID(nil, args.Namespace, args.JobID)
	if err != nil {
		return err
	}
	if parent == nil {
		return structs.NotFound(structs.ErrJobNotFound)
	}
	if err := structs.ValidateDispatch(parent, args); err != nil {
		return err
	}
	if err := j.checkDispatchNamespace(parent); err != nil {
		return err
	}
	if found, err := j.dispatchedWithToken(parent, args.IdempotencyToken, reply); err != nil || found {
		return err
	}
	suffix, err := uuid.GenerateUUID()
	if err != nil {
		return err
	}
	t := now()
	id := structs.DispatchedID(parent.ID, args.IdPrefixTemplate, t.Unix(), suffix[:8])
	child := parent.DispatchChild(id, t, args.Payload, args.Meta, args.IdempotencyToken)
	if args.Priority != 0 {
		child.Priority = args.Priority
	}
	if err := j.srv.checkJobTotalSize(store, nil, child); err != nil {
		return err
	}
	if actor != nil {
		child.NomadTokenID = actor.AccessorID
	}
	var eval *structs.Evaluation
	// A dispatched child of a periodic parameterized job is itself periodic: the dispatcher
	// launches it, no evaluation runs it directly (as upstream).
	if !child.IsPeriodic() {
		if eval, err = worker.NewEval(child, structs.EvalTriggerJobRegister, 0, t.UnixNano()); err != nil {
			return err
		}
	}
	req := &structs.JobRegisterRequest{Job: child, Eval: eval, Actor: actor, WriteRequest: args.WriteRequest}
	index, err := j.srv.raftApply(structs.JobRegisterRequestType, req)
	if errors.Is(err, structs.ErrDispatchTokenUsed) {
		// A dispatch with the same token won the race: answer with its child.
		if found, lookupErr := j.dispatchedWithToken(parent, args.IdempotencyToken, reply); lookupErr != nil || found {
			return lookupErr
		}
	}
	if err != nil {
		return err
	}
	reply.DispatchedJobID = child.ID
	reply.JobCreateIndex = index
	if eval != nil {
		reply.EvalID = eval.ID
		reply.EvalCreateIndex = index
	}
	reply.Index = index
	return nil
}

// dispatchedWithToken fills reply with the live (not stopped) child of parent dispatched with
// token, if there is one.
func (j *Job) dispatchedWithToken(parent *structs.Job, token string, reply *structs.JobDispatchResponse) (bool, error) {
	if token == "" {
		return false, nil
	}
	children, err := j.srv.State().Jobs(nil, parent.Namespace, parent.ID+structs.DispatchLaunchSuffix)
	if err != nil {
		return false, err
	}
	for _, c := range children {
		if c.ParentID == parent.ID && c.DispatchIdempotencyToken == token && !c.Stop {
			reply.DispatchedJobID = c.ID
			reply.JobCreateIndex = c.CreateIndex
			reply.Index = c.ModifyIndex
			return true, nil
		}
	}
	return false, nil
}
