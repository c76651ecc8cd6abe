package nomad

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/nomadfork/nomad/nomad/transport"
	"github.com/nomadfork/nomad/structs/slotconn"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/nomadfork/nomad/structs"
)

// relayMethod turns a server RPC connection into a stream to a client whose connection
// another server holds: the answer says whether this server has it, then the connection
// carries the stream's bytes both ways.
const relayMethod = "ClientSession.Relay"

// relayRequest names the node whose client the stream is for.
type relayRequest struct {
	NodeID string
}

// errNoNodePath is the answer when no server holds a connection to the node.
func errNoNodePath(nodeID string) error {
	return structs.NewErrCode(http.StatusServiceUnavailable,
		"no server holds a connection to node %s: its client is not connected", nodeID)
}

// localNodeDialer serves streams for the client that runs in this server's own agent.
type localNodeDialer struct {
	mu    sync.Mutex
	dials map[string]func() (net.Conn, error)
}

// ServeLocalNode makes streams for node nodeID, whose client runs in this process, come from
// dial, so that requests reach it like a remote client's.
func (s *Server) ServeLocalNode(nodeID string, dial func() (net.Conn, error)) {
	s.localDialer.mu.Lock()
	defer s.localDialer.mu.Unlock()
	s.localDialer.dials[nodeID] = dial
}

// DialNode opens a stream to the client of node nodeID: in this process, over the node's
// connection to this server, or through the server that holds that connection.
func (s *Server) DialNode(nodeID string) (net.Conn, error) {
	if conn, ok, err := s.dialNodeHere(nodeID); ok {
		return conn, err
	}
	if (s.clusterKey == nil && s.rpcTLS == nil) || s.rpcListener == nil {
		return nil, errNoNodePath(nodeID)
	}
	peers, err := s.Peers()
	if err != nil {
		return nil, err
	}
	for _, peer := range peers {
		if peer == s.RaftAddr() {
			continue
		}
		conn, err := s.dialRelay(peer, nodeID)
		if err == nil {
			return conn, nil
		}
		s.logger.Debug("relay to node failed", "server", peer, "node_id", nodeID, "error", err)
	}
	return nil, errNoNodePath(nodeID)
}

// dialNodeHere opens the stream without another server; ok is false when this server has no
// way to the node.
func (s *Server) dialNodeHere(nodeID string) (net.Conn, bool, error) {
	s.localDialer.mu.Lock()
	dial := s.localDialer.dials[nodeID]
	s.localDialer.mu.Unlock()
	if dial != nil {
		conn, err := dial()
		return conn, true, err
	}
	cs := s.clientSessions.get(nodeID)
	if cs == nil {
		return nil, false, nil
	}
	conn, err := cs.open()
	return conn, true, err
}

// open opens a stream towards the client, within the session's bound.
func (cs *clientSession) open() (net.Conn, error) {
	select {
	case cs.streams <- struct{}{}:
	default:
		return nil, structs.NewErrCode(http.StatusTooManyRequests,
			"too many streams open to this node (the limit is %d)", maxStreamsToClient)
	}
	stream, err := cs.sess.OpenStream()
	if err != nil {
		<-cs.streams
		return nil, fmt.Errorf("opening a stream to the client: %w", err)
	}
	return slotconn.New(stream, func() { <-cs.streams }), nil
}

func (s *Server) dialRelay(peer, nodeID string) (net.Conn, error) {
	// As any server-to-server stream: TLS when the RPC port has it, else the cluster key.
	conn, err := s.dialer().Dial(peer, transport.KindRPC, 5*time.Second)
	if err != nil {
		return nil, err
	}
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	body, err := encodeBody(&relayRequest{NodeID: nodeID})
	if err == nil {
		err = codec.NewEncoder(conn, structs.MsgpackHandle).Encode(&rpcRequest{Method: relayMethod, Body: body})
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	// The answer is read byte by byte: whatever follows it is the stream's.
	var resp rpcResponse
	if err := codec.NewDecoder(byteReader{conn}, structs.MsgpackHandle).Decode(&resp); err != nil {
		conn.Close()
		return nil, err
	}
	if resp.Error != "" {
		conn.Close()
		return nil, &structs.CodedError{Code: resp.Code, Msg: resp.Error}
	}
	_ = conn.SetDeadline(time.Time{})
	return conn, nil
}

// byteReader reads one byte at a time, so a decoder reads nothing past its value.
type byteReader struct{ r io.Reader }

func (b byteReader) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:1]
	}
	return b.r.Read(p)
}

// serveRelay answers a relay request on a server RPC connection and then splices it with a
// stream to the client. Only this server's own ways to the node are tried: a relay is never
// relayed again.
func (s *Server) serveRelay(conn net.Conn, r *bufio.Reader, req *rpcRequest) {
	enc := codec.NewEncoder(conn, structs.MsgpackHandle)
	var args relayRequest
	if err := structs.Decode(req.Body, &args); err != nil {
		_ = enc.Encode(&rpcResponse{Code: http.StatusBadRequest, Error: err.Error()})
		return
	}
	stream, ok, err := s.dialNodeHere(args.NodeID)
	if !ok {
		err = errNoNodePath(args.NodeID)
	}
	answerAndSplice(conn, r, enc, stream, err)
}

// answerAndSplice answers a stream request on conn: err if the far end could not be reached,
// else success, after which conn (read through r) and stream are spliced until either ends.
func answerAndSplice(conn net.Conn, r io.Reader, enc *codec.Encoder, stream net.Conn, err error) {
	if err != nil {
		_ = enc.Encode(errorResponse(err))
		return
	}
	defer stream.Close()
	if err := enc.Encode(&rpcResponse{}); err != nil {
		return
	}
	_ = conn.SetDeadline(time.Time{})
	splice(conn, r, stream)
}

// splice copies both ways until either side ends, then closes both.
func splice(a net.Conn, aReader io.Reader, b net.Conn) {
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(b, aReader)
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(a, b)
		done <- struct{}{}
	}()
	<-done
	a.Close()
	b.Close()
	<-done
}
