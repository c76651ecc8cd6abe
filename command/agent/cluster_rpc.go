package agent

import (
	"net"

	"github.com/nomadfork/nomad/nomad"
	"github.com/nomadfork/nomad/structs"
)

// clusterRPC is how the HTTP API reaches the servers: one declared server RPC (a row of
// nomad/endpoint.go) by name, with the caller's request as it was parsed, its token included.
// A server agent runs the row in-process (serverRPC); a client-only agent sends it over its
// client's connection to the servers (client.RPCServers). Either way the servers resolve the
// caller's token and decide, so a request means the same whichever agent it is sent to.
type clusterRPC interface {
	RPC(method string, args, reply any) error
}

// serverRPC runs rows on the agent's own server.
type serverRPC struct{ srv *nomad.Server }

func (s serverRPC) RPC(method string, args, reply any) error { return s.srv.RPC(method, args, reply) }

// authorize asks the servers the ACL decision check names for the caller's token. It reads
// from whichever server answers (a stale read): a token is checked as the server the request
// reaches sees it, as when the agent ran the check in-process.
func (s *HTTPServer) authorize(token string, check structs.ACLAuthorizeRequest) error {
	check.AuthToken = token
	check.AllowStale = true
	var reply structs.ACLAuthorizeResponse
	return s.rpc.RPC("ACL.Authorize", &check, &reply)
}

// authorizeFunc adapts a namespaced check to the (token, namespace) rules of the allocation
// routes.
func (s *HTTPServer) authorizeFunc(check string) func(token, namespace string) error {
	return func(token, namespace string) error {
		return s.authorize(token, structs.ACLAuthorizeRequest{Check: check, Namespace: namespace})
	}
}

// allocByID is the servers' view of allocation id, nil when there is none. A server agent
// reads its own state, as the routes that decide on it always have. A client-only agent
// answers for its own allocations from its client, and asks the servers about any other with
// the caller's token (Alloc.GetAlloc, read-job).
func (s *HTTPServer) allocByID(opts structs.QueryOptions, id string) (*structs.Allocation, error) {
	if s.srv != nil {
		return s.srv.State().AllocByID(nil, id)
	}
	if c := s.agent.Client(); c != nil {
		if alloc := c.Allocation(id); alloc != nil {
			return alloc, nil
		}
	}
	opts.AllowStale = true
	opts.MinQueryIndex = 0
	var reply structs.SingleAllocResponse
	if err := s.rpc.RPC("Alloc.GetAlloc", &structs.AllocSpecificRequest{AllocID: id, QueryOptions: opts}, &reply); err != nil {
		return nil, err
	}
	return reply.Alloc, nil
}

// nodeByID is the servers' view of node id, nil when there is none; a client-only agent asks
// the servers with the caller's token (Node.GetNode, node read).
func (s *HTTPServer) nodeByID(opts structs.QueryOptions, id string) (*structs.Node, error) {
	if s.srv != nil {
		return s.srv.State().NodeByID(nil, id)
	}
	opts.AllowStale = true
	opts.MinQueryIndex = 0
	var reply structs.SingleNodeResponse
	if err := s.rpc.RPC("Node.GetNode", &structs.NodeSpecificRequest{NodeID: id, QueryOptions: opts}, &reply); err != nil {
		return nil, err
	}
	return reply.Node, nil
}

// dialNode opens a stream to the client of nodeID for a request for path, made with the
// caller's token. A server agent opens it itself, having decided on the token. A client-only
// agent relays it through its server (client.RPCServers.Forward), which decides on the token
// again and picks the node itself: a node's stream server serves what reaches it without
// asking, so no client may reach another node's directly. Routes outside the server's
// allow-list (a node's metadata and identity) stay with a server agent.
func (s *HTTPServer) dialNode(nodeID, path, token string) (net.Conn, error) {
	if s.srv != nil {
		return s.srv.DialNode(nodeID)
	}
	if s.agent.rpcServers == nil || !nomad.ClientForwardAllowed(path) {
		return nil, structs.BadRequest("this agent runs only a client and does not relay %s to node %s, another node: send the request to a server agent", path, nodeID)
	}
	return s.agent.rpcServers.Forward(token)
}

// ownServer is the agent's own server, for the routes that act on it rather than on the
// cluster (its gossip pool, its scheduling workers); a client-only agent has none, and the
// request belongs to a server agent.
func (s *HTTPServer) ownServer(what string) (*nomad.Server, error) {
	if s.srv == nil {
		return nil, structs.BadRequest("this agent runs only a client: %s belongs to a server agent; send the request to one", what)
	}
	return s.srv, nil
}
