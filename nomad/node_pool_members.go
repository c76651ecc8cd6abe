package nomad

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/nomad/paginator"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

var nodePoolListJobs = read("NodePool.ListJobs", spec[structs.NodePoolJobsRequest, structs.JobListResponse]{
	Authorize: nodePoolCap(acl.NodePoolCapabilityRead, func(req *structs.NodePoolJobsRequest) string { return req.Name }),
	Serve:     nodePoolServeJobs,
})

// ListJobs lists the jobs whose node_pool is the pool, in the namespaces where the caller
// may list jobs. The caller needs read on the pool.
func (n *NodePool) ListJobs(args *structs.NodePoolJobsRequest, reply *structs.JobListResponse) error {
	return nodePoolListJobs.Call(n.srv, args, reply)
}

func nodePoolServeJobs(c *rpcCall, args *structs.NodePoolJobsRequest, reply *structs.JobListResponse) error {
	aclObj := c.acl
	namespace := requestNamespace("", args.Namespace)
	return c.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		if p, err := store.NodePoolByName(ws, args.Name); err != nil {
			return 0, err
		} else if p == nil {
			return 0, structs.NotFound(structs.ErrNodePoolNotFound)
		}
		jobs, err := store.Jobs(ws, namespace, args.Prefix)
		if err != nil {
			return 0, err
		}
		reply.Jobs, reply.NextToken, err = paginator.Page(jobs, args.QueryOptions,
			paginator.Order[*structs.Job]{Key: func(j *structs.Job) paginator.Key { return paginator.ByNamespaceID(j.Namespace, j.ID) }},
			func(j *structs.Job) bool {
				return j.NodePool == args.Name && aclObj.AllowNamespaceOperation(j.Namespace, acl.NamespaceCapabilityListJobs)
			},
			func(j *structs.Job) (*structs.JobListStub, error) {
				summary, err := store.JobSummaryByID(ws, j.Namespace, j.ID)
				if err != nil {
					return nil, err
				}
				return j.Stub(summary, false), nil
			})
		if err != nil {
			return 0, err
		}
		return maxIndex(store, "jobs", "job_summary", tableNodePoolsName), nil
	})
}

var nodePoolListNodes = read("NodePool.ListNodes", spec[structs.NodePoolNodesRequest, structs.NodeListResponse]{
	Authorize: func(c *rpcCall, req *structs.NodePoolNodesRequest) error {
		if !c.acl.AllowNodePoolOperation(req.Name, acl.NodePoolCapabilityRead) || !c.acl.AllowNodeRead() {
			return structs.PermissionDenied("read capability on node pool %q and node read required", req.Name)
		}
		return nil
	},
	Serve: nodePoolServeNodes,
})

// ListNodes lists the nodes of the pool (every node for "all"). The caller needs read on the
// pool and node read.
func (n *NodePool) ListNodes(args *structs.NodePoolNodesRequest, reply *structs.NodeListResponse) error {
	return nodePoolListNodes.Call(n.srv, args, reply)
}

func nodePoolServeNodes(c *rpcCall, args *structs.NodePoolNodesRequest, reply *structs.NodeListResponse) error {
	return c.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		if p, err := store.NodePoolByName(ws, args.Name); err != nil {
			return 0, err
		} else if p == nil {
			return 0, structs.NotFound(structs.ErrNodePoolNotFound)
		}
		nodes, err := store.Nodes(ws, args.Prefix)
		if err != nil {
			return 0, err
		}
		reply.Nodes, reply.NextToken, err = paginator.Page(nodes, args.QueryOptions,
			paginator.Order[*structs.Node]{Key: func(n *structs.Node) paginator.Key { return paginator.ByID(n.ID) }},
			func(node *structs.Node) bool {
				pool := node.NodePool
				if pool == "" {
					pool = structs.NodePoolDefault
				}
				return args.Name == structs.NodePoolAll || pool == args.Name
			},
			func(node *structs.Node) (*structs.NodeListStub, error) { return node.Stub(false, false), nil })
		if err != nil {
			return 0, err
		}
		return maxIndex(store, "nodes", tableNodePoolsName), nil
	})
}
