package nomad

import (
	"bufio"
	"net"
	"net/http"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/raft"
	"github.com/nomadfork/nomad/nomad/transport"
	"github.com/nomadfork/nomad/structs"
)

// A server agent's own debug data (host data, profiles, log lines) is asked of it through any
// server: the HTTP API of the agent a request reaches names the server with server_id and
// opens an agent stream to it (agentStreamMethod), over which it sends the caller's request,
// token included. The stream ends at the target agent's debug routes, which check the token
// and the agent's own enable_debug exactly as its HTTP API does and serve only their own
// data: a stream is never sent on to a third agent. The servers only carry bytes, so a
// forwarded request can do no more than the same request sent to the target itself.

// agentStreamMethod turns a server RPC connection into a stream to the agent of the server
// dialled: the answer says whether that server is the one asked for and its agent serves
// streams, then the connection carries the HTTP exchange.
const agentStreamMethod = "Agent.Stream"

// agentStreamRequest names the server the caller means, by its node ID: a name that moved to
// another address between lookup and dial is refused rather than served by the wrong server.
type agentStreamRequest struct {
	ServerID string
}

// ServerTarget is one server a debug request names, as LookupServer resolved it.
type ServerTarget struct {
	// Name is the server's gossip name (name.region), or its ID when gossip does not list it.
	Name string
	// ID is the server's node ID, which its agent answers as AgentID.
	ID string
	// Addr is its RPC address.
	Addr string
	// Self is this server.
	Self bool
}

// unknownServer answers as upstream does ("unknown Nomad server NAME"), with upstream's
// status for it, 500, which clients already match.
func unknownServer(id string) error {
	return &structs.CodedError{Code: http.StatusInternalServerError, Msg: structs.ErrUnknownServer.Error() + " " + id, Err: structs.ErrUnknownServer}
}

// ServeAgentStreams makes agent streams other servers open to this server come from dial:
// the agent's in-process listener for its debug routes. Without it, every agent stream is
// refused.
func (s *Server) ServeAgentStreams(dial func() (net.Conn, error)) {
	s.agentDial.Store(&dial)
}

// LookupServer resolves a server_id: a gossip member name as `nomad server members` lists it
// (server-1.global), the name without its region, a server's node ID, or "leader". Only this
// region's servers are known; any other id is refused naming it.
func (s *Server) LookupServer(id string) (ServerTarget, error) {
	self := ServerTarget{Name: s.config.NodeName + "." + s.config.Region, ID: s.config.NodeID, Addr: s.RaftAddr(), Self: true}
	if id == "leader" {
		addr, leaderID := s.raft.LeaderWithID()
		switch {
		case addr == "":
			return ServerTarget{}, s.noLeaderError()
		case leaderID == raft.ServerID(s.config.NodeID):
			return self, nil
		}
		for _, m := range s.regionServers() {
			if m.ID == string(leaderID) {
				return ServerTarget{Name: m.Name, ID: m.ID, Addr: string(addr)}, nil
			}
		}
		// Not yet in this server's gossip view: named by its ID.
		return ServerTarget{Name: string(leaderID), ID: string(leaderID), Addr: string(addr)}, nil
	}
	if id == "" {
		return ServerTarget{}, unknownServer(id)
	}
	if id == self.Name || id == self.ID || id == s.config.NodeName {
		return self, nil
	}
	for _, m := range s.regionServers() {
		if id == m.Name || id == m.ID || id+"."+m.Region == m.Name {
			return ServerTarget{Name: m.Name, ID: m.ID, Addr: m.RPCAddr, Self: m.ID == s.config.NodeID}, nil
		}
	}
	return ServerTarget{}, unknownServer(id)
}

// DialServerAgent opens a stream to the debug routes of the agent of server t: in process for
// this server, else over the servers' RPC port (authenticated as any server-to-server call).
func (s *Server) DialServerAgent(t ServerTarget) (net.Conn, error) {
	if t.Self || t.ID == s.config.NodeID {
		return s.dialOwnAgent()
	}
	conn, err := s.dialer().Dial(t.Addr, transport.KindRPC, 5*time.Second)
	if err != nil {
		return nil, structs.NewErrCode(http.StatusBadGateway, "contacting server %s: %v", t.Addr, err)
	}
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	body, err := encodeBody(&agentStreamRequest{ServerID: t.ID})
	if err == nil {
		err = codec.NewEncoder(conn, structs.MsgpackHandle).Encode(&rpcRequest{Method: agentStreamMethod, Body: body})
	}
	if err != nil {
		conn.Close()
		return nil, structs.NewErrCode(http.StatusBadGateway, "contacting server %s: %v", t.Addr, err)
	}
	// The answer is read byte by byte: whatever follows it is the stream's.
	var resp rpcResponse
	if err := codec.NewDecoder(byteReader{conn}, structs.MsgpackHandle).Decode(&resp); err != nil {
		conn.Close()
		return nil, structs.NewErrCode(http.StatusBadGateway, "contacting server %s: %v", t.Addr, err)
	}
	if resp.Error != "" {
		conn.Close()
		return nil, structs.WireError(resp.Code, resp.Kind, resp.Error)
	}
	_ = conn.SetDeadline(time.Time{})
	return conn, nil
}

func (s *Server) dialOwnAgent() (net.Conn, error) {
	dial := s.agentDial.Load()
	if dial == nil {
		return nil, structs.NewErrCode(http.StatusNotImplemented, "this server's agent serves no debug streams")
	}
	return (*dial)()
}

// serveAgentStream answers an agent stream request on a server RPC connection, then splices
// the connection with a stream to this server's agent until either side ends (a caller that
// goes away ends a monitor on the agent, whose request context the stream carries).
func (s *Server) serveAgentStream(conn net.Conn, r *bufio.Reader, req *rpcRequest) {
	enc := codec.NewEncoder(conn, structs.MsgpackHandle)
	var args agentStreamRequest
	if err := structs.Decode(req.Body, &args); err != nil {
		_ = enc.Encode(&rpcResponse{Code: http.StatusBadRequest, Error: "decoding " + agentStreamMethod + " arguments: " + err.Error()})
		return
	}
	if args.ServerID != s.config.NodeID {
		// The name the caller resolved now belongs to another server (a restart on the
		// same address): its data would be answered under the wrong name.
		_ = enc.Encode(errorResponse(unknownServer(args.ServerID)))
		return
	}
	stream, err := s.dialOwnAgent()
	answerAndSplice(conn, r, enc, stream, err)
}
