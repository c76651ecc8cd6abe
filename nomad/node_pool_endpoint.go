package nomad

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/nomad/paginator"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// NodePool is the node pool RPC endpoint. Each pool is governed by the node_pool rules
// matching its name: read to see it, write to create or change it, delete to delete it.
type NodePool struct {
	srv *Server
}

// UpsertNodePools creates or updates node pools; the built-in ones cannot be written.
func (n *NodePool) UpsertNodePools(args *structs.NodePoolUpsertRequest, reply *structs.GenericResponse) error {
	if done, err := n.srv.forward("NodePool.UpsertNodePools", args, reply); done {
		return err
	}
	aclObj, actor, err := n.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	for _, p := range args.NodePools {
		if p != nil && !aclObj.AllowNodePoolOperation(p.Name, acl.NodePoolCapabilityWrite) {
			return structs.PermissionDenied("write capability required on node pool %q", p.Name)
		}
	}
	if len(args.NodePools) == 0 {
		return structs.BadRequest("must specify at least one node pool")
	}
	for _, p := range args.NodePools {
		if p == nil {
			return structs.BadRequest("missing node pool")
		}
		if err := p.Validate(); err != nil {
			return err
		}
	}
	if err := n.srv.checkLeader(); err != nil {
		return err
	}
	args.Actor = actor
	index, err := n.srv.raftApply(structs.NodePoolUpsertRequestType, args)
	reply.Index = index
	return err
}

// DeleteNodePools deletes node pools that hold no nodes and no live jobs.
func (n *NodePool) DeleteNodePools(args *structs.NodePoolDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := n.srv.forward("NodePool.DeleteNodePools", args, reply); done {
		return err
	}
	aclObj, actor, err := n.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	for _, name := range args.Names {
		if !aclObj.AllowNodePoolOperation(name, acl.NodePoolCapabilityDelete) {
			return structs.PermissionDenied("delete capability required on node pool %q", name)
		}
	}
	if len(args.Names) == 0 {
		return structs.BadRequest("missing node pool name")
	}
	for _, name := range args.Names {
		if name == "" {
			return structs.BadRequest("missing node pool name")
		}
		if structs.IsBuiltInNodePool(name) {
			return structs.BadRequest("deleting built-in node pool %q is not allowed", name)
		}
	}
	if err := n.srv.checkLeader(); err != nil {
		return err
	}
	args.Actor = actor
	index, err := n.srv.raftApply(structs.NodePoolDeleteRequestType, args)
	reply.Index = index
	return err
}

// GetNodePool reads one node pool; reply.NodePool is nil when unknown.
func (n *NodePool) GetNodePool(args *structs.NodePoolSpecificRequest, reply *structs.SingleNodePoolResponse) error {
	if done, err := n.srv.forwardRead("NodePool.GetNodePool", &args.QueryOptions, args, reply); done {
		return err
	}
	aclObj, _, err := n.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	if !aclObj.AllowNodePoolOperation(args.Name, acl.NodePoolCapabilityRead) {
		return structs.PermissionDenied("read capability required on node pool %q", args.Name)
	}
	return n.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		p, err := store.NodePoolByName(ws, args.Name)
		if err != nil {
			return 0, err
		}
		reply.NodePool = p
		return max(store.Index(tableNodePoolsName), 1), nil
	})
}

// tableNodePoolsName is the state table whose index answers node pool reads.
const tableNodePoolsName = "node_pools"

// List lists the node pools the caller may read.
func (n *NodePool) List(args *structs.NodePoolListRequest, reply *structs.NodePoolListResponse) error {
	if done, err := n.srv.forwardRead("NodePool.List", &args.QueryOptions, args, reply); done {
		return err
	}
	aclObj, _, err := n.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	return n.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		all, err := store.NodePools(ws, args.Prefix)
		if err != nil {
			return 0, err
		}
		reply.NodePools, reply.NextToken, err = paginator.Page(all, args.QueryOptions,
			paginator.Order[*structs.NodePool]{Key: func(p *structs.NodePool) paginator.Key { return paginator.ByID(p.Name) }},
			func(p *structs.NodePool) bool {
				return aclObj.AllowNodePoolOperation(p.Name, acl.NodePoolCapabilityRead)
			},
			func(p *structs.NodePool) (*structs.NodePool, error) { return p, nil })
		if err != nil {
			return 0, err
		}
		return max(store.Index(tableNodePoolsName), 1), nil
	})
}
