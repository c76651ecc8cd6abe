package nomad

import (
	"crypto/subtle"
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

// authorizeNode lets a call about a node through when token is that node's own secret, or
// an ACL token with node read (or write) access. It returns the ACL of a token caller, nil for
// the node itself. Secrets are compared in constant time, and none appears in an error.
func (s *Server) authorizeNode(token, nodeID string, write bool) (*acl.ACL, error) {
	if token != "" && nodeID != "" {
		node, err := s.State().NodeByID(nil, nodeID)
		if err != nil {
			return nil, err
		}
		if node != nil && subtle.ConstantTimeCompare([]byte(node.SecretID), []byte(token)) == 1 {
			return nil, nil
		}
		// The node's identity is as good as its secret for its own calls.
		if node != nil && looksLikeJWT(token) && s.verifyNodeIdentity(s.State(), token, nodeID, now()) {
			return nil, nil
		}
	}
	aclObj, _, err := s.resolveACL(token)
	if err != nil {
		return nil, err
	}
	if write && !aclObj.AllowNodeWrite() {
		return nil, structs.PermissionDenied("node write access required")
	}
	if !write && !aclObj.AllowNodeRead() {
		return nil, structs.PermissionDenied("node read access required")
	}
	return aclObj, nil
}

// authorizeRegister is authorizeNode for a registration. A node ID keeps the secret it was
// first registered with, whoever asks: a record with another secret would hand the node to
// whoever made it up. A node not yet known may register itself with its own secret when it
// comes over a client agent's connection (self) or is the agent's own client; otherwise an
// operator token with node write access is needed.
func (s *Server) authorizeRegister(token string, node *structs.Node, self bool) error {
	existing, err := s.State().NodeByID(nil, node.ID)
	if err != nil {
		return err
	}
	if existing != nil && !secretsEqual(existing.SecretID, node.SecretID) {
		return structs.PermissionDenied("node %s is registered with another secret", node.ID)
	}
	if existing == nil && node.ID != "" && secretsEqual(node.SecretID, token) && (self || s.isLocalNodeSecret(token)) {
		return nil
	}
	_, err = s.authorizeNode(token, node.ID, true)
	return err
}

// Register registers a node, or registers it again after a restart. The caller must be the
// node itself (its stored secret), the agent's own client registering its node for the first
// time, or have node write access.
func (n *Node) Register(args *structs.NodeRegisterRequest, reply *structs.NodeUpdateResponse) error {
	return n.register("Node.Register", args, reply, false)
}

// RegisterClient is Register for a client agent's connection, which reaches it through
// rpc_client_conn.go after checking the node's secret (and servers forward it to the leader):
// a node not yet known registers itself with its own secret, no ACL token needed, as
// upstream's clients do.
func (n *Node) RegisterClient(args *structs.NodeRegisterRequest, reply *structs.NodeUpdateResponse) error {
	return n.register("Node.RegisterClient", args, reply, true)
}

func (n *Node) register(method string, args *structs.NodeRegisterRequest, reply *structs.NodeUpdateResponse, self bool) error {
	if done, err := n.srv.forward(method, args, reply); done {
		return err
	}
	if args.Node == nil {
		return structs.BadRequest("missing node for client registration")
	}
	if err := n.srv.authorizeRegister(args.AuthToken, args.Node, self); err != nil {
		return err
	}
	node := args.Node
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
	}
	if node.Status == "" {
		node.Status = structs.NodeStatusInit
	}
	if !structs.ValidNodeStatus(node.Status) {
		return structs.BadRequest("invalid node status %q", node.Status)
	}
	if node.SchedulingEligibility == "" {
		node.SchedulingEligibility = structs.NodeSchedulingEligible
	}
	if node.NodePool == "" {
		node.NodePool = structs.DefaultNodePool
	}
	if err := n.srv.checkLeader(); err != nil {
		return err
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
	index, err := n.srv.raftApply(structs.NodeRegisterRequestType, args)
	if err != nil {
		return err
	}
	if node.Status == structs.NodeStatusDown {
		n.srv.clearHeartbeat(node.ID)
	} else {
		reply.HeartbeatTTL = n.srv.resetHeartbeat(node.ID)
	}
	n.fillReply(reply, args.Evals, index)
	return nil
}

// UpdateStatus is the client's heartbeat: it resets the node's heartbeat deadline and, only
// when the status changes, writes the change (with the evaluations it needs) through Raft.
func (n *Node) UpdateStatus(args *structs.NodeUpdateStatusRequest, reply *structs.NodeUpdateResponse) error {
	if done, err := n.srv.forward("Node.UpdateStatus", args, reply); done {
		return err
	}
	if args.NodeID == "" {
		return structs.BadRequest("missing node ID for client status update")
	}
	if _, err := n.srv.authorizeNode(args.AuthToken, args.NodeID, true); err != nil {
		return err
	}
	if !structs.ValidNodeStatus(args.Status) {
		return structs.BadRequest("invalid node status %q", args.Status)
	}
	if err := n.srv.checkLeader(); err != nil {
		return err
	}
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
	if args.Status == structs.NodeStatusDown {
		n.srv.clearHeartbeat(args.NodeID)
	} else {
		reply.HeartbeatTTL = n.srv.resetHeartbeat(args.NodeID)
	}
	n.fillReply(reply, args.Evals, index)
	return nil
}

func (n *Node) fillReply(reply *structs.NodeUpdateResponse, evals []*structs.Evaluation, index uint64) {
	for _, e := range evals {
		reply.EvalIDs = append(reply.EvalIDs, e.ID)
	}
	if len(evals) > 0 {
		reply.EvalCreateIndex = index
	}
	reply.NodeModifyIndex = index
	reply.Index = index
	n.srv.setQueryMeta(&reply.QueryMeta)
}

// GetNode reads one node, without its secret; node read access is needed.
func (n *Node) GetNode(args *structs.NodeSpecificRequest, reply *structs.SingleNodeResponse) error {
	if done, err := n.srv.forwardRead("Node.GetNode", &args.QueryOptions, args, reply); done {
		return err
	}
	if _, err := n.srv.authorizeNode(args.AuthToken, args.NodeID, false); err != nil {
		return err
	}
	return n.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		node, err := store.NodeByID(ws, args.NodeID)
		if err != nil {
			return 0, err
		}
		reply.Node = node.Sanitized()
		if node != nil {
			return node.ModifyIndex, nil
		}
		return store.Index("nodes"), nil
	})
}

// List lists nodes; node read access is needed.
func (n *Node) List(args *structs.NodeListRequest, reply *structs.NodeListResponse) error {
	if done, err := n.srv.forwardRead("Node.List", &args.QueryOptions, args, reply); done {
		return err
	}
	if _, err := n.srv.authorizeNode(args.AuthToken, "", false); err != nil {
		return err
	}
	return n.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		nodes, err := store.Nodes(ws, args.Prefix)
		if err != nil {
			return 0, err
		}
		reply.Nodes, reply.NextToken, err = paginator.Page(nodes, args.QueryOptions,
			paginator.Order[*structs.Node]{Key: func(n *structs.Node) paginator.Key { return paginator.ByID(n.ID) }},
			nil, func(n *structs.Node) (*structs.NodeListStub, error) {
				return n.Stub(args.WithOS, args.WithResources), nil
			})
		if err != nil {
			return 0, err
		}
		return store.Index("nodes"), nil
	})
}

// GetAllocs reads the allocations placed on a node, with their jobs. The node's own client
// reads them with its secret and sees all of them; an operator needs node read access and
// sees those of the namespaces where it has read-job.
func (n *Node) GetAllocs(args *structs.NodeSpecificRequest, reply *structs.NodeAllocsResponse) error {
	if done, err := n.srv.forwardRead("Node.GetAllocs", &args.QueryOptions, args, reply); done {
		return err
	}
	aclObj, err := n.srv.authorizeNode(args.AuthToken, args.NodeID, false)
	if err != nil {
		return err
	}
	return n.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		allocs, err := store.AllocsByNode(ws, args.NodeID)
		if err != nil {
			return 0, err
		}
		reply.Allocs = make([]*structs.Allocation, 0, len(allocs))
		for _, a := range allocs {
			if aclObj != nil && !aclObj.AllowNamespaceOperation(a.Namespace, acl.NamespaceCapabilityReadJob) {
				continue
			}
			reply.Allocs = append(reply.Allocs, a)
		}
		// The table index, not the newest allocation's: a purge deletes allocations, and the
		// client must see the answer change.
		return store.Index("allocs"), nil
	})
}
