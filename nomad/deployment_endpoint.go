package nomad

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/nomad/paginator"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// Deployment is the deployment RPC endpoint. Reads need read-job, writes submit-job, in the
// deployment's namespace (and in the request's, so that a caller without access learns
// nothing of an ID it may not see).
type Deployment struct {
	srv *Server
}

// List lists deployments of the namespace ("*": of the namespaces where the caller has
// read-job), oldest first, or by ID with a prefix.
func (d *Deployment) List(args *structs.DeploymentListRequest, reply *structs.DeploymentListResponse) error {
	if done, err := d.srv.forwardRead("Deployment.List", &args.QueryOptions, args, reply); done {
		return err
	}
	visible, err := d.srv.namespaceReader(&args.QueryOptions, acl.NamespaceCapabilityReadJob)
	if err != nil {
		return err
	}
	return d.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		all, err := store.Deployments(ws, args.Namespace, args.Prefix)
		if err != nil {
			return 0, err
		}
		reply.Deployments, reply.NextToken, err = paginator.Page(all, args.QueryOptions,
			paginator.Order[*structs.Deployment]{Key: func(x *structs.Deployment) paginator.Key {
				return createIndexOrID(args.Prefix, x.CreateIndex, x.ID)
			}},
			func(x *structs.Deployment) bool { return visible(x.Namespace) },
			func(x *structs.Deployment) (*structs.Deployment, error) { return x, nil })
		if err != nil {
			return 0, err
		}
		return maxIndex(store, "deployment"), nil
	})
}

// GetDeployment reads one deployment; reply.Deployment is nil when unknown.
func (d *Deployment) GetDeployment(args *structs.DeploymentSpecificRequest, reply *structs.SingleDeploymentResponse) error {
	if done, err := d.srv.forwardRead("Deployment.GetDeployment", &args.QueryOptions, args, reply); done {
		return err
	}
	aclObj, err := d.readACL(&args.QueryOptions)
	if err != nil {
		return err
	}
	err = d.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		dep, err := store.DeploymentByID(ws, args.DeploymentID)
		if err != nil {
			return 0, err
		}
		reply.Deployment = dep
		if dep != nil {
			return dep.ModifyIndex, nil
		}
		return maxIndex(store, "deployment"), nil
	})
	if err != nil {
		return err
	}
	if reply.Deployment != nil && !aclObj.AllowNamespaceOperation(reply.Deployment.Namespace, acl.NamespaceCapabilityReadJob) {
		ns := reply.Deployment.Namespace
		reply.Deployment = nil
		return structs.PermissionDenied("read-job capability required in namespace %q", ns)
	}
	return nil
}

// Allocations lists the allocations of a deployment.
func (d *Deployment) Allocations(args *structs.DeploymentSpecificRequest, reply *structs.AllocListResponse) error {
	if done, err := d.srv.forwardRead("Deployment.Allocations", &args.QueryOptions, args, reply); done {
		return err
	}
	aclObj, err := d.readACL(&args.QueryOptions)
	if err != nil {
		return err
	}
	var namespace string
	err = d.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		dep, err := store.DeploymentByID(ws, args.DeploymentID)
		if err != nil || dep == nil {
			reply.Allocations = []*structs.AllocListStub{}
			return maxIndex(store, "deployment", "allocs"), err
		}
		namespace = dep.Namespace
		allocs, err := store.AllocsByDeployment(ws, args.DeploymentID)
		if err != nil {
			return 0, err
		}
		reply.Allocations = make([]*structs.AllocListStub, 0, len(allocs))
		for _, a := range allocs {
			reply.Allocations = append(reply.Allocations, a.Stub())
		}
		return maxIndex(store, "deployment", "allocs"), nil
	})
	if err != nil {
		return err
	}
	if namespace != "" && !aclObj.AllowNamespaceOperation(namespace, acl.NamespaceCapabilityReadJob) {
		reply.Allocations = nil
		return structs.PermissionDenied("read-job capability required in namespace %q", namespace)
	}
	return nil
}

// readACL checks read-job in the request's namespace and returns the caller's ACL for the
// check on the deployment's own.
func (d *Deployment) readACL(opts *structs.QueryOptions) (*acl.ACL, error) {
	aclObj, _, err := d.srv.resolveACL(opts.AuthToken)
	if err != nil {
		return nil, err
	}
	if opts.Namespace == "" {
		opts.Namespace = structs.DefaultNamespace
	}
	if opts.Namespace != structs.AllNamespacesSentinel && !aclObj.AllowNamespaceOperation(opts.Namespace, acl.NamespaceCapabilityReadJob) {
		return nil, structs.PermissionDenied("read-job capability required in namespace %q", opts.Namespace)
	}
	return aclObj, nil
}

// writable is the write preamble after forwarding: submit-job in the request's namespace and
// the deployment's, the deployment must exist and still be active.
func (d *Deployment) writable(wr *structs.WriteRequest, id, verb string) (*structs.Deployment, *structs.Job, error) {
	aclObj, _, err := d.srv.resolveACL(wr.AuthToken)
	if err != nil {
		return nil, nil, err
	}
	if wr.Namespace == "" {
		wr.Namespace = structs.DefaultNamespace
	}
	if wr.Namespace != structs.AllNamespacesSentinel && !aclObj.AllowNamespaceOperation(wr.Namespace, acl.NamespaceCapabilitySubmitJob) {
		return nil, nil, structs.PermissionDenied("submit-job capability required in namespace %q", wr.Namespace)
	}
	if id == "" {
		return nil, nil, structs.BadRequest("missing deployment ID")
	}
	if err := d.srv.checkLeader(); err != nil {
		return nil, nil, err
	}
	store := d.srv.State()
	dep, err := store.DeploymentByID(nil, id)
	if err != nil {
		return nil, nil, err
	}
	if dep == nil {
		return nil, nil, structs.NotFound(structs.ErrDeploymentNotFound)
	}
	if !aclObj.AllowNamespaceOperation(dep.Namespace, acl.NamespaceCapabilitySubmitJob) {
		return nil, nil, structs.PermissionDenied("submit-job capability required in namespace %q", dep.Namespace)
	}
	if !dep.Active() {
		return nil, nil, structs.BadRequest("can't %s terminal deployment", verb)
	}
	job, err := store.JobByID(nil, dep.Namespace, dep.JobID)
	if err != nil {
		return nil, nil, err
	}
	if job == nil {
		return nil, nil, structs.NotFound(structs.ErrJobNotFound)
	}
	return dep, job, nil
}

// deploymentEval is the evaluation a deployment write asks the scheduler for.
func deploymentEval(job *structs.Job, dep *structs.Deployment, t int64) (*structs.Evaluation, error) {
	eval, err := newEval(job, structs.EvalTriggerRollingUpdate, dep.EvalPriority, t)
	if err != nil {
		return nil, err
	}
	eval.DeploymentID = dep.ID
	eval.JobModifyIndex = job.JobModifyIndex
	return eval, nil
}

func (d *Deployment) reply(reply *structs.DeploymentUpdateResponse, index uint64, eval *structs.Evaluation) {
	reply.Index, reply.DeploymentModifyIndex = index, index
	if eval != nil {
		reply.EvalID, reply.EvalCreateIndex = eval.ID, index
	}
}

// Fail marks a running deployment failed. Unlike a failure the watcher finds, it never
// reverts the job: an operator who wants a revert asks for one.
func (d *Deployment) Fail(args *structs.DeploymentFailRequest, reply *structs.DeploymentUpdateResponse) error {
	if done, err := d.srv.forward("Deployment.Fail", args, reply); done {
		return err
	}
	dep, job, err := d.writable(&args.WriteRequest, args.DeploymentID, "fail")
	if err != nil {
		return err
	}
	t := now().UnixNano()
	eval, err := deploymentEval(job, dep, t)
	if err != nil {
		return err
	}
	index, err := d.srv.raftApply(structs.DeploymentStatusUpdateRequestType, &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: dep.ID, Status: structs.DeploymentStatusFailed,
			StatusDescription: structs.DeploymentDescFailedByUser},
		Eval: eval, UpdatedAt: t,
	})
	if err != nil {
		return err
	}
	d.reply(reply, index, eval)
	return nil
}

// Pause pauses a running deployment, or resumes a paused one.
func (d *Deployment) Pause(args *structs.DeploymentPauseRequest, reply *structs.DeploymentUpdateResponse) error {
	if done, err := d.srv.forward("Deployment.Pause", args, reply); done {
		return err
	}
	verb := "resume"
	if args.Pause {
		verb = "pause"
	}
	dep, job, err := d.writable(&args.WriteRequest, args.DeploymentID, verb)
	if err != nil {
		return err
	}
	t := now().UnixNano()
	req := &structs.DeploymentStatusUpdateRequest{UpdatedAt: t,
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: dep.ID, Status: structs.DeploymentStatusPaused,
			StatusDescription: structs.DeploymentDescPaused}}
	if !args.Pause {
		req.DeploymentUpdate.Status, req.DeploymentUpdate.StatusDescription = structs.DeploymentStatusRunning, structs.DeploymentDescRunning
		if dep.RequiresPromotion() {
			req.DeploymentUpdate.StatusDescription = structs.DeploymentDescRunningNeedsPromotion
		}
		// Resumed, it may place what waited.
		if req.Eval, err = deploymentEval(job, dep, t); err != nil {
			return err
		}
	}
	index, err := d.srv.raftApply(structs.DeploymentStatusUpdateRequestType, req)
	if err != nil {
		return err
	}
	d.reply(reply, index, req.Eval)
	return nil
}

// Promote promotes the canaries of the named groups (all with args.All). The state refuses a
// group whose canaries are not all healthy.
func (d *Deployment) Promote(args *structs.DeploymentPromoteRequest, reply *structs.DeploymentUpdateResponse) error {
	if done, err := d.srv.forward("Deployment.Promote", args, reply); done {
		return err
	}
	dep, job, err := d.writable(&args.WriteRequest, args.DeploymentID, "promote")
	if err != nil {
		return err
	}
	if !args.All && len(args.Groups) == 0 {
		return structs.BadRequest("must promote all groups or name at least one group")
	}
	t := now().UnixNano()
	if args.Eval, err = deploymentEval(job, dep, t); err != nil {
		return err
	}
	args.UpdatedAt = t
	index, err := d.srv.raftApply(structs.DeploymentPromoteRequestType, args)
	if err != nil {
		return err
	}
	d.reply(reply, index, args.Eval)
	return nil
}

// SetAllocHealth sets the health of allocations of a deployment by hand (health_check
// "manual"); an unhealthy one fails the deployment through the watcher.
func (d *Deployment) SetAllocHealth(args *structs.DeploymentAllocHealthRequest, reply *structs.DeploymentUpdateResponse) error {
	if done, err := d.srv.forward("Deployment.SetAllocHealth", args, reply); done {
		return err
	}
	dep, job, err := d.writable(&args.WriteRequest, args.DeploymentID, "set health of allocations of a")
	if err != nil {
		return err
	}
	if len(args.HealthyAllocationIDs)+len(args.UnhealthyAllocationIDs) == 0 {
		return structs.BadRequest("must specify at least one healthy or unhealthy allocation ID")
	}
	t := now().UnixNano()
	if args.Eval, err = deploymentEval(job, dep, t); err != nil {
		return err
	}
	args.Timestamp, args.UpdatedAt = t, t
	args.DeploymentUpdate, args.Job = nil, nil
	index, err := d.srv.raftApply(structs.DeploymentAllocHealthRequestType, args)
	if err != nil {
		return err
	}
	d.reply(reply, index, args.Eval)
	return nil
}

// ByJob lists a job's deployments, newest first; without args.All, only those of the job as
// registered now.
func (d *Deployment) ByJob(args *structs.JobSpecificRequest, reply *structs.DeploymentListResponse) error {
	if done, err := d.srv.forwardRead("Deployment.ByJob", &args.QueryOptions, args, reply); done {
		return err
	}
	if err := d.srv.Endpoints.Job.authorizeRead(&args.QueryOptions); err != nil {
		return err
	}
	return d.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		all, err := store.DeploymentsByJob(ws, args.Namespace, args.JobID)
		if err != nil {
			return 0, err
		}
		job, err := store.JobByID(ws, args.Namespace, args.JobID)
		if err != nil {
			return 0, err
		}
		reply.Deployments = make([]*structs.Deployment, 0, len(all))
		for _, dep := range all {
			if !args.All && job != nil && dep.JobCreateIndex != job.CreateIndex {
				continue
			}
			reply.Deployments = append(reply.Deployments, dep)
		}
		return maxIndex(store, "deployment", "jobs"), nil
	})
}

// LatestByJob reads a job's newest deployment; nil when it has none.
func (d *Deployment) LatestByJob(args *structs.JobSpecificRequest, reply *structs.SingleDeploymentResponse) error {
	if done, err := d.srv.forwardRead("Deployment.LatestByJob", &args.QueryOptions, args, reply); done {
		return err
	}
	if err := d.srv.Endpoints.Job.authorizeRead(&args.QueryOptions); err != nil {
		return err
	}
	return d.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		dep, err := store.LatestDeploymentByJob(ws, args.Namespace, args.JobID)
		if err != nil {
			return 0, err
		}
		reply.Deployment = dep
		return maxIndex(store, "deployment", "jobs"), nil
	})
}

// Unblock answers for a deployment of one region: only multiregion deployments are ever
// blocked, and this server runs none.
func (d *Deployment) Unblock(args *structs.DeploymentFailRequest, reply *structs.DeploymentUpdateResponse) error {
	if done, err := d.srv.forward("Deployment.Unblock", args, reply); done {
		return err
	}
	dep, _, err := d.writable(&args.WriteRequest, args.DeploymentID, "unblock")
	if err != nil {
		return err
	}
	return structs.BadRequest("deployment %s is not multiregion: only a multiregion deployment can be unblocked", dep.ID)
}

// PromoteJob promotes the canaries of the job's newest deployment.
func (d *Deployment) PromoteJob(args *structs.JobPromoteRequest, reply *structs.DeploymentUpdateResponse) error {
	if done, err := d.srv.forward("Deployment.PromoteJob", args, reply); done {
		return err
	}
	aclObj, _, err := d.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	if args.Namespace == "" {
		args.Namespace = structs.DefaultNamespace
	}
	if !aclObj.AllowNamespaceOperation(args.Namespace, acl.NamespaceCapabilitySubmitJob) {
		return structs.PermissionDenied("submit-job capability required in namespace %q", args.Namespace)
	}
	dep, err := d.srv.State().LatestDeploymentByJob(nil, args.Namespace, args.JobID)
	if err != nil {
		return err
	}
	if dep == nil {
		return structs.NewErrCode(404, "job %q has no deployment", args.JobID)
	}
	return d.Promote(&structs.DeploymentPromoteRequest{DeploymentID: dep.ID, All: args.All, Groups: args.Groups,
		WriteRequest: args.WriteRequest}, reply)
}
