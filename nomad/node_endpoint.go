package nomad

import (
	"strings"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/nomad/paginator"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// Node is the node RPC endpoint. Clients register and heartbeat through it and read the
// allocations of their node; operators read nodes.
type Node struct {
	srv *Server
}

// nodeRegisterSpec is a registration row. The caller must be the node itself (its stored
// secret), the agent's own client registering its node for the first time, a node introduced
// over a client connection (self), or have node write access.
func nodeRegisterSpec(self bool) spec[structs.NodeRegisterRequest, structs.NodeUpdateResponse] {
	return spec[structs.NodeRegisterRequest, structs.NodeUpdateResponse]{
		Caller: callerNodeOrToken,
		Prepare: func(req *structs.NodeRegisterRequest) error {
			if req.Node == nil {
				return structs.BadRequest("missing node for client registration")
			}
			return nil
		},
		Authorize: nodeRegisterRule(self),
		Validate: func(req *structs.NodeRegisterRequest) error {
			node := req.Node
			switch {
			case node.ID == "":
				return structs.BadRequest("missing node ID for client registration")
			case node.SecretID == "":
				return structs.BadRequest("missing node secret ID for client registration")
			case node.Datacenter == "":
				return structs.BadRequest("missing datacenter for client registration")
			case node.Name == "":
				return structs.BadRequest("missing node name for client registration")
			case strings.ContainsAny(node.ID, "/ \t\n"):
				return structs.BadRequest("invalid node ID %q", node.ID)
			case node.Status != "" && !structs.ValidNodeStatus(node.Status):
				return structs.BadRequest("invalid node status %q", node.Status)
			}
			return nil
		},
		Serve: func(c *rpcCall, req *structs.NodeRegisterRequest, reply *structs.NodeUpdateResponse) error {
			return c.srv.Endpoints.Node.register(req, reply)
		},
	}
}

var nodeRegister = write("Node.Register", nodeRegisterSpec(false))

// nodeRegisterClient is Register for a client agent's connection, which reaches it through
// rpc_client_conn.go after checking the node's secret (and servers forward it to the leader):
// a node not yet known registers itself with its own secret, no ACL token needed, as
// upstream's clients do.
var nodeRegisterClient = write("Node.RegisterClient", nodeRegisterSpec(true))

// Register registers a node, or registers it again after a restart.
func (n *Node) Register(args *structs.NodeRegisterRequest, reply *structs.NodeUpdateResponse) error {
	return nodeRegister.Call(n.srv, args, reply)
}

// RegisterClient is Register for a node that came over a client agent's connection.
func (n *Node) RegisterClient(args *structs.NodeRegisterRequest, reply *structs.NodeUpdateResponse) error {
	return nodeRegisterClient.Call(n.srv, args, reply)
}

// register writes an authorised, valid registration on the leader.
func (n *Node) register(args *structs.NodeRegisterRequest, reply *structs.NodeUpdateResponse) error {
	node := args.Node
	if node.Status == "" {
		node.Status = structs.NodeStatusInit
	}
	if node.SchedulingEligibility == "" {
		node.SchedulingEligibility = structs.NodeSchedulingEligible
	}
	if node.NodePool == "" {
		node.NodePool = structs.DefaultNodePool
	}
	store := n.srv.State()
	existing, err := store.NodeByID(nil, node.ID)
	if err != nil {
		return err
	}
	if other, err := store.NodeBySecretID(nil, node.SecretID); err != nil {
		return err
	} else if other != nil && other.ID != node.ID {
		return structs.BadRequest("node secret ID is already in use by another node")
	}
	t := now()
	node.StatusUpdatedAt = t.Unix()
	if existing == nil {
		node.Events = append(node.Events, &api.NodeEvent{
			Subsystem: structs.NodeEventSubsystemCluster, Message: structs.NodeEventRegistered, Timestamp: t.UTC(),
		})
	}
	if existing == nil || existing.Status != node.Status {
		if args.Evals, err = n.srv.nodeEvals(node, node.Status, t.UnixNano()); err != nil {
			return err
		}
	}
	// The introduction was checked; its token is a secret and stays out of the log.
	args.IntroToken, args.PlainConn = "", false
	index, err := n.srv.raftApply(structs.NodeRegisterRequestType, args)
	if err != nil {
		return err
	}
	n.heartbeatReply(reply, node.ID, node.Status, args.Evals, index)
	return nil
}

var nodeUpdateStatus = write("Node.UpdateStatus", reportedByNode(func(req *structs.NodeUpdateStatusRequest) string { return req.NodeID }, "client status update",
	spec[structs.NodeUpdateStatusRequest, structs.NodeUpdateResponse]{
		Validate: func(req *structs.NodeUpdateStatusRequest) error {
			if !structs.ValidNodeStatus(req.Status) {
				return structs.BadRequest("invalid node status %q", req.Status)
			}
			return nil
		},
		Serve: func(c *rpcCall, req *structs.NodeUpdateStatusRequest, reply *structs.NodeUpdateResponse) error {
			return c.srv.Endpoints.Node.updateStatus(req, reply)
		},
	}))

// UpdateStatus is the client's heartbeat: it resets the node's heartbeat deadline and, only
// when the status changes, writes the change (with the evaluations it needs) through Raft.
func (n *Node) UpdateStatus(args *structs.NodeUpdateStatusRequest, reply *structs.NodeUpdateResponse) error {
	return nodeUpdateStatus.Call(n.srv, args, reply)
}

func (n *Node) updateStatus(args *structs.NodeUpdateStatusRequest, reply *structs.NodeUpdateResponse) error {
	node, err := n.srv.State().NodeByID(nil, args.NodeID)
	if err != nil {
		return err
	}
	if node == nil {
		return structs.NotFound(structs.ErrNodeNotFound)
	}
	index := node.ModifyIndex
	if node.Status != args.Status {
		t := now()
		args.UpdatedAt = t.UnixNano()
		if args.Evals, err = n.srv.nodeEvals(node, args.Status, args.UpdatedAt); err != nil {
			return err
		}
		if index, err = n.srv.raftApply(structs.NodeUpdateStatusRequestType, args); err != nil {
			return err
		}
	}
	n.heartbeatReply(reply, args.NodeID, args.Status, args.Evals, index)
	return nil
}

// heartbeatReply answers a node's register or status update: the node's heartbeat deadline
// starts again, or ends when the node is down, and the reply says when the next is due.
func (n *Node) heartbeatReply(reply *structs.NodeUpdateResponse, nodeID, status string, evals []*structs.Evaluation, index uint64) {
	if status == structs.NodeStatusDown {
		n.srv.clearHeartbeat(nodeID)
	} else {
		reply.HeartbeatTTL = n.srv.resetHeartbeat(nodeID)
	}
	n.fillReply(reply, evals, index)
}

func (n *Node) fillReply(reply *structs.NodeUpdateResponse, evals []*structs.Evaluation, index uint64) {
	reply.EvalIDs, reply.EvalCreateIndex = evalsWritten(evals, index)
	reply.NodeModifyIndex, reply.Index = index, index
	n.srv.setQueryMeta(&reply.QueryMeta)
}

var nodeGetNode = read("Node.GetNode", spec[structs.NodeSpecificRequest, structs.SingleNodeResponse]{
	Caller:    callerNodeOrToken,
	Authorize: nodeOr(func(req *structs.NodeSpecificRequest) string { return req.NodeID }, nodeReadRule[structs.NodeSpecificRequest]),
	Serve: func(c *rpcCall, req *structs.NodeSpecificRequest, reply *structs.SingleNodeResponse) error {
		return blockingGet(c, &req.QueryOptions, &reply.QueryMeta,
			func(ws memdb.WatchSet, store *state.StateStore) (*structs.Node, error) {
				return store.NodeByID(ws, req.NodeID)
			},
			func(node *structs.Node) { reply.Node = node.Sanitized() }, func(node *structs.Node) uint64 { return node.ModifyIndex }, "nodes")
	},
})

// GetNode reads one node, without its secret; the node itself or node read access.
func (n *Node) GetNode(args *structs.NodeSpecificRequest, reply *structs.SingleNodeResponse) error {
	return nodeGetNode.Call(n.srv, args, reply)
}

var nodeList = read("Node.List", spec[structs.NodeListRequest, structs.NodeListResponse]{
	Authorize: nodeReadRule[structs.NodeListRequest],
	Serve: func(c *rpcCall, req *structs.NodeListRequest, reply *structs.NodeListResponse) error {
		return pagedList(c.srv.blockingRPC, &req.QueryOptions, &reply.QueryMeta, &reply.Nodes,
			func(ws memdb.WatchSet, store *state.StateStore) ([]*structs.Node, error) {
				return store.Nodes(ws, req.Prefix)
			},
			paginator.Order[*structs.Node]{Key: func(n *structs.Node) paginator.Key { return paginator.ByID(n.ID) }},
			nil,
			func(n *structs.Node) (*structs.NodeListStub, error) {
				return n.Stub(req.WithOS, req.WithResources), nil
			},
			func(store *state.StateStore) uint64 { return store.Index("nodes") })
	},
})

// List lists nodes; node read access is needed.
func (n *Node) List(args *structs.NodeListRequest, reply *structs.NodeListResponse) error {
	return nodeList.Call(n.srv, args, reply)
}

var nodeGetAllocs = read("Node.GetAllocs", spec[structs.NodeSpecificRequest, structs.NodeAllocsResponse]{
	Caller:    callerNodeOrToken,
	Authorize: nodeOr(func(req *structs.NodeSpecificRequest) string { return req.NodeID }, nodeReadRule[structs.NodeSpecificRequest]),
	Serve: func(c *rpcCall, req *structs.NodeSpecificRequest, reply *structs.NodeAllocsResponse) error {
		// The node itself (whose secret is no ACL token, so c.acl is nil, or ACLs are off)
		// sees all of them; an operator those of the namespaces where it has read-job.
		tokenACL := c.acl
		return c.srv.blockingRPC(&req.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			allocs, err := store.AllocsByNode(ws, req.NodeID)
			if err != nil {
				return 0, err
			}
			reply.Allocs = make([]*structs.Allocation, 0, len(allocs))
			for _, a := range allocs {
				if tokenACL != nil && !tokenACL.AllowNamespaceOperation(a.Namespace, acl.NamespaceCapabilityReadJob) {
					continue
				}
				reply.Allocs = append(reply.Allocs, a)
			}
			// The table index, not the newest allocation's: a purge deletes allocations, and
			// the client must see the answer change.
			return store.Index("allocs"), nil
		})
	},
})

// GetAllocs reads the allocations placed on a node, with their jobs. The node's own client
// reads them with its secret and sees all of them; an operator needs node read access and
// sees those of the namespaces where it has read-job.
func (n *Node) GetAllocs(args *structs.NodeSpecificRequest, reply *structs.NodeAllocsResponse) error {
	return nodeGetAllocs.Call(n.srv, args, reply)
}
