package nomad

import (
	"errors"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// The first byte of every connection to a server's RPC port says what speaks on it, so Raft
// and the server RPC share one port, as upstream's do.
const (
	connRaft byte = 0x01
	connRPC  byte = 0x02
)

// rpcListener accepts on the RPC port and routes each connection by its first byte.
type rpcListener struct {
	ln        net.Listener
	raftConns chan net.Conn
	serveRPC  func(net.Conn)
	closeOnce sync.Once
	closed    chan struct{}
}

func newRPCListener(addr string, serveRPC func(net.Conn)) (*rpcListener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	l := &rpcListener{ln: ln, raftConns: make(chan net.Conn, 16), serveRPC: serveRPC, closed: make(chan struct{})}
	go l.acceptLoop()
	return l, nil
}

func (l *rpcListener) acceptLoop() {
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
			time.Sleep(10 * time.Millisecond)
			continue
		}
		go l.route(conn)
	}
}

func (l *rpcListener) route(conn net.Conn) {
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	var kind [1]byte
	if _, err := conn.Read(kind[:]); err != nil {
		conn.Close()
		return
	}
	_ = conn.SetReadDeadline(time.Time{})
	switch kind[0] {
	case connRaft:
		select {
		case l.raftConns <- conn:
		case <-l.closed:
			conn.Close()
		}
	case connRPC:
		l.serveRPC(conn)
	default:
		conn.Close()
	}
}

func (l *rpcListener) Close() error {
	var err error
	l.closeOnce.Do(func() {
		close(l.closed)
		err = l.ln.Close()
	})
	return err
}

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
	conn, err := net.DialTimeout("tcp", string(address), timeout)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Write([]byte{connRaft}); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}
