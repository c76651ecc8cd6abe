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

// Upsert creates or updates namespaces.
func (n *Namespace) Upsert(args *structs.NamespaceUpsertRequest, reply *structs.GenericResponse) error {
	if done, err := n.srv.forward("Namespace.Upsert", args, reply); done {
		return err
	}
	aclObj, actor, err := n.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	if !aclObj.IsManagement() && !aclObj.IsDisabled() {
		return structs.PermissionDenied("management token required to write namespaces")
	}
	if len(args.Namespaces) == 0 {
		return structs.BadRequest("must specify at least one namespace")
	}
	for _, ns := range args.Namespaces {
		if err := ns.Validate(); err != nil {
			return err
		}
	}
	if err := n.srv.checkLeader(); err != nil {
		return err
	}
	args.Actor = actor
	index, err := n.srv.raftApply(structs.NamespaceUpsertRequestType, args)
	reply.Index = index
	return err
}

// Delete deletes namespaces.
func (n *Namespace) Delete(args *structs.NamespaceDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := n.srv.forward("Namespace.Delete", args, reply); done {
		return err
	}
	aclObj, actor, err := n.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	if !aclObj.IsManagement() && !aclObj.IsDisabled() {
		return structs.PermissionDenied("management token required to delete namespaces")
	}
	if len(args.Namespaces) == 0 {
		return structs.BadRequest("must specify at least one namespace to delete")
	}
	if err := n.srv.checkLeader(); err != nil {
		return err
	}
	args.Actor = actor
	index, err := n.srv.raftApply(structs.NamespaceDeleteRequestType, args)
	reply.Index = index
	return err
}

// GetNamespace reads one namespace.
func (n *Namespace) GetNamespace(args *structs.NamespaceSpecificRequest, reply *structs.SingleNamespaceResponse) error {
	if done, err := n.srv.forwardRead("Namespace.GetNamespace", &args.QueryOptions, args, reply); done {
		return err
	}
	aclObj, _, err := n.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	if !aclObj.AllowNamespace(args.Name) {
		return structs.PermissionDenied("no capability in namespace %q", args.Name)
	}
	return n.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		ns, err := store.NamespaceByName(ws, args.Name)
		if err != nil {
			return 0, err
		}
		reply.Namespace = ns
		return store.Index("namespaces"), nil
	})
}

// List lists the namespaces the caller may see.
func (n *Namespace) List(args *structs.NamespaceListRequest, reply *structs.NamespaceListResponse) error {
	if done, err := n.srv.forwardRead("Namespace.List", &args.QueryOptions, args, reply); done {
		return err
	}
	aclObj, _, err := n.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	return n.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		all, err := store.Namespaces(ws)
		if err != nil {
			return 0, err
		}
		reply.Namespaces, reply.NextToken, err = paginator.Page(all, args.QueryOptions,
			paginator.Order[*structs.Namespace]{Key: func(ns *structs.Namespace) paginator.Key { return paginator.ByID(ns.Name) }},
			func(ns *structs.Namespace) bool {
				return (args.Prefix == "" || hasPrefix(ns.Name, args.Prefix)) && aclObj.AllowNamespace(ns.Name)
			},
			func(ns *structs.Namespace) (*structs.Namespace, error) { return ns, nil })
		if err != nil {
			return 0, err
		}
		return store.Index("namespaces"), nil
	})
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }
