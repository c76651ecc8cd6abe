package nomad

import "github.com/nomadfork/nomad/structs"

// Rules shared by the evaluation, deployment, system, operator and keyring rows.

// opsDefaultQueryNamespace fills the namespace a read leaves to the server, before its rule
// reads it.
func opsDefaultQueryNamespace(q *structs.QueryOptions) {
	if q.Namespace == "" {
		q.Namespace = structs.DefaultNamespace
	}
}

// opsDefaultWriteNamespace is opsDefaultQueryNamespace for a write.
func opsDefaultWriteNamespace(w *structs.WriteRequest) {
	if w.Namespace == "" {
		w.Namespace = structs.DefaultNamespace
	}
}

// opsNamespaceOrAll allows capability in the request's namespace, and lets "*" through: a
// call across namespaces answers only with what the caller may see, which its Serve
// filters (or checks on the object it finds).
func opsNamespaceOrAll[Req any](capability string, ns func(*Req) string) func(*rpcCall, *Req) error {
	inNamespace := namespaceCap(capability, ns)
	return func(c *rpcCall, req *Req) error {
		if ns(req) == structs.AllNamespacesSentinel {
			return nil
		}
		return inNamespace(c, req)
	}
}

// opsOperatorRead allows a caller with operator read; refused says what is missing.
func opsOperatorRead[Req any](refused string) func(*rpcCall, *Req) error {
	return func(c *rpcCall, _ *Req) error {
		if c.acl.AllowOperatorRead() {
			return nil
		}
		return structs.PermissionDenied("%s", refused)
	}
}

// opsOperatorWrite allows a caller with operator write; refused says what is missing.
func opsOperatorWrite[Req any](refused string) func(*rpcCall, *Req) error {
	return func(c *rpcCall, _ *Req) error {
		if c.acl.AllowOperatorWrite() {
			return nil
		}
		return structs.PermissionDenied("%s", refused)
	}
}

// opsVisibleNamespaces tells, for a call its rule let through, which namespaces' objects the
// answer may hold: every one it finds in a named namespace (the rule checked that one), and
// with "*" those where the caller holds capability.
func opsVisibleNamespaces(c *rpcCall, namespace, capability string) func(string) bool {
	if namespace != structs.AllNamespacesSentinel {
		return func(string) bool { return true }
	}
	return func(ns string) bool { return c.acl.AllowNamespaceOperation(ns, capability) }
}
