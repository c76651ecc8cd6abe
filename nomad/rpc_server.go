package nomad

import (
	"bufio"
	"errors"
	"fmt"
	"github.com/nomadfork/nomad/nomad/transport"
	"net"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/nomadfork/nomad/structs"
)

// rpcRequest and rpcResponse frame one server-to-server call. The status code of a coded
// error crosses the wire with it, so a 403 on the leader is a 403 on the follower's HTTP API.
type rpcRequest struct {
	Method string
	Body   []byte
}

type rpcResponse struct {
	Code  int
	Error string
	Body  []byte
	// Kind names the sentinel Error refines (structs.ErrorKind), so that the caller's
	// errors.Is works as on this side; empty from peers that predate it.
	Kind string
}

// errorResponse is the answer carrying err: its status, text and sentinel kind.
func errorResponse(err error) *rpcResponse {
	return &rpcResponse{Code: structs.ErrorCode(err), Error: err.Error(), Kind: structs.ErrorKind(err)}
}

// serveRPC answers calls on one connection until it closes.
func (s *Server) serveRPC(conn net.Conn) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	dec := codec.NewDecoder(r, structs.MsgpackHandle)
	enc := codec.NewEncoder(conn, structs.MsgpackHandle)
	for {
		var req rpcRequest
		if err := dec.Decode(&req); err != nil {
			return
		}
		switch req.Method {
		case relayMethod:
			s.serveRelay(conn, r, &req)
			return
		case agentStreamMethod:
			s.serveAgentStream(conn, r, &req)
			return
		}
		resp := s.dispatchRPC(&req)
		if err := enc.Encode(resp); err != nil {
			return
		}
	}
}

func (s *Server) dispatchRPC(req *rpcRequest) *rpcResponse {
	// The RPC port opens before Raft has started (Raft needs the listener); peers that
	// call in that window retry.
	if !s.raftStarted.Load() {
		return &rpcResponse{Code: 503, Error: "server is starting"}
	}
	var call endpointCall
	if row, ok := routeTable[req.Method]; ok {
		call = row
	} else if p, ok := peerTable[req.Method]; ok {
		call = p
	} else {
		return &rpcResponse{Code: 400, Error: fmt.Sprintf("unknown RPC method %q", req.Method)}
	}
	args, reply := call.newArgs(), call.newReply()
	if err := structs.Decode(req.Body, args); err != nil {
		return &rpcResponse{Code: 400, Error: fmt.Sprintf("decoding %s arguments: %v", req.Method, err)}
	}
	if err := call.callAny(s, args, reply); err != nil {
		return errorResponse(err)
	}
	body, err := encodeBody(reply)
	if err != nil {
		return &rpcResponse{Code: 500, Error: err.Error()}
	}
	return &rpcResponse{Body: body}
}

func encodeBody(v any) ([]byte, error) {
	buf, err := structs.Encode(0, v)
	if err != nil {
		return nil, err
	}
	return buf[1:], nil
}

// rpcTimeout bounds one forwarded call; writes wait for a Raft commit on the other side.
const rpcTimeout = 40 * time.Second

// rpcCall calls method on the server at addr.
func (s *Server) rpcCall(addr, method string, args, reply any) error {
	return s.rpcCallTimeout(addr, method, args, reply, rpcTimeout)
}

// rpcCallTimeout is rpcCall with a deadline for the whole exchange.
func (s *Server) rpcCallTimeout(addr, method string, args, reply any, timeout time.Duration) error {
	conn, err := s.dialer().Dial(addr, transport.KindRPC, 5*time.Second)
	if err != nil {
		return fmt.Errorf("contacting server %s: %w", addr, err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(timeout))
	body, err := encodeBody(args)
	if err != nil {
		return err
	}
	if err := codec.NewEncoder(conn, structs.MsgpackHandle).Encode(&rpcRequest{Method: method, Body: body}); err != nil {
		return fmt.Errorf("sending %s to %s: %w", method, addr, err)
	}
	var resp rpcResponse
	if err := codec.NewDecoder(bufio.NewReader(conn), structs.MsgpackHandle).Decode(&resp); err != nil {
		return fmt.Errorf("reading %s answer from %s: %w", method, addr, err)
	}
	if resp.Error != "" {
		return structs.WireError(resp.Code, resp.Kind, resp.Error)
	}
	return structs.Decode(resp.Body, reply)
}

// forwardWait bounds how long a write waits for a leader to appear before failing.
const forwardWait = 5 * time.Second

// forward sends a write to the leader when this server is not it. It reports whether it
// handled the call; the endpoint runs locally when it did not.
func (s *Server) forward(method string, args, reply any) (bool, error) {
	countRPC(false)
	return s.forwardTimeout(method, args, reply, rpcTimeout)
}

// forwardRead sends a read to the leader unless the caller allows a stale answer, so that a
// read after a write sees it whichever server answers (upstream's default consistency). A
// blocking read may wait up to its MaxQueryTime on the leader.
func (s *Server) forwardRead(method string, opts *structs.QueryOptions, args, reply any) (bool, error) {
	countRPC(true)
	if opts.AllowStale {
		return false, nil
	}
	wait := opts.MaxQueryTime
	if opts.MinQueryIndex > 0 && wait <= 0 {
		wait = 5 * time.Minute
	}
	// Served here only as a leader that has heard from a majority. A leader cut off from the
	// others (paused, partitioned) still believes it leads until its lease runs out, while a
	// new leader may already have acknowledged writes: answering from its state could miss a
	// write acknowledged before the read began. A server that is not (or no longer) the
	// leader looks for the one there is, as a forward does, for as long as a forward would.
	deadline := time.Now().Add(forwardWait)
	for {
		handled, err := s.forwardTimeout(method, args, reply, rpcTimeout+wait+wait/16)
		if handled || err != nil || s.raft == nil {
			return handled, err
		}
		if s.catchingUp() {
			return true, structs.NotReady()
		}
		if s.servesDefaultRead() {
			return false, nil
		}
		if time.Now().After(deadline) {
			return true, s.noLeaderError()
		}
		select {
		case <-s.shutdownCtx.Done():
			return true, s.noLeaderError()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// servesDefaultRead reports whether this server may answer a default read from its own store:
// it leads a term that has applied the whole log, and a majority still followed it after the
// read arrived. Readiness is asked again after the majority answered: a term that ended
// meanwhile (leadership lost, perhaps regained) no longer vouches for the store.
func (s *Server) servesDefaultRead() bool {
	return s.IsLeader() && s.leaderReady.Ready() && s.raft.VerifyLeader().Error() == nil && s.leaderReady.Ready()
}

func (s *Server) forwardTimeout(method string, args, reply any, timeout time.Duration) (bool, error) {
	if s.rpcListener == nil || s.IsLeader() {
		return false, nil
	}
	deadline := time.Now().Add(forwardWait)
	for {
		leader := s.Leader()
		if leader != "" && leader != s.RaftAddr() {
			err := s.rpcCallTimeout(leader, method, args, reply, timeout)
			// The leader changed between the lookup and the call: try the new one.
			if errors.Is(err, structs.ErrNotLeader) && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			return true, err
		}
		if s.IsLeader() {
			return false, nil
		}
		if time.Now().After(deadline) {
			// A server whose own disk is full (a server of one restarted on it cannot store
			// its election entry) says so, not a bare "No cluster leader".
			return true, s.noLeaderError()
		}
		time.Sleep(50 * time.Millisecond)
	}
}
