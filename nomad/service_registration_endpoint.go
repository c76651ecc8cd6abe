package nomad

import (
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"strconv"
	"strings"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// ServiceRegistration is the endpoint of `provider = "nomad"` services. Clients register and
// remove the services of their own allocations with their node's secret; operators read them
// with read-job and remove them with submit-job (or delete-service-registration).
type ServiceRegistration struct {
	srv *Server
}

const tableServiceRegistrations = "service_registrations"

var serviceRegistrationUpsert = write("ServiceRegistration.Upsert", spec[structs.ServiceRegistrationUpsertRequest, structs.GenericResponse]{
	Caller: callerNode,
	Prepare: func(req *structs.ServiceRegistrationUpsertRequest) error {
		if req.NodeID == "" {
			return structs.BadRequest("missing NodeID for service registration")
		}
		return nil
	},
	Authorize: nodeSecret(func(req *structs.ServiceRegistrationUpsertRequest) string { return req.NodeID }),
	Validate: func(req *structs.ServiceRegistrationUpsertRequest) error {
		switch n := len(req.Services); {
		case n == 0:
			return structs.BadRequest("must register at least one service")
		case n > structs.ServiceRegistrationsPerUpsert:
			return structs.BadRequest("invalid Services: more than %d in one request", structs.ServiceRegistrationsPerUpsert)
		}
		return nil
	},
	Serve: func(c *rpcCall, req *structs.ServiceRegistrationUpsertRequest, reply *structs.GenericResponse) error {
		return c.srv.Endpoints.Services.upsert(req, reply)
	},
})

// Upsert stores the services a client's allocations serve. Only the node itself may call it,
// and only for allocations placed on it and not yet finished. Namespace, JobID and
// Datacenter come from the allocation and node, never from the request.
func (e *ServiceRegistration) Upsert(args *structs.ServiceRegistrationUpsertRequest, reply *structs.GenericResponse) error {
	return serviceRegistrationUpsert.Call(e.srv, args, reply)
}

func (e *ServiceRegistration) upsert(args *structs.ServiceRegistrationUpsertRequest, reply *structs.GenericResponse) error {
	store := e.srv.State()
	node, err := store.NodeByID(nil, args.NodeID)
	if err != nil {
		return err
	}
	if node == nil {
		return structs.NotFound(structs.ErrNodeNotFound)
	}
	for _, svc := range args.Services {
		if svc == nil {
			return structs.BadRequest("missing service registration")
		}
		if err := svc.Validate(); err != nil {
			return err
		}
		if svc.NodeID != "" && svc.NodeID != args.NodeID {
			return structs.PermissionDenied("service registration %q names node %s, not the calling node", svc.ID, svc.NodeID)
		}
		alloc, err := store.AllocByID(nil, svc.AllocID)
		if err != nil {
			return err
		}
		if alloc == nil || alloc.NodeID != args.NodeID {
			return errAllocNotOnNode(svc.AllocID, args.NodeID)
		}
		if alloc.ClientTerminalStatus() {
			return structs.BadRequest("allocation %s has finished: its services cannot be registered", alloc.ID)
		}
		// The ID names the allocation, so one node can never overwrite another's instance.
		if prefix := "_nomad-task-" + alloc.ID + "-"; !strings.HasPrefix(svc.ID, prefix) {
			return structs.BadRequest("invalid ID %q: must start with %q", svc.ID, prefix)
		}
		svc.NodeID, svc.Namespace, svc.JobID, svc.Datacenter = node.ID, alloc.Namespace, alloc.JobID, node.Datacenter
		svc.CreateIndex, svc.ModifyIndex = 0, 0
	}
	index, err := e.srv.raftApply(structs.ServiceRegistrationUpsertRequestType, args)
	reply.Index = index
	return err
}

var serviceRegistrationDeleteByID = write("ServiceRegistration.DeleteByID", spec[structs.ServiceRegistrationDeleteByIDRequest, structs.GenericResponse]{
	Caller: callerNodeOrToken,
	Prepare: func(req *structs.ServiceRegistrationDeleteByIDRequest) error {
		if req.ID == "" {
			return structs.BadRequest("missing service registration ID")
		}
		if req.Namespace == "" {
			req.Namespace = structs.DefaultNamespace
		}
		return nil
	},
	// A request naming a node is that node's, by its secret only; one naming none is an
	// operator's, by its token.
	Authorize: func(c *rpcCall, req *structs.ServiceRegistrationDeleteByIDRequest) error {
		if req.NodeID != "" {
			return c.srv.authenticateNode(req.NodeID, c.token)
		}
		if c.aclErr != nil {
			return c.aclErr
		}
		ns := req.Namespace
		if ns == "" {
			ns = structs.DefaultNamespace
		}
		if !c.acl.AllowNamespaceOperation(ns, acl.NamespaceCapabilitySubmitJob) &&
			!c.acl.AllowNamespaceOperation(ns, acl.NamespaceCapabilityDeleteServiceRegistration) {
			return structs.PermissionDenied("%s capability required in namespace %q", acl.NamespaceCapabilitySubmitJob, ns)
		}
		return nil
	},
	Serve: func(c *rpcCall, req *structs.ServiceRegistrationDeleteByIDRequest, reply *structs.GenericResponse) error {
		return c.srv.Endpoints.Services.deleteByID(req, reply)
	},
})

// DeleteByID removes one registration: a client its own node's, with the node's secret; an
// operator any in a namespace where the token has submit-job or delete-service-registration.
// A caller without that right learns nothing, not even whether the ID exists.
func (e *ServiceRegistration) DeleteByID(args *structs.ServiceRegistrationDeleteByIDRequest, reply *structs.GenericResponse) error {
	return serviceRegistrationDeleteByID.Call(e.srv, args, reply)
}

func (e *ServiceRegistration) deleteByID(args *structs.ServiceRegistrationDeleteByIDRequest, reply *structs.GenericResponse) error {
	existing, err := e.srv.State().ServiceRegistrationByID(nil, args.ID)
	if err != nil {
		return err
	}
	switch {
	case existing == nil:
		return structs.NotFound(structs.ErrServiceRegistrationNotFound)
	case args.NodeID != "":
		if existing.NodeID != args.NodeID {
			return structs.NotFound(structs.ErrServiceRegistrationNotFound)
		}
		args.Namespace = existing.Namespace
	case existing.Namespace != args.Namespace, args.ServiceName != "" && existing.ServiceName != args.ServiceName:
		return structs.NotFound(structs.ErrServiceRegistrationNotFound)
	}
	index, err := e.srv.raftApply(structs.ServiceRegistrationDeleteRequestType, args)
	reply.Index = index
	return err
}

var serviceRegistrationList = read("ServiceRegistration.List", spec[structs.ServiceRegistrationListRequest, structs.ServiceRegistrationListResponse]{
	Prepare: func(req *structs.ServiceRegistrationListRequest) error {
		nodeRowsDefaultNamespace(&req.QueryOptions)
		return nil
	},
	Authorize: func(c *rpcCall, req *structs.ServiceRegistrationListRequest) error {
		return svcRegReadRule(c, &req.QueryOptions)
	},
	Serve: func(c *rpcCall, args *structs.ServiceRegistrationListRequest, reply *structs.ServiceRegistrationListResponse) error {
		visible := svcRegVisible(c, &args.QueryOptions)
		return c.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			regs, err := store.ServiceRegistrations(ws, args.Namespace)
			if err != nil {
				return 0, err
			}
			reply.Services = listStubs(regs, visible)
			return store.Index(tableServiceRegistrations), nil
		})
	},
})

// List lists the service names of the namespace ("*": of every namespace the caller may
// read-job in), each with the union of its instances' tags.
func (e *ServiceRegistration) List(args *structs.ServiceRegistrationListRequest, reply *structs.ServiceRegistrationListResponse) error {
	return serviceRegistrationList.Call(e.srv, args, reply)
}

// listStubs groups registrations (sorted by namespace and name) into upstream's list shape.
func listStubs(regs []*structs.ServiceRegistration, visible func(string) bool) []*structs.ServiceRegistrationListStub {
	out := []*structs.ServiceRegistrationListStub{}
	var ns *structs.ServiceRegistrationListStub
	var svc *structs.ServiceRegistrationStub
	for _, r := range regs {
		if !visible(r.Namespace) {
			continue
		}
		if ns == nil || ns.Namespace != r.Namespace {
			ns = &structs.ServiceRegistrationListStub{Namespace: r.Namespace, Services: []*structs.ServiceRegistrationStub{}}
			out = append(out, ns)
			svc = nil
		}
		if svc == nil || svc.ServiceName != r.ServiceName {
			svc = &structs.ServiceRegistrationStub{ServiceName: r.ServiceName, Tags: []string{}}
			ns.Services = append(ns.Services, svc)
		}
		for _, tag := range r.Tags {
			if !slices.Contains(svc.Tags, tag) {
				svc.Tags = append(svc.Tags, tag)
			}
		}
	}
	for _, n := range out {
		for _, s := range n.Services {
			slices.Sort(s.Tags)
		}
	}
	return out
}

// svcRegChoose reads GetService's Choose ("N|key"); N is 0 when it is empty.
func svcRegChoose(choose string) (int, string, error) {
	if choose == "" {
		return 0, "", nil
	}
	n, k, ok := strings.Cut(choose, "|")
	num, err := strconv.Atoi(n)
	if !ok || err != nil || num < 1 || k == "" {
		return 0, "", structs.BadRequest("invalid choose parameter %q: must be <number>|<key> with a number of at least 1", choose)
	}
	return num, k, nil
}

var serviceRegistrationGetService = read("ServiceRegistration.GetService", spec[structs.ServiceRegistrationByNameRequest, structs.ServiceRegistrationsResponse]{
	Prepare: func(req *structs.ServiceRegistrationByNameRequest) error {
		if req.ServiceName == "" {
			return structs.BadRequest("missing service name")
		}
		nodeRowsDefaultNamespace(&req.QueryOptions)
		return nil
	},
	Authorize: func(c *rpcCall, req *structs.ServiceRegistrationByNameRequest) error {
		return svcRegReadRule(c, &req.QueryOptions)
	},
	Validate: func(req *structs.ServiceRegistrationByNameRequest) error {
		_, _, err := svcRegChoose(req.Choose)
		return err
	},
	Serve: func(c *rpcCall, req *structs.ServiceRegistrationByNameRequest, reply *structs.ServiceRegistrationsResponse) error {
		return c.srv.Endpoints.Services.getService(c, req, reply)
	},
})

// GetService reads the instances of one service name in the namespace; with Choose
// ("N|key") only N of them, picked by rendezvous hashing on key so that every caller with
// the same key gets the same instances while the set is stable.
func (e *ServiceRegistration) GetService(args *structs.ServiceRegistrationByNameRequest, reply *structs.ServiceRegistrationsResponse) error {
	return serviceRegistrationGetService.Call(e.srv, args, reply)
}

func (e *ServiceRegistration) getService(c *rpcCall, args *structs.ServiceRegistrationByNameRequest, reply *structs.ServiceRegistrationsResponse) error {
	visible := svcRegVisible(c, &args.QueryOptions)
	choose, key, err := svcRegChoose(args.Choose)
	if err != nil {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		var regs []*structs.ServiceRegistration
		var err error
		if args.Namespace == structs.AllNamespacesSentinel {
			regs, err = store.ServiceRegistrations(ws, args.Namespace)
		} else {
			regs, err = store.ServiceRegistrationsByName(ws, args.Namespace, args.ServiceName)
		}
		if err != nil {
			return 0, err
		}
		out := []*structs.ServiceRegistration{}
		for _, r := range regs {
			if r.ServiceName == args.ServiceName && visible(r.Namespace) {
				out = append(out, r)
			}
		}
		if choose > 0 {
			out = rendezvousPick(out, key, choose)
		}
		reply.Services = out
		return store.Index(tableServiceRegistrations), nil
	})
}

// rendezvousPick keeps the n registrations with the highest hash of key and their ID.
func rendezvousPick(regs []*structs.ServiceRegistration, key string, n int) []*structs.ServiceRegistration {
	score := func(r *structs.ServiceRegistration) uint64 {
		sum := sha256.Sum256([]byte(key + "\x00" + r.ID))
		return binary.BigEndian.Uint64(sum[:8])
	}
	out := slices.Clone(regs)
	slices.SortStableFunc(out, func(a, b *structs.ServiceRegistration) int {
		sa, sb := score(a), score(b)
		switch {
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

var serviceRegistrationListByJob = read("ServiceRegistration.ListByJob", spec[structs.JobSpecificRequest, structs.ServiceRegistrationsResponse]{
	Prepare:   func(req *structs.JobSpecificRequest) error { nodeRowsDefaultNamespace(&req.QueryOptions); return nil },
	Authorize: namespaceCap(acl.NamespaceCapabilityReadJob, func(req *structs.JobSpecificRequest) string { return req.Namespace }),
	Serve: func(c *rpcCall, args *structs.JobSpecificRequest, reply *structs.ServiceRegistrationsResponse) error {
		return c.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			job, err := store.JobByID(ws, args.Namespace, args.JobID)
			if err != nil {
				return 0, err
			}
			reply.Services = nil
			if job != nil {
				regs, err := store.ServiceRegistrationsByJob(ws, args.Namespace, args.JobID)
				if err != nil {
					return 0, err
				}
				reply.Services = append([]*structs.ServiceRegistration{}, regs...)
			}
			return maxIndex(store, tableServiceRegistrations, "jobs"), nil
		})
	},
})

// ListByJob lists the registrations of a job's allocations (read-job in its namespace).
// reply.Services is nil when the job does not exist, so the HTTP layer answers 404.
func (e *ServiceRegistration) ListByJob(args *structs.JobSpecificRequest, reply *structs.ServiceRegistrationsResponse) error {
	return serviceRegistrationListByJob.Call(e.srv, args, reply)
}

// svcRegAllocNamespace is the namespace that decides a read of an allocation's registrations:
// the allocation's, or the request's for an unknown ID.
func svcRegAllocNamespace(c *rpcCall, req *structs.AllocSpecificRequest) (string, error) {
	ns := req.Namespace
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	alloc, err := c.srv.State().AllocByID(nil, req.AllocID)
	if err != nil {
		return "", err
	}
	if alloc != nil {
		ns = alloc.Namespace
	}
	return ns, nil
}

var serviceRegistrationListByAlloc = read("ServiceRegistration.ListByAlloc", spec[structs.AllocSpecificRequest, structs.ServiceRegistrationsResponse]{
	Prepare: func(req *structs.AllocSpecificRequest) error { nodeRowsDefaultNamespace(&req.QueryOptions); return nil },
	Authorize: func(c *rpcCall, req *structs.AllocSpecificRequest) error {
		ns, err := svcRegAllocNamespace(c, req)
		if err != nil {
			return err
		}
		if !c.acl.AllowNamespaceOperation(ns, acl.NamespaceCapabilityReadJob) {
			return structs.PermissionDenied("read-job capability required in namespace %q", ns)
		}
		return nil
	},
	Serve: func(c *rpcCall, args *structs.AllocSpecificRequest, reply *structs.ServiceRegistrationsResponse) error {
		ns, err := svcRegAllocNamespace(c, args)
		if err != nil {
			return err
		}
		// Authorize read the namespace a moment ago: an allocation that appeared since, in a
		// namespace the caller may not read, stays hidden.
		allowed := c.acl.AllowNamespaceOperation(ns, acl.NamespaceCapabilityReadJob)
		return c.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			alloc, err := store.AllocByID(ws, args.AllocID)
			if err != nil {
				return 0, err
			}
			reply.Services = nil
			if allowed && alloc != nil && alloc.Namespace == ns {
				regs, err := store.ServiceRegistrationsByAlloc(ws, args.AllocID)
				if err != nil {
					return 0, err
				}
				reply.Services = append([]*structs.ServiceRegistration{}, regs...)
			}
			return maxIndex(store, tableServiceRegistrations, "allocs"), nil
		})
	},
})

// ListByAlloc lists the registrations of one allocation; read-job is needed in the
// allocation's namespace (and in the request's, for an unknown ID). reply.Services is nil
// when the allocation does not exist.
func (e *ServiceRegistration) ListByAlloc(args *structs.AllocSpecificRequest, reply *structs.ServiceRegistrationsResponse) error {
	return serviceRegistrationListByAlloc.Call(e.srv, args, reply)
}
