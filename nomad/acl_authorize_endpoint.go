package nomad

import (
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/structs"
)

// ACL.Authorize answers the decisions an agent makes before serving something itself (its
// configuration, an allocation's files, logs or exec, a snapshot upload it reads first). The
// rule is the whole row: an allowed check answers empty, a refused one is the 403 naming what
// is missing. The HTTP API asks it in-process on a server agent, and over the client's
// connection on a client-only agent, so both decide the same way, on the servers.
var aclAuthorize = read("ACL.Authorize", spec[structs.ACLAuthorizeRequest, structs.ACLAuthorizeResponse]{
	Authorize: func(c *rpcCall, req *structs.ACLAuthorizeRequest) error {
		return c.srv.authorizeCheck(c.acl, c.actor, c.token, req)
	},
	Serve: func(c *rpcCall, _ *structs.ACLAuthorizeRequest, reply *structs.ACLAuthorizeResponse) error {
		c.srv.setQueryMeta(&reply.QueryMeta)
		return nil
	},
})

// Authorize runs the ACL.Authorize row.
func (a *ACL) Authorize(args *structs.ACLAuthorizeRequest, reply *structs.ACLAuthorizeResponse) error {
	return aclAuthorize.Call(a.srv, args, reply)
}

// authorizeCheck is the decision req names, for the caller whose token resolved to aclObj.
// A check it does not know needs a management token, so that no request passes by naming
// nothing.
func (s *Server) authorizeCheck(aclObj *acl.ACL, actor *structs.Actor, token string, req *structs.ACLAuthorizeRequest) error {
	ns := req.Namespace
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	needNS := func(capability string) error {
		if aclObj.AllowNamespaceOperation(ns, capability) {
			return nil
		}
		return structs.PermissionDenied("%s capability required in namespace %q", capability, ns)
	}
	switch req.Check {
	case structs.ACLCheckAgentRead:
		// upstream's `agent { policy = "read" }` (GET /v1/agent/self and the like).
		if !aclObj.AllowAgentRead() {
			return structs.PermissionDenied("agent read required")
		}
	case structs.ACLCheckAgentWrite:
		if !aclObj.AllowAgentWrite() {
			return structs.PermissionDenied("agent write required")
		}
	case structs.ACLCheckNodeRead:
		// The member list and node reads are gated on node read upstream, not agent read.
		if !aclObj.AllowNodeRead() {
			return structs.PermissionDenied("node read required")
		}
	case structs.ACLCheckNodeWrite:
		if !aclObj.AllowNodeWrite() {
			return structs.PermissionDenied("node write required")
		}
	case structs.ACLCheckAllocExec:
		// A driver without filesystem isolation (raw_exec) runs the command on the node
		// itself, hence alloc-node-exec; the caller must also hold whatever the
		// allocation's identities hold (checkExecIdentity).
		capability := acl.NamespaceCapabilityAllocExec
		if req.NodeExec {
			capability = acl.NamespaceCapabilityAllocNodeExec
		}
		if err := needNS(capability); err != nil {
			return err
		}
		if req.AllocID == "" {
			return nil
		}
		alloc, err := s.State().AllocByID(nil, req.AllocID)
		if err != nil {
			return err
		}
		if alloc == nil {
			// The agent asking runs the allocation, so a server without it is behind (a
			// stale read) or has collected it: its identities cannot be checked here, and
			// only a caller who holds everything may go on.
			if aclObj.IsManagement() || aclObj.IsDisabled() {
				return nil
			}
			return structs.PermissionDenied("allocation %s is not known to this server, so the rights of its identities cannot be checked; retry", req.AllocID)
		}
		return s.checkExecIdentity(aclObj, alloc)
	case structs.ACLCheckNamespaceCapability:
		if req.Capability == "" {
			return structs.PermissionDenied("a namespace capability is required")
		}
		return needNS(req.Capability)
	case structs.ACLCheckReadLogs:
		// read-fs lets a caller read logs too, as upstream.
		if aclObj.AllowNamespaceOperation(ns, acl.NamespaceCapabilityReadFS) {
			return nil
		}
		return needNS(acl.NamespaceCapabilityReadLogs)
	case structs.ACLCheckReadFS:
		return needNS(acl.NamespaceCapabilityReadFS)
	case structs.ACLCheckParseJob:
		if !aclObj.AllowNamespaceOperation(ns, acl.NamespaceCapabilityParseJob) &&
			!aclObj.AllowNamespaceOperation(ns, acl.NamespaceCapabilitySubmitJob) {
			return structs.PermissionDenied("parse-job or submit-job capability required in namespace %q", ns)
		}
	case structs.ACLCheckSnapshotRestore:
		// The restore row's own rule, so that an agent refuses a caller before reading an
		// upload of up to structs.MaxSnapshotSize; the restore checks again.
		return operatorSnapshotRestore.spec.Authorize(&rpcCall{srv: s, acl: aclObj, actor: actor, token: token},
			&structs.SnapshotRestoreRequest{})
	default:
		if !aclObj.IsManagement() && !aclObj.IsDisabled() {
			return structs.PermissionDenied("management token required for check %q", req.Check)
		}
	}
	return nil
}
