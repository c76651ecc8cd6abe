package nomad

import (
	"github.com/hashicorp/nomad/api"
	"github.com/hashicorp/serf/serf"
	"github.com/nomadfork/nomad/structs"
)

// Status answers leader and peer questions; these need no token, as upstream.
type Status struct {
	srv *Server
}

// The status rows serve /v1/status and /v1/regions whichever agent is asked; they need no
// token, as upstream's. A caller that allows a stale read gets the answer of the server it
// reached.
var (
	statusLeader = statusRead("Status.Leader", func(s *Server, reply *structs.StatusResponse) error {
		// A leader still applying its log refuses calls (structs.NotReady); reporting none
		// until it takes them lets a script that waits for a leader go on the moment it can.
		if !s.catchingUp() {
			reply.Leader = s.Leader()
		}
		return nil
	})
	statusPeers = statusRead("Status.Peers", func(s *Server, reply *structs.StatusResponse) error {
		var err error
		reply.Peers, err = s.Peers()
		return err
	})
	statusRegions = statusRead("Status.Regions", func(s *Server, reply *structs.StatusResponse) error {
		reply.Regions = s.Regions()
		return nil
	})
)

// statusRead declares a status row: anyone may call it, and fill answers from the server
// that serves it, with that server's read metadata, even when fill fails.
func statusRead(name string, fill func(s *Server, reply *structs.StatusResponse) error) *route[structs.StatusRequest, structs.StatusResponse] {
	return read(name, spec[structs.StatusRequest, structs.StatusResponse]{
		Caller:    callerAnyone,
		Prepare:   staleStatus,
		Authorize: anyone[structs.StatusRequest],
		Serve: func(c *rpcCall, _ *structs.StatusRequest, reply *structs.StatusResponse) error {
			err := fill(c.srv, reply)
			c.srv.setQueryMeta(&reply.QueryMeta)
			return err
		},
	})
}

// staleStatus sets the token aside: none is needed, and a stale one the caller still sends
// must not fail the call.
func staleStatus(req *structs.StatusRequest) error {
	req.AuthToken = ""
	return nil
}

// Leader runs the Status.Leader row: the leader's Raft address, "" when there is none.
func (s *Status) Leader(args *structs.StatusRequest, reply *structs.StatusResponse) error {
	return statusLeader.Call(s.srv, args, reply)
}

// Peers runs the Status.Peers row: the Raft peers' addresses.
func (s *Status) Peers(args *structs.StatusRequest, reply *structs.StatusResponse) error {
	return statusPeers.Call(s.srv, args, reply)
}

// Regions runs the Status.Regions row: the regions of the servers in the gossip pool.
func (s *Status) Regions(args *structs.StatusRequest, reply *structs.StatusResponse) error {
	return statusRegions.Call(s.srv, args, reply)
}

// Status.Members is the gossip pool of the server asked, for an agent that has none of its
// own (a client-only agent's /v1/agent/members); node read, as upstream's member list.
var statusMembers = read("Status.Members", spec[structs.StatusRequest, structs.StatusMembersResponse]{
	Authorize: nodeReadRule[structs.StatusRequest],
	Serve: func(c *rpcCall, _ *structs.StatusRequest, reply *structs.StatusMembersResponse) error {
		cfg := c.srv.config
		out := &api.ServerMembers{ServerName: cfg.NodeName, ServerRegion: cfg.Region, ServerDC: cfg.Datacenter}
		if sf := c.srv.Serf(); sf != nil {
			for _, m := range sf.Members() {
				out.Members = append(out.Members, SerfMember(m))
			}
		}
		reply.Members = out
		c.srv.setQueryMeta(&reply.QueryMeta)
		return nil
	},
})

// Members runs the Status.Members row.
func (s *Status) Members(args *structs.StatusRequest, reply *structs.StatusMembersResponse) error {
	return statusMembers.Call(s.srv, args, reply)
}

// SerfMember is a gossip member in the wire shape of /v1/agent/members.
func SerfMember(m serf.Member) *api.AgentMember {
	return &api.AgentMember{
		Name:        m.Name,
		Addr:        m.Addr.String(),
		Port:        m.Port,
		Tags:        m.Tags,
		Status:      m.Status.String(),
		ProtocolMin: m.ProtocolMin,
		ProtocolMax: m.ProtocolMax,
		ProtocolCur: m.ProtocolCur,
		DelegateMin: m.DelegateMin,
		DelegateMax: m.DelegateMax,
		DelegateCur: m.DelegateCur,
	}
}
