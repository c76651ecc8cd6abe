package nomad

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/nomadfork/nomad/nomad/serverauth"
)

// After the handshake, the stream kind says what speaks on an authenticated connection, so
// Raft and the server RPC share one port, as upstream's do. A connection that opens with one
// of these bytes without the handshake is closed unread.
const (
	connRaft byte = 0x01
	connRPC  byte = 0x02
)

// handshakeTimeout bounds how long an unauthenticated peer may hold a connection open.
const handshakeTimeout = 10 * time.Second

// maxPendingHandshakes bounds the connections that have not yet proved the key, so a stranger
// opening connections in a loop costs a bounded number of goroutines and buffers.
const maxPendingHandshakes = 64

// rpcListener accepts on the RPC port. Only peers that prove the cluster key get through; with
// no key (a lone server with nothing to join) every connection is closed at once.
type rpcListener struct {
	ln        net.Listener
	key       *serverauth.Key
	logger    hclog.Logger
	raftConns chan net.Conn
	serveRPC  func(net.Conn)
	// serveClient serves client agents' connections (nomad/rpc_client_conn.go).
	serveClient func(net.Conn)
	pending     chan struct{}
	lastWarn    atomic.Int64
	// refused counts connections closed because they did not authenticate (a metric to come).
	refused   atomic.Uint64
	closeOnce sync.Once
	closed    chan struct{}
	// wg counts the accept loop and every connection being authenticated or served; conns
	// are those connections, closed by Close so their goroutines end.
	wg      sync.WaitGroup
	connsMu sync.Mutex
	conns   map[net.Conn]struct{}
}

func newRPCListener(addr string, key *serverauth.Key, logger hclog.Logger, serveRPC, serveClient func(net.Conn)) (*rpcListener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	l := &rpcListener{
		ln: ln, key: key, logger: logger, serveRPC: serveRPC, serveClient: serveClient,
		raftConns: make(chan net.Conn, 16),
		pending:   make(chan struct{}, maxPendingHandshakes),
		closed:    make(chan struct{}),
		conns:     map[net.Conn]struct{}{},
	}
	l.wg.Add(1)
	go l.acceptLoop()
	return l, nil
}

func (l *rpcListener) acceptLoop() {
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
		select {
		case l.pending <- struct{}{}:
			if !l.track(conn) {
				<-l.pending
				return
			}
			l.wg.Add(1)
			go l.route(conn)
		default:
			l.refuse(conn, "too many connections are authenticating")
		}
	}
}

// refuse closes conn and logs why, at most every few seconds so a flood cannot fill the log.
func (l *rpcListener) refuse(conn net.Conn, why string) {
	remote := conn.RemoteAddr().String()
	conn.Close()
	l.refused.Add(1)
	now := time.Now().UnixNano()
	last := l.lastWarn.Load()
	if now-last > int64(5*time.Second) && l.lastWarn.CompareAndSwap(last, now) {
		l.logger.Warn("refused a connection on the RPC port", "remote", remote, "reason", why)
	}
}

func (l *rpcListener) route(conn net.Conn) {
	released := false
	release := func() {
		if !released {
			released = true
			<-l.pending
		}
	}
	defer release()
	defer l.wg.Done()
	defer l.untrack(conn)
	_ = conn.SetReadDeadline(time.Now().Add(handshakeTimeout))
	var first [1]byte
	if _, err := conn.Read(first[:]); err != nil {
		conn.Close()
		return
	}
	if first[0] == connClientAgent && l.serveClient != nil {
		release()
		l.serveClient(conn)
		return
	}
	if l.key == nil {
		l.refuse(conn, "this server has no cluster key (server.encrypt) and accepts no server connections")
		return
	}
	if first[0] != serverauth.ConnAuthenticated {
		l.refuse(conn, "the peer did not authenticate")
		return
	}
	secure, kind, err := l.key.Server(conn, handshakeTimeout)
	if err != nil {
		l.refuse(conn, err.Error())
		return
	}
	release()
	switch kind {
	case connRaft:
		// Raft's transport owns the connection from here and closes it on shutdown.
		l.untrack(conn)
		select {
		case l.raftConns <- secure:
		case <-l.closed:
			secure.Close()
		}
	case connRPC:
		l.serveRPC(secure)
	default:
		secure.Close()
	}
}

func (l *rpcListener) track(conn net.Conn) bool {
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

func (l *rpcListener) untrack(conn net.Conn) {
	l.connsMu.Lock()
	defer l.connsMu.Unlock()
	delete(l.conns, conn)
}

// Close stops accepting, ends the connections being authenticated or served and waits for every
// connection goroutine; Raft's own connections are closed by Raft's transport.
func (l *rpcListener) Close() error {
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

// dial opens an authenticated stream of kind to the server at addr.
func dialServer(key *serverauth.Key, addr string, kind byte, timeout time.Duration) (net.Conn, error) {
	if key == nil {
		return nil, errNoClusterKey
	}
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	return key.Client(conn, kind, handshakeTimeout)
}

var errNoClusterKey = errors.New("no cluster key: set server { encrypt = ... } on every server to connect servers")

// raftLayer is the raft.StreamLayer over the shared port.
type raftLayer struct {
	l         *rpcListener
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
	return dialServer(r.l.key, string(address), connRaft, timeout)
}
