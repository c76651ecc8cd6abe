package nomad

import "github.com/nomadfork/nomad/structs"

// Rules shared by the rows of the variables, purge history, search and volume endpoints.

// variablePathCap allows a caller holding capability on the variable path the request names,
// in the namespace it names (default when none). A workload identity holds read and list on
// its own job's paths (nomad/jobs/<job>...), which its ACL object answers here.
func variablePathCap[Req any](capability string, target func(*Req) (namespace, path string)) func(*rpcCall, *Req) error {
	return func(c *rpcCall, req *Req) error {
		ns, path := target(req)
		namespace := requestNamespace("", ns)
		if c.acl.AllowVariableOperation(namespace, path, capability) {
			return nil
		}
		return variableDenied(capability, namespace, path)
	}
}

// restCapAnywhere allows a caller holding capability in at least one namespace. It guards
// calls that name an object rather than a namespace: a caller who could not be allowed
// whatever the object is refused before it is looked up, so that a 404 never tells them
// which IDs exist. The row still checks the object's own namespace once it is found.
func restCapAnywhere[Req any](capability string) func(*rpcCall, *Req) error {
	return func(c *rpcCall, _ *Req) error {
		if c.acl.AllowAnyNamespaceOperation(capability) {
			return nil
		}
		return structs.PermissionDenied("%s capability required in at least one namespace", capability)
	}
}

// restCapHereOrAnywhere allows a caller holding capability in the namespace the request
// names (default when none), or, when it names every namespace ("*"), in at least one of
// them: such a list then keeps what the caller may see.
func restCapHereOrAnywhere[Req any](capability string, ns func(*Req) string) func(*rpcCall, *Req) error {
	return func(c *rpcCall, req *Req) error {
		namespace := requestNamespace("", ns(req))
		allowed := c.acl.AllowNamespaceOperation(namespace, capability)
		if namespace == structs.AllNamespacesSentinel {
			allowed = c.acl.AllowAnyNamespaceOperation(capability)
		}
		if allowed {
			return nil
		}
		return structs.PermissionDenied("%s capability required in namespace %q", capability, namespace)
	}
}
