package nomad

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/nomad/paginator"
	"github.com/nomadfork/nomad/nomad/worker"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// Deployment is the deployment RPC endpoint. Reads need read-job, writes submit-job, in the
// deployment's namespace (and in the request's, so that a caller without access learns
// nothing of an ID it may not see).
type Deployment struct {
	srv *Server
}

// deploymentList lists deployments of the namespace ("*": of the namespaces where the caller
// has read-job), oldest first, or by ID with a prefix.
var deploymentList = read("Deployment.List", spec[structs.DeploymentListRequest, structs.DeploymentListResponse]{
	Prepare: func(req *structs.DeploymentListRequest) error {
		opsDefaultQueryNamespace(&req.QueryOptions)
		return nil
	},
	Authorize: opsNamespaceOrAll(acl.NamespaceCapabilityReadJob,
		func(req *structs.DeploymentListRequest) string { return req.Namespace }),
	Serve: func(c *rpcCall, req *structs.DeploymentListRequest, reply *structs.DeploymentListResponse) error {
		visible := opsVisibleNamespaces(c, req.Namespace, acl.NamespaceCapabilityReadJob)
		return pagedList(c.srv.blockingRPC, &req.QueryOptions, &reply.QueryMeta, &reply.Deployments,
			func(ws memdb.WatchSet, store *state.StateStore) ([]*structs.Deployment, error) {
				return store.Deployments(ws, req.Namespace, req.Prefix)
			},
			paginator.Order[*structs.Deployment]{Key: func(x *structs.Deployment) paginator.Key {
				return createIndexOrID(req.Prefix, x.CreateIndex, x.ID)
			}},
			func(x *structs.Deployment) bool { return visible(x.Namespace) },
			func(x *structs.Deployment) (*structs.Deployment, error) { return x, nil },
			func(store *state.StateStore) uint64 { return maxIndex(store, "deployment") })
	},
})

// deploymentByIDRule is read-job in the request's namespace ("*" passes); the deployment's
// own namespace is checked once it is found.
var deploymentByIDRule = opsNamespaceOrAll(acl.NamespaceCapabilityReadJob,
	func(req *structs.DeploymentSpecificRequest) string { return req.Namespace })

func deploymentByIDPrepare(req *structs.DeploymentSpecificRequest) error {
	opsDefaultQueryNamespace(&req.QueryOptions)
	return nil
}

// deploymentGet reads one deployment; reply.Deployment is nil when unknown.
var deploymentGet = read("Deployment.GetDeployment", spec[structs.DeploymentSpecificRequest, structs.SingleDeploymentResponse]{
	Prepare:   deploymentByIDPrepare,
	Authorize: deploymentByIDRule,
	Serve: func(c *rpcCall, req *structs.DeploymentSpecificRequest, reply *structs.SingleDeploymentResponse) error {
		err := blockingGet(c, &req.QueryOptions, &reply.QueryMeta,
			func(ws memdb.WatchSet, store *state.StateStore) (*structs.Deployment, error) {
				return store.DeploymentByID(ws, req.DeploymentID)
			},
			func(dep *structs.Deployment) { reply.Deployment = dep }, func(dep *structs.Deployment) uint64 { return dep.ModifyIndex }, "deployment")
		if err != nil {
			return err
		}
		if reply.Deployment != nil && !c.acl.AllowNamespaceOperation(reply.Deployment.Namespace, acl.NamespaceCapabilityReadJob) {
			ns := reply.Deployment.Namespace
			reply.Deployment = nil
			return structs.PermissionDenied("read-job capability required in namespace %q", ns)
		}
		return nil
	},
})

// deploymentAllocations lists the allocations of a deployment.
var deploymentAllocations = read("Deployment.Allocations", spec[structs.DeploymentSpecificRequest, structs.AllocListResponse]{
	Prepare:   deploymentByIDPrepare,
	Authorize: deploymentByIDRule,
	Serve: func(c *rpcCall, req *structs.DeploymentSpecificRequest, reply *structs.AllocListResponse) error {
		var namespace string
		err := c.srv.blockingRPC(&req.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			dep, err := store.DeploymentByID(ws, req.DeploymentID)
			if err != nil || dep == nil {
				reply.Allocations = []*structs.AllocListStub{}
				return maxIndex(store, "deployment", "allocs"), err
			}
			namespace = dep.Namespace
			allocs, err := store.AllocsByDeployment(ws, req.DeploymentID)
			if err != nil {
				return 0, err
			}
			reply.Allocations = views(allocs, (*structs.Allocation).Stub)
			return maxIndex(store, "deployment", "allocs"), nil
		})
		if err != nil {
			return err
		}
		if namespace != "" && !c.acl.AllowNamespaceOperation(namespace, acl.NamespaceCapabilityReadJob) {
			reply.Allocations = nil
			return structs.PermissionDenied("read-job capability required in namespace %q", namespace)
		}
		return nil
	},
})

// deploymentWriteRule is submit-job in the request's namespace ("*" passes); deploymentWritable checks
// the deployment's own.
func deploymentWriteRule[Req any](wr func(*Req) *structs.WriteRequest) func(*rpcCall, *Req) error {
	return opsNamespaceOrAll(acl.NamespaceCapabilitySubmitJob, func(req *Req) string { return wr(req).Namespace })
}

// deploymentIDRequired refuses a deployment write that names no deployment.
func deploymentIDRequired(id string) error {
	if id == "" {
		return structs.BadRequest("missing deployment ID")
	}
	return nil
}

// deploymentWritable finds the deployment a write acts on, on the leader: it must exist, be in a
// namespace where the caller has submit-job, and still be active; its job must exist.
func deploymentWritable(c *rpcCall, id, verb string) (*structs.Deployment, *structs.Job, error) {
	store := c.srv.State()
	dep, err := store.DeploymentByID(nil, id)
	if err != nil {
		return nil, nil, err
	}
	if dep == nil {
		return nil, nil, structs.NotFound(structs.ErrDeploymentNotFound)
	}
	if !c.acl.AllowNamespaceOperation(dep.Namespace, acl.NamespaceCapabilitySubmitJob) {
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
	eval, err := worker.NewEval(job, structs.EvalTriggerRollingUpdate, dep.EvalPriority, t)
	if err != nil {
		return nil, err
	}
	eval.DeploymentID = dep.ID
	eval.JobModifyIndex = job.JobModifyIndex
	return eval, nil
}

// deploymentReply fills a deployment write's answer from the index it was applied at.
func deploymentReply(reply *structs.DeploymentUpdateResponse, index uint64, eval *structs.Evaluation) {
	reply.Index, reply.DeploymentModifyIndex = index, index
	if eval != nil {
		reply.EvalID, reply.EvalCreateIndex = eval.ID, index
	}
}

// deploymentWrite declares a write on one deployment. The request's namespace defaults to
// the default one and the caller needs submit-job there; the request must name the
// deployment, which must exist, be active and be in a namespace where the caller has
// submit-job, and its job must exist (deploymentWritable, whose refusals name verb). build
// then makes the Raft entry of type msg, at the leader's time t, with the evaluation it
// carries (nil for none); the answer holds the index and that evaluation.
func deploymentWrite[Req any](name string, wr func(*Req) *structs.WriteRequest, id, verb func(*Req) string, msg structs.MessageType,
	build func(req *Req, dep *structs.Deployment, job *structs.Job, t int64) (entry any, eval *structs.Evaluation, err error)) *route[Req, structs.DeploymentUpdateResponse] {
	return write(name, spec[Req, structs.DeploymentUpdateResponse]{
		Prepare: func(req *Req) error {
			opsDefaultWriteNamespace(wr(req))
			return nil
		},
		Authorize: deploymentWriteRule(wr),
		Validate:  func(req *Req) error { return deploymentIDRequired(id(req)) },
		Serve: func(c *rpcCall, req *Req, reply *structs.DeploymentUpdateResponse) error {
			dep, job, err := deploymentWritable(c, id(req), verb(req))
			if err != nil {
				return err
			}
			entry, eval, err := build(req, dep, job, now().UnixNano())
			if err != nil {
				return err
			}
			index, err := c.srv.raftApply(msg, entry)
			if err != nil {
				return err
			}
			deploymentReply(reply, index, eval)
			return nil
		},
	})
}

// verbIs names a deployment write's action in its refusals.
func verbIs[Req any](verb string) func(*Req) string { return func(*Req) string { return verb } }

// deploymentFail marks a running deployment failed. Unlike a failure the watcher finds, it
// never reverts the job: an operator who wants a revert asks for one.
var deploymentFail = deploymentWrite("Deployment.Fail",
	func(req *structs.DeploymentFailRequest) *structs.WriteRequest { return &req.WriteRequest },
	func(req *structs.DeploymentFailRequest) string { return req.DeploymentID },
	verbIs[structs.DeploymentFailRequest]("fail"), structs.DeploymentStatusUpdateRequestType,
	func(_ *structs.DeploymentFailRequest, dep *structs.Deployment, job *structs.Job, t int64) (any, *structs.Evaluation, error) {
		eval, err := deploymentEval(job, dep, t)
		if err != nil {
			return nil, nil, err
		}
		return &structs.DeploymentStatusUpdateRequest{
			DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: dep.ID, Status: structs.DeploymentStatusFailed,
				StatusDescription: structs.DeploymentDescFailedByUser},
			Eval: eval, UpdatedAt: t,
		}, eval, nil
	})

// deploymentPause pauses a running deployment, or resumes a paused one.
var deploymentPause = deploymentWrite("Deployment.Pause",
	func(req *structs.DeploymentPauseRequest) *structs.WriteRequest { return &req.WriteRequest },
	func(req *structs.DeploymentPauseRequest) string { return req.DeploymentID },
	func(req *structs.DeploymentPauseRequest) string {
		if req.Pause {
			return "pause"
		}
		return "resume"
	}, structs.DeploymentStatusUpdateRequestType,
	func(args *structs.DeploymentPauseRequest, dep *structs.Deployment, job *structs.Job, t int64) (any, *structs.Evaluation, error) {
		req := &structs.DeploymentStatusUpdateRequest{UpdatedAt: t,
			DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: dep.ID, Status: structs.DeploymentStatusPaused,
				StatusDescription: structs.DeploymentDescPaused}}
		if !args.Pause {
			req.DeploymentUpdate.Status, req.DeploymentUpdate.StatusDescription = structs.DeploymentStatusRunning, structs.DeploymentDescRunning
			if dep.RequiresPromotion() {
				req.DeploymentUpdate.StatusDescription = structs.DeploymentDescRunningNeedsPromotion
			}
			// Resumed, it may place what waited.
			var err error
			if req.Eval, err = deploymentEval(job, dep, t); err != nil {
				return nil, nil, err
			}
		}
		return req, req.Eval, nil
	})

// deploymentPromote promotes the canaries of the named groups (all with All). The state
// refuses a group whose canaries are not all healthy. The groups are checked after the
// deployment is found, as they always were.
var deploymentPromote = deploymentWrite("Deployment.Promote",
	func(req *structs.DeploymentPromoteRequest) *structs.WriteRequest { return &req.WriteRequest },
	func(req *structs.DeploymentPromoteRequest) string { return req.DeploymentID },
	verbIs[structs.DeploymentPromoteRequest]("promote"), structs.DeploymentPromoteRequestType,
	func(args *structs.DeploymentPromoteRequest, dep *structs.Deployment, job *structs.Job, t int64) (any, *structs.Evaluation, error) {
		if !args.All && len(args.Groups) == 0 {
			return nil, nil, structs.BadRequest("must promote all groups or name at least one group")
		}
		var err error
		if args.Eval, err = deploymentEval(job, dep, t); err != nil {
			return nil, nil, err
		}
		args.UpdatedAt = t
		return args, args.Eval, nil
	})

// deploymentSetAllocHealth sets the health of allocations of a deployment by hand
// (health_check "manual"); an unhealthy one fails the deployment through the watcher.
var deploymentSetAllocHealth = deploymentWrite("Deployment.SetAllocHealth",
	func(req *structs.DeploymentAllocHealthRequest) *structs.WriteRequest { return &req.WriteRequest },
	func(req *structs.DeploymentAllocHealthRequest) string { return req.DeploymentID },
	verbIs[structs.DeploymentAllocHealthRequest]("set health of allocations of a"), structs.DeploymentAllocHealthRequestType,
	func(args *structs.DeploymentAllocHealthRequest, dep *structs.Deployment, job *structs.Job, t int64) (any, *structs.Evaluation, error) {
		if len(args.HealthyAllocationIDs)+len(args.UnhealthyAllocationIDs) == 0 {
			return nil, nil, structs.BadRequest("must specify at least one healthy or unhealthy allocation ID")
		}
		var err error
		if args.Eval, err = deploymentEval(job, dep, t); err != nil {
			return nil, nil, err
		}
		args.Timestamp, args.UpdatedAt = t, t
		args.DeploymentUpdate, args.Job = nil, nil
		return args, args.Eval, nil
	})

// deploymentByJobRule is read-job in the job's namespace.
var deploymentByJobRule = namespaceCap(acl.NamespaceCapabilityReadJob, func(req *structs.JobSpecificRequest) string { return req.Namespace })

func deploymentByJobPrepare(req *structs.JobSpecificRequest) error {
	opsDefaultQueryNamespace(&req.QueryOptions)
	return nil
}

// deploymentByJob lists a job's deployments, newest first; without All, only those of the
// job as registered now.
var deploymentByJob = read("Deployment.ByJob", spec[structs.JobSpecificRequest, structs.DeploymentListResponse]{
	Prepare:   deploymentByJobPrepare,
	Authorize: deploymentByJobRule,
	Serve: func(c *rpcCall, req *structs.JobSpecificRequest, reply *structs.DeploymentListResponse) error {
		return c.srv.blockingRPC(&req.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			all, err := store.DeploymentsByJob(ws, req.Namespace, req.JobID)
			if err != nil {
				return 0, err
			}
			job, err := store.JobByID(ws, req.Namespace, req.JobID)
			if err != nil {
				return 0, err
			}
			reply.Deployments = make([]*structs.Deployment, 0, len(all))
			for _, dep := range all {
				if !req.All && job != nil && dep.JobCreateIndex != job.CreateIndex {
					continue
				}
				reply.Deployments = append(reply.Deployments, dep)
			}
			return maxIndex(store, "deployment", "jobs"), nil
		})
	},
})

// deploymentLatestByJob reads a job's newest deployment; nil when it has none.
var deploymentLatestByJob = read("Deployment.LatestByJob", spec[structs.JobSpecificRequest, structs.SingleDeploymentResponse]{
	Prepare:   deploymentByJobPrepare,
	Authorize: deploymentByJobRule,
	Serve: func(c *rpcCall, req *structs.JobSpecificRequest, reply *structs.SingleDeploymentResponse) error {
		return blockingGet(c, &req.QueryOptions, &reply.QueryMeta,
			func(ws memdb.WatchSet, store *state.StateStore) (*structs.Deployment, error) {
				return store.LatestDeploymentByJob(ws, req.Namespace, req.JobID)
			},
			func(dep *structs.Deployment) { reply.Deployment = dep }, nil, "deployment", "jobs")
	},
})

// deploymentUnblock answers for a deployment of one region: only multiregion deployments
// are ever blocked, and this server runs none.
var deploymentUnblock = write("Deployment.Unblock", spec[structs.DeploymentFailRequest, structs.DeploymentUpdateResponse]{
	Prepare: func(req *structs.DeploymentFailRequest) error {
		opsDefaultWriteNamespace(&req.WriteRequest)
		return nil
	},
	Authorize: deploymentWriteRule(func(req *structs.DeploymentFailRequest) *structs.WriteRequest { return &req.WriteRequest }),
	Validate:  func(req *structs.DeploymentFailRequest) error { return deploymentIDRequired(req.DeploymentID) },
	Serve: func(c *rpcCall, req *structs.DeploymentFailRequest, _ *structs.DeploymentUpdateResponse) error {
		dep, _, err := deploymentWritable(c, req.DeploymentID, "unblock")
		if err != nil {
			return err
		}
		return structs.BadRequest("deployment %s is not multiregion: only a multiregion deployment can be unblocked", dep.ID)
	},
})

// deploymentPromoteJob promotes the canaries of the job's newest deployment, through
// Deployment.Promote's own row.
var deploymentPromoteJob = write("Deployment.PromoteJob", spec[structs.JobPromoteRequest, structs.DeploymentUpdateResponse]{
	Prepare:   func(req *structs.JobPromoteRequest) error { opsDefaultWriteNamespace(&req.WriteRequest); return nil },
	Authorize: namespaceCap(acl.NamespaceCapabilitySubmitJob, func(req *structs.JobPromoteRequest) string { return req.Namespace }),
	Serve: func(c *rpcCall, req *structs.JobPromoteRequest, reply *structs.DeploymentUpdateResponse) error {
		dep, err := c.srv.State().LatestDeploymentByJob(nil, req.Namespace, req.JobID)
		if err != nil {
			return err
		}
		if dep == nil {
			return structs.NewErrCode(404, "job %q has no deployment", req.JobID)
		}
		return deploymentPromote.Call(c.srv, &structs.DeploymentPromoteRequest{DeploymentID: dep.ID, All: req.All,
			Groups: req.Groups, WriteRequest: req.WriteRequest}, reply)
	},
})

// List lists deployments.
func (d *Deployment) List(args *structs.DeploymentListRequest, reply *structs.DeploymentListResponse) error {
	return deploymentList.Call(d.srv, args, reply)
}

// GetDeployment reads one deployment; reply.Deployment is nil when unknown.
func (d *Deployment) GetDeployment(args *structs.DeploymentSpecificRequest, reply *structs.SingleDeploymentResponse) error {
	return deploymentGet.Call(d.srv, args, reply)
}

// Allocations lists the allocations of a deployment.
func (d *Deployment) Allocations(args *structs.DeploymentSpecificRequest, reply *structs.AllocListResponse) error {
	return deploymentAllocations.Call(d.srv, args, reply)
}

// Fail marks a running deployment failed.
func (d *Deployment) Fail(args *structs.DeploymentFailRequest, reply *structs.DeploymentUpdateResponse) error {
	return deploymentFail.Call(d.srv, args, reply)
}

// Pause pauses a running deployment, or resumes a paused one.
func (d *Deployment) Pause(args *structs.DeploymentPauseRequest, reply *structs.DeploymentUpdateResponse) error {
	return deploymentPause.Call(d.srv, args, reply)
}

// Promote promotes the canaries of the named groups.
func (d *Deployment) Promote(args *structs.DeploymentPromoteRequest, reply *structs.DeploymentUpdateResponse) error {
	return deploymentPromote.Call(d.srv, args, reply)
}

// SetAllocHealth sets the health of allocations of a deployment by hand.
func (d *Deployment) SetAllocHealth(args *structs.DeploymentAllocHealthRequest, reply *structs.DeploymentUpdateResponse) error {
	return deploymentSetAllocHealth.Call(d.srv, args, reply)
}

// ByJob lists a job's deployments, newest first.
func (d *Deployment) ByJob(args *structs.JobSpecificRequest, reply *structs.DeploymentListResponse) error {
	return deploymentByJob.Call(d.srv, args, reply)
}

// LatestByJob reads a job's newest deployment; nil when it has none.
func (d *Deployment) LatestByJob(args *structs.JobSpecificRequest, reply *structs.SingleDeploymentResponse) error {
	return deploymentLatestByJob.Call(d.srv, args, reply)
}

// Unblock answers for a deployment of one region, which is never blocked.
func (d *Deployment) Unblock(args *structs.DeploymentFailRequest, reply *structs.DeploymentUpdateResponse) error {
	return deploymentUnblock.Call(d.srv, args, reply)
}

// PromoteJob promotes the canaries of the job's newest deployment.
func (d *Deployment) PromoteJob(args *structs.JobPromoteRequest, reply *structs.DeploymentUpdateResponse) error {
	return deploymentPromoteJob.Call(d.srv, args, reply)
}
