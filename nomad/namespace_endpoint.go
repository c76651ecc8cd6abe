package nomad

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/nomad/paginator"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// Namespace is the namespace RPC endpoint. Writes need a management token; reads are
// allowed for namespaces the caller holds any capability in.
type Namespace struct {
	srv *Server
}

var namespaceUpsert = write("Namespace.Upsert", spec[structs.NamespaceUpsertRequest, structs.GenericResponse]{
	Authorize: management[structs.NamespaceUpsertRequest]("write namespaces"),
	Validate: eachValid(func(req *structs.NamespaceUpsertRequest) []*structs.Namespace { return req.Namespaces },
		"must specify at least one namespace", func(_ int, ns *structs.Namespace) error { return ns.Validate() }),
	Fix:     func(c *rpcCall, req *structs.NamespaceUpsertRequest) { req.Actor = c.actor },
	Message: structs.NamespaceUpsertRequestType,
})

var namespaceDelete = write("Namespace.Delete", spec[structs.NamespaceDeleteRequest, structs.GenericResponse]{
	Authorize: management[structs.NamespaceDeleteRequest]("delete namespaces"),
	Validate:  atLeastOne(func(req *structs.NamespaceDeleteRequest) int { return len(req.Namespaces) }, "must specify at least one namespace to delete"),
	Fix:       func(c *rpcCall, req *structs.NamespaceDeleteRequest) { req.Actor = c.actor },
	Message:   structs.NamespaceDeleteRequestType,
})

var namespaceGet = read("Namespace.GetNamespace", spec[structs.NamespaceSpecificRequest, structs.SingleNamespaceResponse]{
	Authorize: func(c *rpcCall, req *structs.NamespaceSpecificRequest) error {
		if !c.acl.AllowNamespace(req.Name) {
			return structs.PermissionDenied("no capability in namespace %q", req.Name)
		}
		return nil
	},
	Serve: func(c *rpcCall, req *structs.NamespaceSpecificRequest, reply *structs.SingleNamespaceResponse) error {
		return blockingGet(c, &req.QueryOptions, &reply.QueryMeta,
			func(ws memdb.WatchSet, store *state.StateStore) (*structs.Namespace, error) {
				return store.NamespaceByName(ws, req.Name)
			},
			func(ns *structs.Namespace) { reply.Namespace = ns }, nil, "namespaces")
	},
})

// namespaceList needs no capability: the list holds only the namespaces the caller may see.
var namespaceList = read("Namespace.List", spec[structs.NamespaceListRequest, structs.NamespaceListResponse]{
	Caller:    callerAnyone,
	Authorize: anyone[structs.NamespaceListRequest],
	Serve: func(c *rpcCall, req *structs.NamespaceListRequest, reply *structs.NamespaceListResponse) error {
		return pagedList(c.srv.blockingRPC, &req.QueryOptions, &reply.QueryMeta, &reply.Namespaces,
			func(ws memdb.WatchSet, store *state.StateStore) ([]*structs.Namespace, error) {
				return store.Namespaces(ws)
			},
			paginator.Order[*structs.Namespace]{Key: func(ns *structs.Namespace) paginator.Key { return paginator.ByID(ns.Name) }},
			func(ns *structs.Namespace) bool {
				return (req.Prefix == "" || hasPrefix(ns.Name, req.Prefix)) && c.acl.AllowNamespace(ns.Name)
			},
			func(ns *structs.Namespace) (*structs.Namespace, error) { return ns, nil },
			func(store *state.StateStore) uint64 { return store.Index("namespaces") })
	},
})

// Upsert creates or updates namespaces.
func (n *Namespace) Upsert(args *structs.NamespaceUpsertRequest, reply *structs.GenericResponse) error {
	return namespaceUpsert.Call(n.srv, args, reply)
}

// Delete deletes namespaces.
func (n *Namespace) Delete(args *structs.NamespaceDeleteRequest, reply *structs.GenericResponse) error {
	return namespaceDelete.Call(n.srv, args, reply)
}

// GetNamespace reads one namespace.
func (n *Namespace) GetNamespace(args *structs.NamespaceSpecificRequest, reply *structs.SingleNamespaceResponse) error {
	return namespaceGet.Call(n.srv, args, reply)
}

// List lists the namespaces the caller may see.
func (n *Namespace) List(args *structs.NamespaceListRequest, reply *structs.NamespaceListResponse) error {
	return namespaceList.Call(n.srv, args, reply)
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }
