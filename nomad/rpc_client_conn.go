package nomad

import (
	"bufio"
	"crypto/subtle"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/yamux"
	"github.com/nomadfork/nomad/structs"
)

// A client agent's connection (transport.KindClientAgent) carries no cluster key: it is a yamux
// session on which the client opens one stream per call to the client RPCs of clientMethods
// (each authenticated by the node's secret) or, for its HTTP API, to a token row (apiRow) or the
// event stream, and the server opens streams towards the client for exec and logs.

const (
	// maxClientCalls bounds the calls one client connection has in flight: its blocking read
	// of allocations, a heartbeat, an allocation update and a registration, and the agent's
	// HTTP API (8 calls, 4 event streams, 12 relayed requests) fit within it.
	maxClientCalls = 32
	// maxClientRequestSize bounds one client call; an allocation update batch is the largest.
	maxClientRequestSize = 16 << 20
	// maxStreamsToClient bounds the exec and log streams open to one client at a time.
	maxStreamsToClient = 64
	// maxClientSessions bounds the client connections a server holds.
	maxClientSessions = 8192
	// clientRequestTimeout bounds reading one call's request and writing its answer.
	clientRequestTimeout = 30 * time.Second
)

// ClientYamuxConfig is the yamux configuration of both ends of a client connection: streams
// a peer opens beyond the backlog are reset, windows bound what one stream buffers.
func ClientYamuxConfig() *yamux.Config {
	c := yamux.DefaultConfig()
	c.AcceptBacklog = maxClientCalls
	c.EnableKeepAlive = true
	c.KeepAliveInterval = 10 * time.Second
	c.ConnectionWriteTimeout = 10 * time.Second
	c.MaxStreamWindowSize = 256 << 10
	c.LogOutput = io.Discard
	return c
}

// clientMethod answers one client call: it decodes the arguments, authenticates the node and
// calls the endpoint, which forwards to the leader when this server is not it.
type clientMethod func(cs *clientSession, body []byte) (any, error)

// clientMethods are the node's own calls on a client connection, each authenticated by the
// node's secret. Beyond them the connection reaches only the rows an ACL token authorises
// (apiRow), for the agent's HTTP API; server-to-server calls (peerTable) stay out of reach.
var clientMethods = map[string]clientMethod{
	"Node.Register": clientCall(func(cs *clientSession, args *structs.NodeRegisterRequest, reply *structs.NodeUpdateResponse) error {
		if err := cs.srv.authenticateRegister(args); err != nil {
			return err
		}
		// Whatever the client sent: only this server knows how the connection came in.
		args.PlainConn = cs.plain
		return cs.srv.Endpoints.Node.RegisterClient(args, reply)
	}),
	"Node.UpdateStatus":          nodeOwnCall(nodeUpdateStatus, func(a *structs.NodeUpdateStatusRequest) (string, string) { return a.NodeID, a.AuthToken }),
	"Node.GetAllocs":             nodeOwnCall(nodeGetAllocs, func(a *structs.NodeSpecificRequest) (string, string) { return a.NodeID, a.AuthToken }),
	"Alloc.UpdateFromClient":     nodeOwnCall(allocUpdateFromClient, func(a *structs.AllocUpdateRequest) (string, string) { return a.NodeID, a.AuthToken }),
	"ServiceRegistration.Upsert": nodeOwnCall(serviceRegistrationUpsert, func(a *structs.ServiceRegistrationUpsertRequest) (string, string) { return a.NodeID, a.AuthToken }),
	// A client removes only its own node's registrations: NodeID is required here.
	"ServiceRegistration.DeleteByID": nodeOwnCall(serviceRegistrationDeleteByID, func(a *structs.ServiceRegistrationDeleteByIDRequest) (string, string) { return a.NodeID, a.AuthToken }),
	// Alloc.SignIdentities checks the node's secret itself, and that every allocation asked
	// about is placed on the node.
	"Alloc.SignIdentities": rowCall(allocSignIdentities),
	// Alloc.MigrateData checks the node's secret itself, and that the node runs the
	// allocation that replaces the one asked about.
	"Alloc.MigrateData": rowCall(allocMigrateData),
	"Node.SignIdentity": rowCall(nodeSignIdentity),
	// Node.Session names the node this connection serves, so that exec and log requests for
	// its allocations reach it over the connection.
	"Node.Session": clientCall(func(cs *clientSession, args *structs.NodeSpecificRequest, reply *structs.GenericResponse) error {
		if err := cs.srv.authenticateNode(args.NodeID, args.AuthToken); err != nil {
			return err
		}
		cs.srv.clientSessions.put(args.NodeID, cs)
		return nil
	}),
}

// nodeOwnCall is a client call of row r that only the node the request names may make, with
// its own secret: checked on the connection before the row runs.
func nodeOwnCall[A, R any](r *route[A, R], node func(*A) (id, secret string)) clientMethod {
	return clientCall(func(cs *clientSession, args *A, reply *R) error {
		if err := cs.srv.authenticateNode(node(args)); err != nil {
			return err
		}
		return r.Call(cs.srv, args, reply)
	})
}

// rowCall is a client call of row r, whose own rule checks the node's secret.
func rowCall[A, R any](r *route[A, R]) clientMethod {
	return clientCall(func(cs *clientSession, args *A, reply *R) error { return r.Call(cs.srv, args, reply) })
}

func clientCall[A, R any](fn func(cs *clientSession, args *A, reply *R) error) clientMethod {
	return func(cs *clientSession, body []byte) (any, error) {
		args, reply := new(A), new(R)
		if err := structs.Decode(body, args); err != nil {
			return nil, structs.BadRequest("decoding arguments: %v", err)
		}
		if err := fn(cs, args, reply); err != nil {
			return nil, err
		}
		return reply, nil
	}
}

// errNodeSecret is the one answer to a missing or wrong node secret; it names neither.
func errNodeSecret() error {
	return structs.PermissionDenied("node secret does not match")
}

func secretsEqual(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// authenticateNode checks that secret is the stored secret of node nodeID. An unknown node is
// a 404, which tells the client to register again.
func (s *Server) authenticateNode(nodeID, secret string) error {
	if nodeID == "" || secret == "" {
		return errNodeSecret()
	}
	node, err := s.State().NodeByID(nil, nodeID)
	if err != nil {
		return err
	}
	if node == nil {
		return structs.NotFound(structs.ErrNodeNotFound)
	}
	if !secretsEqual(node.SecretID, secret) && !(looksLikeJWT(secret) && s.verifyNodeIdentity(s.State(), secret, nodeID, now())) {
		return errNodeSecret()
	}
	return nil
}

// authenticateRegister lets a client register only its own node: the call carries the
// record's secret, and a node ID already registered keeps its secret. The endpoint checks the
// stored secret again on the leader, whose state may be newer than this server's.
func (s *Server) authenticateRegister(args *structs.NodeRegisterRequest) error {
	if args.Node == nil {
		return structs.BadRequest("missing node for client registration")
	}
	if !secretsEqual(args.Node.SecretID, args.AuthToken) {
		return errNodeSecret()
	}
	existing, err := s.State().NodeByID(nil, args.Node.ID)
	if err != nil {
		return err
	}
	if existing != nil && !secretsEqual(existing.SecretID, args.AuthToken) {
		return errNodeSecret()
	}
	return nil
}

// clientSession is one client connection.
type clientSession struct {
	srv  *Server
	sess *yamux.Session
	// streams holds a slot per stream open towards the client.
	streams chan struct{}
	// plain: no TLS although the server has it on (rpc_upgrade_mode); a new node must then be
	// introduced whatever client_introduction.enforcement says.
	plain bool
}

// serveClientConn serves one client connection until it closes or the server stops.
func (s *Server) serveClientConn(conn net.Conn, plain bool) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Time{})
	if !s.clientSessions.admit() {
		return
	}
	defer s.clientSessions.leave()
	sess, err := yamux.Server(conn, ClientYamuxConfig())
	if err != nil {
		return
	}
	cs := &clientSession{srv: s, sess: sess, streams: make(chan struct{}, maxStreamsToClient), plain: plain}
	var calls sync.WaitGroup
	defer func() {
		s.clientSessions.remove(cs)
		_ = sess.Close()
		// Blocking reads end at their MaxQueryTime or at shutdown.
		calls.Wait()
	}()
	inFlight := make(chan struct{}, maxClientCalls)
	for {
		stream, err := sess.AcceptStream()
		if err != nil {
			return
		}
		select {
		case inFlight <- struct{}{}:
		default:
			_ = stream.Close()
			continue
		}
		calls.Add(1)
		go func() {
			defer calls.Done()
			defer func() { <-inFlight }()
			cs.serveCall(stream)
		}()
	}
}

func (cs *clientSession) serveCall(stream *yamux.Stream) {
	defer stream.Close()
	_ = stream.SetReadDeadline(time.Now().Add(clientRequestTimeout))
	var req rpcRequest
	limit := &io.LimitedReader{R: stream, N: maxClientRequestSize}
	r := bufio.NewReader(limit)
	if err := codec.NewDecoder(r, structs.MsgpackHandle).Decode(&req); err != nil {
		return
	}
	if req.Method == structs.EventStreamMethod && cs.srv.raftStarted.Load() {
		cs.serveEventStream(stream, r, req.Body)
		return
	}
	if req.Method == structs.ClientForwardMethod && cs.srv.raftStarted.Load() {
		cs.serveForward(stream, r, limit, req.Body)
		return
	}
	resp := cs.dispatch(&req)
	_ = stream.SetWriteDeadline(time.Now().Add(clientRequestTimeout))
	_ = codec.NewEncoder(stream, structs.MsgpackHandle).Encode(resp)
}

func (cs *clientSession) dispatch(req *rpcRequest) *rpcResponse {
	if !cs.srv.raftStarted.Load() {
		return &rpcResponse{Code: http.StatusServiceUnavailable, Error: "server is starting"}
	}
	var reply any
	var err error
	if m, ok := clientMethods[req.Method]; ok {
		reply, err = m(cs, req.Body)
	} else if row, ok := apiRow(req.Method); ok {
		// The agent's HTTP API, relayed with its caller's token: the row decides as it
		// does for a request sent here.
		args := row.newArgs()
		reply = row.newReply()
		if derr := structs.Decode(req.Body, args); derr != nil {
			return &rpcResponse{Code: http.StatusBadRequest, Error: fmt.Sprintf("decoding %s arguments: %v", req.Method, derr)}
		}
		err = row.callAny(cs.srv, args, reply)
	} else {
		return &rpcResponse{Code: http.StatusForbidden, Error: structs.PermissionDenied("%q is not a client RPC", req.Method).Error()}
	}
	if err != nil {
		return errorResponse(err)
	}
	body, err := encodeBody(reply)
	if err != nil {
		return &rpcResponse{Code: http.StatusInternalServerError, Error: err.Error()}
	}
	return &rpcResponse{Body: body}
}

// clientSessionTable maps node IDs to the connection that serves them on this server.
type clientSessionTable struct {
	mu     sync.Mutex
	byNode map[string]*clientSession
	count  int
}

func newClientSessionTable() *clientSessionTable {
	return &clientSessionTable{byNode: map[string]*clientSession{}}
}

func (t *clientSessionTable) admit() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.count >= maxClientSessions {
		return false
	}
	t.count++
	return true
}

func (t *clientSessionTable) leave() {
	t.mu.Lock()
	t.count--
	t.mu.Unlock()
}

func (t *clientSessionTable) put(nodeID string, cs *clientSession) {
	t.mu.Lock()
	t.byNode[nodeID] = cs
	t.mu.Unlock()
}

// remove forgets every node cs served; a node that has reconnected keeps its newer session.
func (t *clientSessionTable) remove(cs *clientSession) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id, other := range t.byNode {
		if other == cs {
			delete(t.byNode, id)
		}
	}
}

func (t *clientSessionTable) get(nodeID string) *clientSession {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byNode[nodeID]
}
