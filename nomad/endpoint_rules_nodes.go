package nomad

import (
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/structs"
)

// Rules of the node, node pool, allocation and service registration rows. A node proves
// itself with its secret (or its identity) through nodeSecret and nodeOr; these rules are
// what a token must hold when the caller is not the node.

// nodeReadRule allows a token with node read access.
func nodeReadRule[Req any](c *rpcCall, _ *Req) error {
	if c.acl.AllowNodeRead() {
		return nil
	}
	return structs.PermissionDenied("node read access required")
}

// nodeWriteRule allows a token with node write access.
func nodeWriteRule[Req any](c *rpcCall, _ *Req) error {
	if c.acl.AllowNodeWrite() {
		return nil
	}
	return structs.PermissionDenied("node write access required")
}

// nodeRegisterRule decides who may register args.Node. A node ID keeps the secret it was
// first registered with, whoever asks: a record with another secret would hand the node to
// whoever made it up. A node not yet known may register itself with its own secret when it is
// the agent's own client, or when it comes over a client agent's connection (self) and is
// introduced (node_introduction.go); otherwise it needs its stored secret or a token with
// node write access.
func nodeRegisterRule(self bool) func(*rpcCall, *structs.NodeRegisterRequest) error {
	byNodeOrWriter := nodeOr(nodeRegisterID, nodeWriteRule[structs.NodeRegisterRequest])
	return func(c *rpcCall, req *structs.NodeRegisterRequest) error {
		node := req.Node
		if node == nil {
			return byNodeOrWriter(c, req)
		}
		existing, err := c.srv.State().NodeByID(nil, node.ID)
		if err != nil {
			return err
		}
		if existing != nil && !secretsEqual(existing.SecretID, node.SecretID) {
			return structs.PermissionDenied("node %s is registered with another secret", node.ID)
		}
		if existing == nil && node.ID != "" && secretsEqual(node.SecretID, c.token) {
			if c.srv.isLocalNodeSecret(c.token) {
				return nil
			}
			if self {
				return c.srv.checkIntroduction(req)
			}
		}
		return byNodeOrWriter(c, req)
	}
}

func nodeRegisterID(req *structs.NodeRegisterRequest) string {
	if req.Node == nil {
		return ""
	}
	return req.Node.ID
}

// nodePoolCap allows a token holding capability on the node pool the request names.
func nodePoolCap[Req any](capability string, pool func(*Req) string) func(*rpcCall, *Req) error {
	return func(c *rpcCall, req *Req) error {
		name := pool(req)
		if c.acl.AllowNodePoolOperation(name, capability) {
			return nil
		}
		return structs.PermissionDenied("%s capability required on node pool %q", capability, name)
	}
}

// allocReadJobRule allows a token with read-job in the request's namespace; "*" passes, and
// the answer is then filtered by namespace.
func allocReadJobRule(c *rpcCall, opts *structs.QueryOptions) error {
	ns := opts.Namespace
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	if ns == structs.AllNamespacesSentinel || c.acl.AllowNamespaceOperation(ns, acl.NamespaceCapabilityReadJob) {
		return nil
	}
	return structs.PermissionDenied("%s capability required in namespace %q", acl.NamespaceCapabilityReadJob, ns)
}

// allocNamespaceVisible is what a read across namespaces may show: every namespace for a
// single one already authorised, else those where the token holds capability.
func allocNamespaceVisible(c *rpcCall, opts *structs.QueryOptions, capability string) func(string) bool {
	if opts.Namespace != structs.AllNamespacesSentinel {
		return func(string) bool { return true }
	}
	return func(ns string) bool { return c.acl.AllowNamespaceOperation(ns, capability) }
}

// svcRegAllowed is read-job in ns, widened to a workload identity's own namespace: upstream
// lets a workload read the services of its namespace (templates' nomadService).
func svcRegAllowed(c *rpcCall, ns string) bool {
	return c.acl.AllowNamespaceOperation(ns, acl.NamespaceCapabilityReadJob) || c.acl.AllowWorkloadServices(ns)
}

// svcRegReadRule allows a reader of the request's namespace by svcRegAllowed; "*" passes, and
// the answer is then filtered by namespace.
func svcRegReadRule(c *rpcCall, opts *structs.QueryOptions) error {
	ns := opts.Namespace
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	if ns == structs.AllNamespacesSentinel || svcRegAllowed(c, ns) {
		return nil
	}
	return structs.PermissionDenied("%s capability required in namespace %q", acl.NamespaceCapabilityReadJob, ns)
}

// svcRegVisible is svcRegAllowed for each namespace of a read across namespaces.
func svcRegVisible(c *rpcCall, opts *structs.QueryOptions) func(string) bool {
	if opts.Namespace != structs.AllNamespacesSentinel {
		return func(string) bool { return true }
	}
	return func(ns string) bool { return svcRegAllowed(c, ns) }
}

// nodeRowsDefaultNamespace fills the namespace a read leaves to the server.
func nodeRowsDefaultNamespace(opts *structs.QueryOptions) {
	if opts.Namespace == "" {
		opts.Namespace = structs.DefaultNamespace
	}
}

// reportedByNode makes s a row in which a node reports about itself: the node the request
// names, by its own secret, or a token with node write may call it, and a request that names
// no node is refused as "missing node ID for <what>".
func reportedByNode[Req, Resp any](nodeID func(*Req) string, what string, s spec[Req, Resp]) spec[Req, Resp] {
	s.Caller = callerNodeOrToken
	s.Prepare = func(req *Req) error {
		if nodeID(req) == "" {
			return structs.BadRequest("missing node ID for %s", what)
		}
		return nil
	}
	s.Authorize = nodeOr(nodeID, nodeWriteRule[Req])
	return s
}
