// Package transport is the servers' RPC port: one TCP listener shared by Raft, server RPC and
// client agents' sessions, the handshakes that prove what a peer is (the cluster key or a
// certificate from the CA), the per-address connection limits, and the dialers servers and
// client agents use to reach it. It knows nothing of what is served on an authenticated
// stream: the server hands it the functions that serve each kind.
package transport

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/nomadfork/nomad/internal/connlimit"
	"github.com/nomadfork/nomad/nomad/serverauth"
)

// After the handshake, the stream kind says what speaks on an authenticated connection, so
// Raft and the server RPC share one port, as upstream's do. A connection that opens with one
// of these bytes without the handshake is closed unread.
const (
	KindRaft byte = 0x01
	KindRPC  byte = 0x02
	// KindClientAgent opens a client agent's connection: no cluster key, a yamux session
	// (served by the server's client-session code).
	KindClientAgent byte = 0x20
)

// HandshakeTimeout bounds the handshakes this server runs as the dialing side, towards peers
// it chose. What an inbound peer is allowed is limits.rpc_handshake_timeout (Limits).
const HandshakeTimeout = 10 * time.Second

// Limits bound what one source address may hold on the RPC port. A global cap on
// connections being authenticated used to stand here: 64 silent connections from one
// stranger filled it and closed the port to every server and client, Raft included. Counting
// per address (and bounding the handshake) keeps a stranger to its own share.
type Limits struct {
	// MaxConnsPerClient caps the connections one IP address holds (0: unlimited). A
	// connection that authenticates as a server stops counting: servers open one connection
	// per forwarded call, and a follower forwarding many blocking queries must not be cut off.
	MaxConnsPerClient int
	// HandshakeTimeout bounds reading the first byte and completing the TLS or cluster-key
	// handshake (0: no bound).
	HandshakeTimeout time.Duration
}

// Listener accepts on the RPC port. Only peers that prove the cluster key or present a
// certificate from the CA (tls.rpc) get through; with neither (a lone server with nothing to
// join) every connection is closed at once.
type Listener struct {
	ln        net.Listener
	key       *serverauth.Key
	tls       *TLS
	logger    hclog.Logger
	raftConns chan net.Conn
	serveRPC  func(net.Conn)
	// serveClient serves client agents' connections.
	// plain is true for a connection without TLS on a server that has TLS on (rpc_upgrade_mode).
	serveClient func(conn net.Conn, plain bool)
	perClient   *connlimit.Limiter
	limits      Limits
	lastWarn    atomic.Int64
	// refused counts connections closed because they did not authenticate.
	refused   atomic.Uint64
	closeOnce sync.Once
	closed    chan struct{}
	// wg counts the accept loop and every connection being authenticated or served; conns
	// are those connections, closed by Close so their goroutines end.
	wg      sync.WaitGroup
	connsMu sync.Mutex
	conns   map[net.Conn]struct{}
}

// Listen opens the RPC port on addr. serveRPC gets each authenticated server RPC stream,
// serveClient each client agent connection (plain: a connection without TLS on a port that has
// it, accepted in rpc_upgrade_mode); both own the connection they are given.
func Listen(addr string, key *serverauth.Key, tlsConf *TLS, limits Limits, logger hclog.Logger, serveRPC func(net.Conn), serveClient func(conn net.Conn, plain bool)) (*Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	l := &Listener{
		ln: ln, key: key, tls: tlsConf, logger: logger, serveRPC: serveRPC, serveClient: serveClient,
		perClient: connlimit.New(limits.MaxConnsPerClient),
		limits:    limits,
		raftConns: make(chan net.Conn, 16),
		closed:    make(chan struct{}),
		conns:     map[net.Conn]struct{}{},
	}
	l.wg.Add(1)
	go l.acceptLoop()
	return l, nil
}

func (l *Listener) acceptLoop() {
	defer l.wg.Done()
	for {
		conn, err := l.ln.Accept()
		if err != nil {
			select {
			case <-l.closed:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			select {
			case <-l.closed:
				return
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		release, ok := l.perClient.Acquire(conn.RemoteAddr())
		if !ok {
			l.refuse(conn, fmt.Sprintf("this address already holds %d connections (limits.rpc_max_conns_per_client)", l.perClient.Max()))
			continue
		}
		if !l.track(conn) {
			release()
			return
		}
		l.wg.Add(1)
		go l.route(conn, release)
	}
}

// handshakeDeadline is when an inbound peer must have authenticated; zero is no bound.
func (l *Listener) handshakeDeadline() time.Time {
	if l.limits.HandshakeTimeout <= 0 {
		return time.Time{}
	}
	return time.Now().Add(l.limits.HandshakeTimeout)
}

// refuse closes conn and logs why, at most every few seconds so a flood cannot fill the log.
func (l *Listener) refuse(conn net.Conn, why string) {
	remote := conn.RemoteAddr().String()
	conn.Close()
	l.refused.Add(1)
	now := time.Now().UnixNano()
	last := l.lastWarn.Load()
	if now-last > int64(5*time.Second) && l.lastWarn.CompareAndSwap(last, now) {
		l.logger.Warn("refused a connection on the RPC port", "remote", remote, "reason", why)
	}
}

// route reads the first byte, which says how the peer authenticates, runs that handshake,
// then hands the authenticated stream to serve. Anything else closes this connection only.
// release gives back the connection's slot of its address; it is held until the connection
// ends, or until the peer proves itself a server.
func (l *Listener) route(conn net.Conn, release func()) {
	defer release()
	defer l.wg.Done()
	defer l.untrack(conn)
	// One deadline for the first byte and the handshake after it, not one each.
	deadline := l.handshakeDeadline()
	_ = conn.SetReadDeadline(deadline)
	var first [1]byte
	if _, err := conn.Read(first[:]); err != nil {
		conn.Close()
		return
	}
	if first[0] == KindClientAgent && l.serveClient != nil {
		// With tls.rpc a client agent must present a certificate like every other peer;
		// a plain connection is served only while rpc_upgrade_mode lets clients move over.
		if l.tls != nil && !l.tls.upgrade {
			l.refuse(conn, "a client agent connected without TLS and this server requires it (tls.rpc)")
			return
		}
		l.serveClient(conn, l.tls != nil)
		return
	}
	if l.key == nil && l.tls == nil {
		l.refuse(conn, "this server has no cluster key (server.encrypt) nor TLS (tls.rpc) and accepts no server connections")
		return
	}
	var (
		secure net.Conn
		kind   byte
		role   Role
		err    error
	)
	switch first[0] {
	case OpenTLS:
		secure, kind, role, err = l.acceptTLS(conn, deadline)
	case serverauth.ConnAuthenticated:
		secure, kind, role, err = l.acceptKey(conn, deadline)
	default:
		// The bare Raft (0x01) and RPC (0x02) bytes of old land here too: never accepted.
		err = fmt.Errorf("unknown or unauthenticated connection byte 0x%02x", first[0])
	}
	if err != nil {
		l.refuse(conn, err.Error())
		return
	}
	if role == RoleServer {
		release()
	}
	l.serve(conn, secure, kind, role)
}

// serve hands an authenticated stream to what speaks kind, if role may speak it. raw is the
// accepted connection under secure, tracked until its owner takes it.
func (l *Listener) serve(raw, secure net.Conn, kind byte, role Role) {
	switch kind {
	case KindRaft:
		if role != RoleServer {
			l.refuse(secure, fmt.Sprintf("a %s certificate may not speak Raft", role))
			return
		}
		// Raft's transport owns the connection from here and closes it on shutdown.
		l.untrack(raw)
		select {
		case l.raftConns <- secure:
		case <-l.closed:
			secure.Close()
		}
	case KindRPC:
		if role != RoleServer {
			l.refuse(secure, fmt.Sprintf("a %s certificate may not call server RPCs", role))
			return
		}
		l.serveRPC(secure)
	case KindClientAgent:
		// A client agent's certificate, or a server's (servers hold the stronger one). A
		// CLI certificate, or one naming another region under verify_server_hostname, is not
		// a node's.
		if l.serveClient == nil || (role != RoleClient && role != RoleServer) {
			l.refuse(secure, fmt.Sprintf("a %s certificate may not connect as a client agent", role))
			return
		}
		l.serveClient(secure, false)
	default:
		l.refuse(secure, fmt.Sprintf("unknown stream kind 0x%02x", kind))
	}
}

func (l *Listener) track(conn net.Conn) bool {
	l.connsMu.Lock()
	defer l.connsMu.Unlock()
	select {
	case <-l.closed:
		conn.Close()
		return false
	default:
	}
	l.conns[conn] = struct{}{}
	return true
}

func (l *Listener) untrack(conn net.Conn) {
	l.connsMu.Lock()
	defer l.connsMu.Unlock()
	delete(l.conns, conn)
}

// Close stops accepting, ends the connections being authenticated or served and waits for every
// connection goroutine; Raft's own connections are closed by Raft's transport.
func (l *Listener) Close() error {
	var err error
	l.closeOnce.Do(func() {
		l.connsMu.Lock()
		close(l.closed)
		for c := range l.conns {
			c.Close()
		}
		l.connsMu.Unlock()
		err = l.ln.Close()
		l.wg.Wait()
	})
	return err
}

// DialKey opens a stream of kind to the server at addr, authenticated by the cluster key.
func DialKey(key *serverauth.Key, addr string, kind byte, timeout time.Duration) (net.Conn, error) {
	if key == nil {
		return nil, ErrNoClusterKey
	}
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	return key.Client(conn, kind, HandshakeTimeout)
}

// ErrNoClusterKey is the answer of DialKey without a key.
var ErrNoClusterKey = errors.New("no cluster key: set server { encrypt = ... } on every server to connect servers")

// RaftLayer is Raft's stream layer over the shared port: it accepts the Raft streams the
// listener authenticated and dials other servers as a server. advertise is this server's
// address as its peers know it.
func (l *Listener) RaftLayer(advertise net.Addr) raft.StreamLayer {
	return &raftLayer{l: l, advertise: advertise}
}

// Refused counts the connections closed because they did not authenticate.
func (l *Listener) Refused() uint64 { return l.refused.Load() }

// ConnsFrom is how many connections the address ip holds against its cap.
func (l *Listener) ConnsFrom(ip string) int { return l.perClient.Count(ip) }

type raftLayer struct {
	l         *Listener
	advertise net.Addr
}

var _ raft.StreamLayer = (*raftLayer)(nil)

func (r *raftLayer) Accept() (net.Conn, error) {
	select {
	case conn := <-r.l.raftConns:
		return conn, nil
	case <-r.l.closed:
		return nil, errors.New("raft layer closed")
	}
}

func (r *raftLayer) Close() error   { return r.l.Close() }
func (r *raftLayer) Addr() net.Addr { return r.advertise }

func (r *raftLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return Dialer{Key: r.l.key, TLS: r.l.tls}.Dial(string(address), KindRaft, timeout)
}
