package nomad

import (
	"github.com/nomadfork/nomad/structs"
)

var allocSignIdentities = read("Alloc.SignIdentities", spec[structs.AllocIdentitiesRequest, structs.AllocIdentitiesResponse]{
	Caller:    callerNode,
	Authorize: nodeSecret(func(req *structs.AllocIdentitiesRequest) string { return req.NodeID }),
	Validate: func(req *structs.AllocIdentitiesRequest) error {
		if len(req.Identities) == 0 {
			return structs.BadRequest("Identities: at least one identity must be requested")
		}
		if len(req.Identities) > structs.MaxIdentitiesPerRequest {
			return structs.BadRequest("Identities: at most %d identities per request", structs.MaxIdentitiesPerRequest)
		}
		return nil
	},
	Serve: func(c *rpcCall, args *structs.AllocIdentitiesRequest, reply *structs.AllocIdentitiesResponse) error {
		store := c.srv.State()
		t := now()
		var signed []*structs.SignedWorkloadIdentity
		var rejected []*structs.WorkloadIdentityRejection
		missing := false
		for _, req := range args.Identities {
			if req == nil || req.AllocID == "" || req.TaskName == "" || req.IdentityName == "" {
				return structs.BadRequest("Identities: each needs AllocID, TaskName and IdentityName")
			}
			reject := func(reason string) {
				rejected = append(rejected, &structs.WorkloadIdentityRejection{WorkloadIdentityRequest: *req, Reason: reason})
			}
			alloc, err := store.AllocByID(nil, req.AllocID)
			if err != nil {
				return err
			}
			if alloc == nil {
				missing = true
				reject(structs.WIRejectionReasonMissingAlloc)
				continue
			}
			if alloc.NodeID != args.NodeID {
				return errAllocNotOnNode(alloc.ID, args.NodeID)
			}
			if alloc.TerminalStatus() {
				reject(structs.WIRejectionReasonTerminalAlloc)
				continue
			}
			if alloc.Job == nil {
				reject(structs.WIRejectionReasonMissingTask)
				continue
			}
			tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup)
			if tg == nil {
				reject(structs.WIRejectionReasonMissingTask)
				continue
			}
			found := false
			for _, task := range tg.Tasks {
				if task == nil || task.Name != req.TaskName {
					continue
				}
				found = true
				ident := structs.LookupTaskIdentity(task, req.IdentityName)
				if ident == nil {
					reject(structs.WIRejectionReasonMissingIdentity)
					break
				}
				out, err := c.srv.signWorkloadIdentity(store, alloc, task.Name, ident.Name, ident.Audience, ident.TTL, t)
				if err != nil {
					return err
				}
				signed = append(signed, out)
				break
			}
			if !found {
				reject(structs.WIRejectionReasonMissingTask)
			}
		}
		// Not the pipeline's forwarding: clients read with AllowStale so that any server signs,
		// and only an allocation this server does not know yet sends the call to the leader.
		if missing && c.srv.rpcListener != nil && !c.srv.IsLeader() {
			if done, err := c.srv.forward("Alloc.SignIdentities", args, reply); done {
				return err
			}
		}
		reply.SignedIdentities, reply.Rejections = signed, rejected
		reply.Index = store.Index("allocs")
		return nil
	},
})

// SignIdentities signs workload identities for allocations placed on the calling node. Only
// the node's own secret is accepted (an ACL token, even a management one, mints no identity):
// an identity is the allocation's credential and only the node that runs it may hold it. An
// allocation placed on another node refuses the whole call with a 403, so a node's secret
// cannot be turned into another node's workloads' credentials.
//
// Any server signs with the keyring of its own state. When this server does not know an
// allocation yet (its log is behind the leader's), the call goes to the leader, which does.
func (a *Alloc) SignIdentities(args *structs.AllocIdentitiesRequest, reply *structs.AllocIdentitiesResponse) error {
	return allocSignIdentities.Call(a.srv, args, reply)
}
