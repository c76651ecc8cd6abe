package nomad

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/nomad/paginator"
	"github.com/nomadfork/nomad/nomad/worker"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// Alloc is the allocation RPC endpoint.
type Alloc struct {
	srv *Server
}

var allocList = read("Alloc.List", spec[structs.AllocListRequest, structs.AllocListResponse]{
	Prepare: func(req *structs.AllocListRequest) error { nodeRowsDefaultNamespace(&req.QueryOptions); return nil },
	Authorize: func(c *rpcCall, req *structs.AllocListRequest) error {
		return allocReadJobRule(c, &req.QueryOptions)
	},
	Serve: func(c *rpcCall, args *structs.AllocListRequest, reply *structs.AllocListResponse) error {
		visible := allocNamespaceVisible(c, &args.QueryOptions, acl.NamespaceCapabilityReadJob)
		return pagedList(c.srv.blockingRPCZero, &args.QueryOptions, &reply.QueryMeta, &reply.Allocations,
			func(ws memdb.WatchSet, store *state.StateStore) ([]*structs.Allocation, error) {
				return store.Allocs(ws, args.Namespace, args.Prefix)
			},
			paginator.Order[*structs.Allocation]{Key: func(a *structs.Allocation) paginator.Key {
				return createIndexOrID(args.Prefix, a.CreateIndex, a.ID)
			}},
			func(a *structs.Allocation) bool { return visible(a.Namespace) },
			func(a *structs.Allocation) (*structs.AllocListStub, error) { return a.Stub(), nil },
			func(store *state.StateStore) uint64 { return store.Index("allocs") })
	},
})

// List lists allocations of the namespace ("*": of the namespaces where the caller has
// read-job).
func (a *Alloc) List(args *structs.AllocListRequest, reply *structs.AllocListResponse) error {
	return allocList.Call(a.srv, args, reply)
}

// createIndexOrID is the list order upstream gives allocations, evaluations and ACL tokens:
// by ID when the caller asks for an ID prefix, else oldest first by create index.
func createIndexOrID(prefix string, createIndex uint64, id string) paginator.Key {
	if prefix != "" {
		return paginator.ByID(id)
	}
	return paginator.ByCreateIndexID(createIndex, id)
}

var allocGetAlloc = read("Alloc.GetAlloc", spec[structs.AllocSpecificRequest, structs.SingleAllocResponse]{
	Prepare: func(req *structs.AllocSpecificRequest) error { nodeRowsDefaultNamespace(&req.QueryOptions); return nil },
	Authorize: func(c *rpcCall, req *structs.AllocSpecificRequest) error {
		return allocReadJobRule(c, &req.QueryOptions)
	},
	Serve: func(c *rpcCall, args *structs.AllocSpecificRequest, reply *structs.SingleAllocResponse) error {
		err := blockingGet(c, &args.QueryOptions, &reply.QueryMeta,
			func(ws memdb.WatchSet, store *state.StateStore) (*structs.Allocation, error) {
				return store.AllocByID(ws, args.AllocID)
			},
			func(alloc *structs.Allocation) { reply.Alloc = alloc }, func(alloc *structs.Allocation) uint64 { return alloc.ModifyIndex }, "allocs")
		if err != nil {
			return err
		}
		if reply.Alloc != nil && !c.acl.AllowNamespaceOperation(reply.Alloc.Namespace, acl.NamespaceCapabilityReadJob) {
			// Name the namespace that was refused, the allocation's: the caller may read the
			// one it asked in, so naming that would point at the wrong policy.
			ns := reply.Alloc.Namespace
			reply.Alloc = nil
			return structs.PermissionDenied("read-job capability required in namespace %q", ns)
		}
		return nil
	},
})

// GetAlloc reads one allocation. read-job is needed in the request's namespace (so a caller
// with no access learns nothing, not even whether the ID exists) and in the allocation's.
func (a *Alloc) GetAlloc(args *structs.AllocSpecificRequest, reply *structs.SingleAllocResponse) error {
	return allocGetAlloc.Call(a.srv, args, reply)
}

var allocListByJob = read("Alloc.ListByJob", spec[structs.JobSpecificRequest, structs.AllocListResponse]{
	Prepare:   func(req *structs.JobSpecificRequest) error { nodeRowsDefaultNamespace(&req.QueryOptions); return nil },
	Authorize: namespaceCap(acl.NamespaceCapabilityReadJob, func(req *structs.JobSpecificRequest) string { return req.Namespace }),
	Serve: func(c *rpcCall, args *structs.JobSpecificRequest, reply *structs.AllocListResponse) error {
		return c.srv.blockingRPCZero(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			allocs, err := store.AllocsByJob(ws, args.Namespace, args.JobID)
			if err != nil {
				return 0, err
			}
			job, err := store.JobByID(ws, args.Namespace, args.JobID)
			if err != nil {
				return 0, err
			}
			reply.Allocations = make([]*structs.AllocListStub, 0, len(allocs))
			for _, alloc := range allocs {
				if !args.All && job != nil && alloc.Job != nil && alloc.Job.CreateIndex != job.CreateIndex {
					continue
				}
				reply.Allocations = append(reply.Allocations, alloc.Stub())
			}
			return maxIndex(store, "allocs", "jobs"), nil
		})
	},
})

// ListByJob lists a job's allocations. Without args.All, only those of the job as registered
// now: allocations of an earlier job with the same ID (purged and registered again) are left
// out, as upstream does.
func (a *Alloc) ListByJob(args *structs.JobSpecificRequest, reply *structs.AllocListResponse) error {
	return allocListByJob.Call(a.srv, args, reply)
}

var allocListByEval = read("Alloc.ListByEval", spec[structs.EvalSpecificRequest, structs.AllocListResponse]{
	Authorize: func(c *rpcCall, req *structs.EvalSpecificRequest) error {
		eval, err := c.srv.State().EvalByID(nil, req.EvalID)
		if err != nil {
			return err
		}
		// An unknown evaluation placed nothing: an empty list, as upstream, for a caller who
		// may read jobs in the request's namespace.
		ns := req.Namespace
		if ns == "" {
			ns = structs.DefaultNamespace
		}
		if eval != nil {
			ns = eval.Namespace
		}
		if !c.acl.AllowNamespaceOperation(ns, acl.NamespaceCapabilityReadJob) {
			return structs.PermissionDenied("read-job capability required in namespace %q", ns)
		}
		return nil
	},
	Serve: func(c *rpcCall, args *structs.EvalSpecificRequest, reply *structs.AllocListResponse) error {
		return c.srv.blockingRPCZero(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			allocs, err := store.AllocsByEval(ws, args.EvalID)
			if err != nil {
				return 0, err
			}
			reply.Allocations = views(allocs, (*structs.Allocation).Stub)
			return store.Index("allocs"), nil
		})
	},
})

// ListByEval lists the allocations an evaluation placed; read-job in its namespace is needed.
func (a *Alloc) ListByEval(args *structs.EvalSpecificRequest, reply *structs.AllocListResponse) error {
	return allocListByEval.Call(a.srv, args, reply)
}

var allocStop = write("Alloc.Stop", spec[structs.AllocStopRequest, structs.AllocStopResponse]{
	Prepare: func(req *structs.AllocStopRequest) error {
		if req.AllocID == "" {
			return structs.BadRequest("missing allocation ID")
		}
		if req.Namespace == "" {
			req.Namespace = structs.DefaultNamespace
		}
		return nil
	},
	// The allocation's namespace decides, or the request's for an ID that does not exist, so
	// that a caller with no access learns nothing.
	Authorize: func(c *rpcCall, req *structs.AllocStopRequest) error {
		ns := req.Namespace
		if ns == "" {
			ns = structs.DefaultNamespace
		}
		alloc, err := c.srv.State().AllocByID(nil, req.AllocID)
		if err != nil {
			return err
		}
		if alloc != nil {
			ns = alloc.Namespace
		}
		if !c.acl.AllowNamespaceOperation(ns, acl.NamespaceCapabilityAllocLifecycle) {
			return structs.PermissionDenied("%s capability required in namespace %q", acl.NamespaceCapabilityAllocLifecycle, ns)
		}
		return nil
	},
	Serve: func(c *rpcCall, args *structs.AllocStopRequest, reply *structs.AllocStopResponse) error {
		store := c.srv.State()
		alloc, err := store.AllocByID(nil, args.AllocID)
		if err != nil {
			return err
		}
		if alloc == nil {
			return structs.NotFound(structs.ErrAllocNotFound)
		}
		// Authorize read the allocation a moment ago; one that appeared since is held to its
		// own namespace.
		if !c.acl.AllowNamespaceOperation(alloc.Namespace, acl.NamespaceCapabilityAllocLifecycle) {
			return structs.PermissionDenied("%s capability required in namespace %q", acl.NamespaceCapabilityAllocLifecycle, alloc.Namespace)
		}
		job := alloc.Job
		if current, err := store.JobByID(nil, alloc.Namespace, alloc.JobID); err != nil {
			return err
		} else if current != nil {
			job = current
		}
		if job == nil {
			return structs.BadRequest("allocation %s has no job to evaluate", alloc.ID)
		}
		t := now().UnixNano()
		eval, err := worker.NewEval(job, structs.EvalTriggerAllocStop, 0, t)
		if err != nil {
			return err
		}
		migrate := true
		tr := &api.DesiredTransition{Migrate: &migrate}
		if args.NoShutdownDelay {
			tr.NoShutdownDelay = &migrate
		}
		if args.Reschedule {
			tr.Reschedule = &migrate
		}
		index, err := c.srv.raftApply(structs.AllocUpdateDesiredTransitionRequestType, &structs.AllocUpdateDesiredTransitionRequest{
			Allocs: map[string]*api.DesiredTransition{alloc.ID: tr}, Evals: []*structs.Evaluation{eval}, UpdatedAt: t,
		})
		if err != nil {
			return err
		}
		reply.EvalID = eval.ID
		reply.Index = index
		return nil
	},
})

// Stop marks an allocation to migrate and creates an evaluation of its job in the same Raft
// entry: the scheduler stops it and places a replacement, as upstream's alloc stop does.
// alloc-lifecycle is needed in the allocation's namespace (and in the request's, for an ID
// that does not exist, so a caller with no access learns nothing).
func (a *Alloc) Stop(args *structs.AllocStopRequest, reply *structs.AllocStopResponse) error {
	return allocStop.Call(a.srv, args, reply)
}

var allocUpdateFromClient = write("Alloc.UpdateFromClient", reportedByNode(func(req *structs.AllocUpdateRequest) string { return req.NodeID }, "allocation update",
	spec[structs.AllocUpdateRequest, structs.GenericResponse]{
		Validate: atLeastOne(func(req *structs.AllocUpdateRequest) int { return len(req.Alloc) }, "must update at least one allocation"),
		Serve: func(c *rpcCall, req *structs.AllocUpdateRequest, reply *structs.GenericResponse) error {
			return c.srv.Endpoints.Alloc.updateFromClient(req, reply)
		},
	}))

// UpdateFromClient applies what a node's client reports about its allocations. Only the
// node itself (its secret) or a caller with node write access may report, and only about
// allocations placed on that node.
func (a *Alloc) UpdateFromClient(args *structs.AllocUpdateRequest, reply *structs.GenericResponse) error {
	return allocUpdateFromClient.Call(a.srv, args, reply)
}

func (a *Alloc) updateFromClient(args *structs.AllocUpdateRequest, reply *structs.GenericResponse) error {
	store := a.srv.State()
	for _, update := range args.Alloc {
		if update == nil {
			return structs.BadRequest("missing allocation in update")
		}
		existing, err := store.AllocByID(nil, update.ID)
		if err != nil {
			return err
		}
		if existing != nil && existing.NodeID != args.NodeID {
			return errAllocNotOnNode(update.ID, args.NodeID)
		}
		if existing == nil {
			// Its job may have been removed while it ran: the purge record keeps it, and the
			// report of its end is still accepted from its own node. An ID nobody placed is
			// refused like another node's: a node reports only what runs on it, and nothing
			// it makes up reaches Raft.
			rec, err := store.PurgeRecordByAllocID(update.ID)
			if err != nil {
				return err
			}
			if rec == nil || !purgedOnNode(rec, update.ID, args.NodeID) {
				return errAllocNotOnNode(update.ID, args.NodeID)
			}
		}
		switch update.ClientStatus {
		case structs.AllocClientStatusPending, structs.AllocClientStatusRunning, structs.AllocClientStatusComplete,
			structs.AllocClientStatusFailed, structs.AllocClientStatusLost, structs.AllocClientStatusUnknown:
		default:
			return structs.BadRequest("allocation %s: invalid client status %q", update.ID, update.ClientStatus)
		}
	}
	args.UpdatedAt = now().UnixNano()
	// A failure is evaluated at once, as upstream: the scheduler decides, by the group's
	// reschedule policy, whether and when to replace it.
	evals, err := a.failureEvals(args)
	if err != nil {
		return err
	}
	args.Evals = evals
	index, err := a.srv.raftApply(structs.AllocClientUpdateRequestType, args)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// errAllocNotOnNode is the one answer to a node naming an allocation that is not placed on it,
// whether another node's or none at all, so that the answer tells which IDs exist to nobody.
func errAllocNotOnNode(allocID, nodeID string) error {
	return structs.PermissionDenied("allocation %s is not placed on node %s", allocID, nodeID)
}

// purgedOnNode reports whether the record's allocation allocID was placed on nodeID.
func purgedOnNode(rec *structs.PurgeRecord, allocID, nodeID string) bool {
	for _, a := range rec.Allocations {
		if a.ID == allocID {
			return a.NodeID == nodeID
		}
	}
	return false
}

// failureEvals makes one evaluation per job of which this update reports a running
// allocation as newly failed, or an unknown one as back (reconnected); jobs stopped or gone
// get none.
func (a *Alloc) failureEvals(args *structs.AllocUpdateRequest) ([]*structs.Evaluation, error) {
	store := a.srv.State()
	seen := map[structs.NamespacedID]bool{}
	var out []*structs.Evaluation
	for _, update := range args.Alloc {
		existing, err := store.AllocByID(nil, update.ID)
		if err != nil {
			return nil, err
		}
		if existing == nil || existing.DesiredStatus != structs.AllocDesiredStatusRun {
			continue
		}
		// An allocation that was unknown (its node disconnected) and is reported again has
		// reconnected: the scheduler decides between it and its replacement.
		trigger := structs.EvalTriggerAllocFailure
		switch {
		case existing.ClientStatus == structs.AllocClientStatusUnknown && update.ClientStatus != structs.AllocClientStatusUnknown:
			trigger = structs.EvalTriggerReconnect
		case update.ClientStatus != structs.AllocClientStatusFailed || existing.ClientStatus == structs.AllocClientStatusFailed:
			continue
		}
		id := structs.NamespacedID{Namespace: existing.Namespace, ID: existing.JobID}
		if seen[id] {
			continue
		}
		seen[id] = true
		job, err := store.JobByID(nil, existing.Namespace, existing.JobID)
		if err != nil {
			return nil, err
		}
		if job == nil || job.Stop {
			continue
		}
		eval, err := worker.NewEval(job, trigger, 0, args.UpdatedAt)
		if err != nil {
			return nil, err
		}
		eval.JobModifyIndex = job.JobModifyIndex
		out = append(out, eval)
	}
	return out, nil
}
