package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/yamux"
	"github.com/nomadfork/nomad/structs"
)

// ConnClientAgent is the first byte of a client agent's connection to a server's RPC port
// (nomad/rpc_client_conn.go accepts it).
const ConnClientAgent byte = 0x20

const (
	// DefaultRPCPort is the port of a server address that names none.
	DefaultRPCPort = 4647
	// rpcDialTimeout bounds connecting to one server.
	rpcDialTimeout = 5 * time.Second
	// rpcCallTimeout bounds a call that does not block; writes wait for a Raft commit.
	rpcCallTimeout = 45 * time.Second
	// maxServedStreams bounds the exec and log streams the servers have open to this client.
	maxServedStreams = 32
)

// rpcRequest and rpcResponse are the frames of one call, as the servers read them.
type rpcRequest struct {
	Method string
	Body   []byte
}

type rpcResponse struct {
	Code  int
	Error string
	Body  []byte
	// Kind names the sentinel Error refines, so errors.Is works on the client as on the
	// server (nomad/rpc_server.go has the same answer).
	Kind string
}

// RPCServers reaches the servers over the RPC port: one yamux session to one server at a time,
// a stream per call. When the session fails it moves to the next server of the list, so a
// client survives the loss of its server. Servers open streams back over the session (exec,
// logs), which Streams hands out.
type RPCServers struct {
	addrs  []string
	logger hclog.Logger
	yamux  *yamux.Config
	dialer Dialer

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu   sync.Mutex
	sess *yamux.Session
	// next is the index in addrs of the next server to try.
	next int
	// nodeID and secret are the node's, learnt from its registration; each new session names
	// the node with them so that the server can route streams to it.
	nodeID, secret string

	streams *streamListener
	// apiSlots bounds the HTTP API's calls in flight (maxAPICalls).
	apiSlots chan struct{}
	// eventSlots bounds the event streams it relays (maxEventStreams).
	eventSlots chan struct{}
	// forwardSlots bounds the requests it relays to other nodes (maxForwards).
	forwardSlots chan struct{}
}

// Dialer opens a client agent's connection to the server at addr, its first bytes written:
// the agent's TLS dialer when its tls block has rpc = true.
type Dialer func(ctx context.Context, addr string) (net.Conn, error)

// NewRPCServers reaches the servers at addrs (host or host:port). yamuxCfg is the session
// configuration both ends use. A nil dial connects in plain TCP, which a server with TLS on
// its RPC port refuses.
func NewRPCServers(addrs []string, yamuxCfg *yamux.Config, dial Dialer, logger hclog.Logger) (*RPCServers, error) {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	out, err := normalizeServerAddrs(addrs)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &RPCServers{
		addrs: out, logger: logger.Named("rpc"), yamux: yamuxCfg, dialer: dial, ctx: ctx, cancel: cancel,
		streams: newStreamListener(ctx), apiSlots: make(chan struct{}, maxAPICalls),
		eventSlots: make(chan struct{}, maxEventStreams), forwardSlots: make(chan struct{}, maxForwards),
	}, nil
}

// Streams are the streams servers open to this client, one HTTP connection each.
func (r *RPCServers) Streams() net.Listener { return r.streams }

// Current is the address of the server the session is open to, "" when there is none.
func (r *RPCServers) Current() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sess == nil || r.sess.IsClosed() {
		return ""
	}
	return r.sess.RemoteAddr().String()
}

// Close ends the session and waits for its goroutines.
func (r *RPCServers) Close() {
	r.cancel()
	r.mu.Lock()
	if r.sess != nil {
		_ = r.sess.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
}

// session returns the open session, or opens one to the first server of the list, from the
// one after the last used, that answers.
func (r *RPCServers) session() (*yamux.Session, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ctx.Err() != nil {
		return nil, errors.New("client: shutting down")
	}
	if r.sess != nil && !r.sess.IsClosed() {
		return r.sess, nil
	}
	var errs []error
	for range r.addrs {
		addr := r.addrs[r.next%len(r.addrs)]
		r.next++
		sess, err := r.dial(addr)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		r.sess = sess
		r.logger.Info("connected to server", "server", addr)
		r.wg.Add(2)
		go r.acceptStreams(sess)
		go r.announce(sess)
		return sess, nil
	}
	return nil, fmt.Errorf("client: no server reachable: %w", errors.Join(errs...))
}

func (r *RPCServers) dial(addr string) (*yamux.Session, error) {
	dial := r.dialer
	if dial == nil {
		dial = dialPlain
	}
	ctx, cancel := context.WithTimeout(r.ctx, rpcDialTimeout)
	conn, err := dial(ctx, addr)
	cancel()
	if err != nil {
		return nil, err
	}
	sess, err := yamux.Client(conn, r.yamux)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return sess, nil
}

// dialPlain opens a client agent's connection without TLS.
func dialPlain(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetWriteDeadline(deadline)
	}
	if _, err := conn.Write([]byte{ConnClientAgent}); err != nil {
		conn.Close()
		return nil, err
	}
	_ = conn.SetWriteDeadline(time.Time{})
	return conn, nil
}

// drop forgets sess after a failure, so that the next call connects again (to the next server).
func (r *RPCServers) drop(sess *yamux.Session) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_ = sess.Close()
	if r.sess == sess {
		r.sess = nil
	}
}

// acceptStreams hands the streams the server opens to Streams, within maxServedStreams.
func (r *RPCServers) acceptStreams(sess *yamux.Session) {
	defer r.wg.Done()
	for {
		stream, err := sess.AcceptStream()
		if err != nil {
			return
		}
		r.streams.offer(stream)
	}
}

// announce names the node on a new session once the node is registered. A server that has
// not yet seen the registration (it replicates from the leader) answers 404: try again.
func (r *RPCServers) announce(sess *yamux.Session) {
	defer r.wg.Done()
	for {
		r.mu.Lock()
		nodeID, secret := r.nodeID, r.secret
		r.mu.Unlock()
		if nodeID != "" {
			var reply structs.GenericResponse
			err := r.callOn(sess, "Node.Session", &structs.NodeSpecificRequest{
				NodeID: nodeID, QueryOptions: structs.QueryOptions{AuthToken: secret},
			}, &reply, rpcCallTimeout)
			if err == nil {
				return
			}
			if structs.ErrorCode(err) != http.StatusNotFound && structs.ErrorCode(err) != http.StatusServiceUnavailable {
				r.logger.Warn("naming the node to the server failed", "error", err)
			}
		}
		t := time.NewTimer(200 * time.Millisecond)
		select {
		case <-r.ctx.Done():
			t.Stop()
			return
		case <-sess.CloseChan():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// call makes one call on the current session; a failure of the session itself drops it.
func (r *RPCServers) call(method string, args, reply any, timeout time.Duration) error {
	sess, err := r.session()
	if err != nil {
		return err
	}
	err = r.callOn(sess, method, args, reply, timeout)
	var coded *structs.CodedError
	if err != nil && !errors.As(err, &coded) {
		r.logger.Warn("server connection failed; moving to the next server", "server", sess.RemoteAddr().String(), "error", err)
		r.drop(sess)
	}
	return err
}

func (r *RPCServers) callOn(sess *yamux.Session, method string, args, reply any, timeout time.Duration) error {
	stream, err := sess.OpenStream()
	if err != nil {
		return err
	}
	defer stream.Close()
	_ = stream.SetDeadline(time.Now().Add(timeout))
	buf, err := structs.Encode(0, args)
	if err != nil {
		return err
	}
	if err := codec.NewEncoder(stream, structs.MsgpackHandle).Encode(&rpcRequest{Method: method, Body: buf[1:]}); err != nil {
		return fmt.Errorf("sending %s: %w", method, err)
	}
	var resp rpcResponse
	if err := codec.NewDecoder(bufio.NewReader(stream), structs.MsgpackHandle).Decode(&resp); err != nil {
		return fmt.Errorf("reading the answer to %s: %w", method, err)
	}
	if resp.Error != "" {
		return structs.WireError(resp.Code, resp.Kind, resp.Error)
	}
	return structs.Decode(resp.Body, reply)
}

func (r *RPCServers) RegisterNode(args *structs.NodeRegisterRequest, reply *structs.NodeUpdateResponse) error {
	if err := r.call("Node.Register", args, reply, rpcCallTimeout); err != nil {
		return err
	}
	if args.Node != nil {
		r.mu.Lock()
		r.nodeID, r.secret = args.Node.ID, args.Node.SecretID
		sess := r.sess
		r.mu.Unlock()
		// Named at once, so that exec and logs reach the node as soon as it runs anything;
		// announce keeps trying when this server has not seen the registration yet.
		if sess != nil {
			var reply structs.GenericResponse
			_ = r.callOn(sess, "Node.Session", &structs.NodeSpecificRequest{
				NodeID: args.Node.ID, QueryOptions: structs.QueryOptions{AuthToken: args.Node.SecretID},
			}, &reply, rpcCallTimeout)
		}
	}
	return nil
}

func (r *RPCServers) UpdateNodeStatus(args *structs.NodeUpdateStatusRequest, reply *structs.NodeUpdateResponse) error {
	return r.call("Node.UpdateStatus", args, reply, rpcCallTimeout)
}

func (r *RPCServers) NodeAllocations(args *structs.NodeSpecificRequest, reply *structs.NodeAllocsResponse) error {
	return r.call("Node.GetAllocs", args, reply, rpcCallTimeout+args.MaxQueryTime+args.MaxQueryTime/16)
}

func (r *RPCServers) UpdateAllocations(args *structs.AllocUpdateRequest, reply *structs.GenericResponse) error {
	return r.call("Alloc.UpdateFromClient", args, reply, rpcCallTimeout)
}

func (r *RPCServers) UpsertServiceRegistrations(args *structs.ServiceRegistrationUpsertRequest, reply *structs.GenericResponse) error {
	return r.call("ServiceRegistration.Upsert", args, reply, rpcCallTimeout)
}

func (r *RPCServers) DeleteServiceRegistration(args *structs.ServiceRegistrationDeleteByIDRequest, reply *structs.GenericResponse) error {
	return r.call("ServiceRegistration.DeleteByID", args, reply, rpcCallTimeout)
}

func (r *RPCServers) SignIdentities(args *structs.AllocIdentitiesRequest, reply *structs.AllocIdentitiesResponse) error {
	return r.call("Alloc.SignIdentities", args, reply, rpcCallTimeout)
}

func (r *RPCServers) SignNodeIdentity(args *structs.NodeIdentitySignRequest, reply *structs.NodeIdentitySignResponse) error {
	return r.call("Node.SignIdentity", args, reply, rpcCallTimeout)
}

var _ Servers = (*RPCServers)(nil)

// streamListener is a net.Listener of the streams servers open, across sessions.
type streamListener struct {
	ctx       context.Context
	conns     chan net.Conn
	slots     chan struct{}
	closed    chan struct{}
	closeOnce sync.Once
}

func newStreamListener(ctx context.Context) *streamListener {
	return &streamListener{ctx: ctx, conns: make(chan net.Conn), slots: make(chan struct{}, maxServedStreams), closed: make(chan struct{})}
}

// offer passes a stream on, or closes it when maxServedStreams are being served.
func (l *streamListener) offer(stream net.Conn) {
	select {
	case l.slots <- struct{}{}:
	default:
		_ = stream.Close()
		return
	}
	conn := &slotConn{Conn: stream, release: func() { <-l.slots }}
	select {
	case l.conns <- conn:
	case <-l.ctx.Done():
		_ = conn.Close()
	case <-l.closed:
		_ = conn.Close()
	}
}

func (l *streamListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.ctx.Done():
		return nil, net.ErrClosed
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *streamListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return nil
}
func (l *streamListener) Addr() net.Addr { return streamAddr{} }

type streamAddr struct{}

func (streamAddr) Network() string { return "yamux" }
func (streamAddr) String() string  { return "server-streams" }

// slotConn gives its slot back once, when closed.
type slotConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

func (r *RPCServers) MigrateAllocData(args *structs.AllocMigrateDataRequest, reply *structs.AllocMigrateDataResponse) error {
	return r.call("Alloc.MigrateData", args, reply, rpcCallTimeout)
}
