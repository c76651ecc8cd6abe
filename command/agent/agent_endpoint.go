package agent

import (
	"net"
	"net/http"
	"strconv"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/nomad"
	"github.com/nomadfork/nomad/structs"
)

// The gossip routes: the member list, joining other servers and forcing a member out. They
// act on this agent's own gossip pool, as upstream's do, so they call the server in process
// rather than forwarding to the leader.

// member describes this agent: its gossip member, or, for a server without gossip (a dev
// agent with Raft in memory), the member it would be.
func (s *HTTPServer) member() *api.AgentMember {
	if s.srv == nil {
		return s.clientMember()
	}
	if sf := s.srv.Serf(); sf != nil {
		return nomad.SerfMember(sf.LocalMember())
	}
	cfg := s.agent.config
	host, portStr, _ := net.SplitHostPort(cfg.Advertise.Serf)
	port, _ := strconv.ParseUint(portStr, 10, 16)
	_, rpcPort, _ := net.SplitHostPort(cfg.Advertise.RPC)
	tags := map[string]string{
		"role":     "nomad",
		"region":   cfg.Region,
		"dc":       cfg.Datacenter,
		"id":       s.srv.Config().NodeID,
		"port":     rpcPort,
		"rpc_addr": host,
		"build":    s.srv.Config().Build,
		"vsn":      "1",
		"mvn":      "1",
		"raft_vsn": "3",
	}
	if cfg.Server.BootstrapExpect > 0 {
		tags["expect"] = strconv.Itoa(cfg.Server.BootstrapExpect)
	}
	if cfg.Server.BootstrapExpect <= 1 {
		tags["bootstrap"] = "1"
	}
	return &api.AgentMember{Name: cfg.Name + "." + cfg.Region, Addr: host, Port: uint16(port), Tags: tags, Status: "alive"}
}

// agentMembers needs node read, as upstream's.
func (s *HTTPServer) agentMembers(_ http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.authorize(queryOptions(r).AuthToken, structs.ACLAuthorizeRequest{Check: structs.ACLCheckNodeRead}); err != nil {
		return nil, err
	}
	if s.srv == nil {
		// A client-only agent is no gossip member: the pool is its server's.
		var reply structs.StatusMembersResponse
		args := structs.StatusRequest{QueryOptions: queryOptions(r)}
		args.AllowStale = true
		if err := s.rpc.RPC("Status.Members", &args, &reply); err != nil {
			return nil, err
		}
		return reply.Members, nil
	}
	srv := s.srv
	cfg := s.agent.config
	out := &api.ServerMembers{ServerName: cfg.Name, ServerRegion: cfg.Region, ServerDC: cfg.Datacenter}
	if sf := srv.Serf(); sf != nil {
		for _, m := range sf.Members() {
			out.Members = append(out.Members, nomad.SerfMember(m))
		}
	} else {
		out.Members = []*api.AgentMember{s.member()}
	}
	return out, nil
}

// joinResponse is api's joinResponse on the wire: a failed join is a 200 whose body names
// the error, as upstream answers.
type joinResponse struct {
	NumJoined int    `json:"num_joined"`
	Error     string `json:"error"`
}

// agentJoin joins this server's gossip pool to the servers at ?address= (serf addresses).
// It needs agent write. Joining gossip makes no voter: the leader adds a server to Raft only
// once it authenticates on its RPC port.
func (s *HTTPServer) agentJoin(_ http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.authorize(queryOptions(r).AuthToken, structs.ACLAuthorizeRequest{Check: structs.ACLCheckAgentWrite}); err != nil {
		return nil, err
	}
	addrs := r.URL.Query()["address"]
	if len(addrs) == 0 {
		return nil, structs.BadRequest("missing address: name at least one serf address to join")
	}
	srv, err := s.ownServer("joining the gossip pool")
	if err != nil {
		return nil, err
	}
	n, err := srv.JoinGossip(addrs)
	resp := &joinResponse{NumJoined: n}
	if err != nil {
		resp.Error = err.Error()
	}
	return resp, nil
}

// agentForceLeave moves a failed member (?node=, its gossip name) to left, and with ?prune=
// drops it from the member list at once. Once it has left, the leader removes it from Raft.
// It needs agent write.
func (s *HTTPServer) agentForceLeave(_ http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.authorize(queryOptions(r).AuthToken, structs.ACLAuthorizeRequest{Check: structs.ACLCheckAgentWrite}); err != nil {
		return nil, err
	}
	q := r.URL.Query()
	node := q.Get("node")
	if node == "" {
		return nil, structs.BadRequest("missing node: name the member to force out")
	}
	prune := false
	if v := q.Get("prune"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, structs.BadRequest("prune: %q is not a boolean", v)
		}
		prune = b
	}
	srv, err := s.ownServer("forcing a gossip member out")
	if err != nil {
		return nil, err
	}
	return nil, srv.ForceLeave(node, prune)
}

// clientMember describes a client-only agent, which is no gossip member: its name, the
// address it advertises for RPC and its node, in the member's shape.
func (s *HTTPServer) clientMember() *api.AgentMember {
	cfg := s.agent.config
	host, portStr, _ := net.SplitHostPort(cfg.Advertise.RPC)
	port, _ := strconv.ParseUint(portStr, 10, 16)
	tags := map[string]string{"role": "client", "region": cfg.Region, "dc": cfg.Datacenter}
	if c := s.agent.Client(); c != nil {
		tags["id"] = c.NodeID()
	}
	return &api.AgentMember{Name: cfg.Name, Addr: host, Port: uint16(port), Tags: tags, Status: "alive"}
}
