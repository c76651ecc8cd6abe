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

var nodePoolUpsertNodePools = write("NodePool.UpsertNodePools", spec[structs.NodePoolUpsertRequest, structs.GenericResponse]{
	// A request naming no pool names nothing to authorise: it is refused as malformed first.
	Prepare: func(req *structs.NodePoolUpsertRequest) error {
		if len(req.NodePools) == 0 {
			return structs.BadRequest("must specify at least one node pool")
		}
		return nil
	},
	Authorize: func(c *rpcCall, req *structs.NodePoolUpsertRequest) error {
		for _, p := range req.NodePools {
			if p != nil && !c.acl.AllowNodePoolOperation(p.Name, acl.NodePoolCapabilityWrite) {
				return structs.PermissionDenied("write capability required on node pool %q", p.Name)
			}
		}
		// Prepare refuses a request naming no pool; should one get here, the rule still
		// allows no caller without a right.
		if len(req.NodePools) == 0 && !c.acl.AllowNodePoolOperation(structs.DefaultNodePool, acl.NodePoolCapabilityWrite) {
			return structs.PermissionDenied("write capability required on node pool %q", structs.DefaultNodePool)
		}
		return nil
	},
	Validate: func(req *structs.NodePoolUpsertRequest) error {
		for _, p := range req.NodePools {
			if p == nil {
				return structs.BadRequest("missing node pool")
			}
			if err := p.Validate(); err != nil {
				return err
			}
		}
		return nil
	},
	Fix:     func(c *rpcCall, req *structs.NodePoolUpsertRequest) { req.Actor = c.actor },
	Message: structs.NodePoolUpsertRequestType,
})

// UpsertNodePools creates or updates node pools; the built-in ones cannot be written.
func (n *NodePool) UpsertNodePools(args *structs.NodePoolUpsertRequest, reply *structs.GenericResponse) error {
	return nodePoolUpsertNodePools.Call(n.srv, args, reply)
}

var nodePoolDeleteNodePools = write("NodePool.DeleteNodePools", spec[structs.NodePoolDeleteRequest, structs.GenericResponse]{
	// A request naming no pool names nothing to authorise: it is refused as malformed first.
	Prepare: func(req *structs.NodePoolDeleteRequest) error {
		if len(req.Names) == 0 {
			return structs.BadRequest("missing node pool name")
		}
		return nil
	},
	Authorize: func(c *rpcCall, req *structs.NodePoolDeleteRequest) error {
		for _, name := range req.Names {
			if !c.acl.AllowNodePoolOperation(name, acl.NodePoolCapabilityDelete) {
				return structs.PermissionDenied("delete capability required on node pool %q", name)
			}
		}
		// Prepare refuses a request naming no pool; should one get here, the rule still
		// allows no caller without a right.
		if len(req.Names) == 0 && !c.acl.AllowNodePoolOperation(structs.DefaultNodePool, acl.NodePoolCapabilityDelete) {
			return structs.PermissionDenied("delete capability required on node pool %q", structs.DefaultNodePool)
		}
		return nil
	},
	Validate: func(req *structs.NodePoolDeleteRequest) error {
		for _, name := range req.Names {
			if name == "" {
				return structs.BadRequest("missing node pool name")
			}
			if structs.IsBuiltInNodePool(name) {
				return structs.BadRequest("deleting built-in node pool %q is not allowed", name)
			}
		}
		return nil
	},
	Fix:     func(c *rpcCall, req *structs.NodePoolDeleteRequest) { req.Actor = c.actor },
	Message: structs.NodePoolDeleteRequestType,
})

// DeleteNodePools deletes node pools that hold no nodes and no live jobs.
func (n *NodePool) DeleteNodePools(args *structs.NodePoolDeleteRequest, reply *structs.GenericResponse) error {
	return nodePoolDeleteNodePools.Call(n.srv, args, reply)
}

var nodePoolGetNodePool = read("NodePool.GetNodePool", spec[structs.NodePoolSpecificRequest, structs.SingleNodePoolResponse]{
	Authorize: nodePoolCap(acl.NodePoolCapabilityRead, func(req *structs.NodePoolSpecificRequest) string { return req.Name }),
	Serve: func(c *rpcCall, req *structs.NodePoolSpecificRequest, reply *structs.SingleNodePoolResponse) error {
		return c.srv.blockingRPC(&req.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			p, err := store.NodePoolByName(ws, req.Name)
			if err != nil {
				return 0, err
			}
			reply.NodePool = p
			return max(store.Index(tableNodePoolsName), 1), nil
		})
	},
})

// GetNodePool reads one node pool; reply.NodePool is nil when unknown.
func (n *NodePool) GetNodePool(args *structs.NodePoolSpecificRequest, reply *structs.SingleNodePoolResponse) error {
	return nodePoolGetNodePool.Call(n.srv, args, reply)
}

// tableNodePoolsName is the state table whose index answers node pool reads.
const tableNodePoolsName = "node_pools"

// nodePoolList needs no capability: the list holds only the pools the caller may read.
var nodePoolList = read("NodePool.List", spec[structs.NodePoolListRequest, structs.NodePoolListResponse]{
	Caller:    callerAnyone,
	Authorize: anyone[structs.NodePoolListRequest],
	Serve: func(c *rpcCall, req *structs.NodePoolListRequest, reply *structs.NodePoolListResponse) error {
		return pagedList(c.srv.blockingRPC, &req.QueryOptions, &reply.QueryMeta, &reply.NodePools,
			func(ws memdb.WatchSet, store *state.StateStore) ([]*structs.NodePool, error) {
				return store.NodePools(ws, req.Prefix)
			},
			paginator.Order[*structs.NodePool]{Key: func(p *structs.NodePool) paginator.Key { return paginator.ByID(p.Name) }},
			func(p *structs.NodePool) bool {
				return c.acl.AllowNodePoolOperation(p.Name, acl.NodePoolCapabilityRead)
			},
			func(p *structs.NodePool) (*structs.NodePool, error) { return p, nil },
			func(store *state.StateStore) uint64 { return max(store.Index(tableNodePoolsName), 1) })
	},
})

// List lists the node pools the caller may read.
func (n *NodePool) List(args *structs.NodePoolListRequest, reply *structs.NodePoolListResponse) error {
	return nodePoolList.Call(n.srv, args, reply)
}
