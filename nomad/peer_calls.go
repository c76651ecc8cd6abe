package nomad

import (
	"fmt"

	"github.com/nomadfork/nomad/structs"
)

// Calls only servers make to one another (the hello that checks a gossiped member, the
// leader's health poll, a server asking to leave) are declared here, beside the endpoint
// table. No token is involved: the RPC port serves only peers that proved they are servers
// (the cluster's TLS role or its gossip key), which a row's rule cannot see. Hello and
// RaftStats are answered by the server dialled, never forwarded.
var peerTable = map[string]endpointCall{}

// endpointCall is a declared call as the RPC dispatcher sees it, whatever its types.
type endpointCall interface {
	newArgs() any
	newReply() any
	callAny(s *Server, args, reply any) error
}

type peerRoute[Req, Resp any] struct {
	serve func(s *Server, req *Req, resp *Resp) error
}

func (p *peerRoute[Req, Resp]) newArgs() any  { return new(Req) }
func (p *peerRoute[Req, Resp]) newReply() any { return new(Resp) }
func (p *peerRoute[Req, Resp]) callAny(s *Server, args, reply any) error {
	return p.serve(s, args.(*Req), reply.(*Resp))
}

// peer declares a server-to-server call.
func peer[Req, Resp any](name string, serve func(s *Server, req *Req, resp *Resp) error) *peerRoute[Req, Resp] {
	if _, dup := routeTable[name]; dup {
		panic(fmt.Sprintf("RPC %s declared as a row and as a peer call", name))
	}
	if _, dup := peerTable[name]; dup {
		panic(fmt.Sprintf("RPC %s declared twice", name))
	}
	p := &peerRoute[Req, Resp]{serve: serve}
	peerTable[name] = p
	return p
}

var (
	_ = peer("Cluster.Hello", func(s *Server, req *HelloRequest, resp *HelloResponse) error {
		return (&Cluster{srv: s}).Hello(req, resp)
	})
	_ = peer("Cluster.RaftStats", func(s *Server, req *HelloRequest, resp *structs.RaftStats) error {
		return (&Cluster{srv: s}).RaftStats(req, resp)
	})
	_ = peer("Cluster.Leave", func(s *Server, req *LeaveRequest, resp *structs.GenericResponse) error {
		return (&Cluster{srv: s}).Leave(req, resp)
	})
)
