package nomad

import (
	"errors"
	"github.com/nomadfork/nomad/nomad/transport"
	"net"
	"testing"
	"time"

	"github.com/nomadfork/nomad/nomad/serverauth"
	"github.com/nomadfork/nomad/tlsutil/tlstest"
	"github.com/shoenig/test/must"
)

// attackerIP is a loopback address other than 127.0.0.1: on Linux the whole of 127/8 is
// local, so a dialer bound to it reaches the server as a different client address.
const attackerIP = "127.0.0.50"

// dialFrom opens a TCP connection to addr from the local address ip.
func dialFrom(t *testing.T, ip, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	conn, err := d.Dial("tcp", addr)
	must.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// closedByServer reports whether the server has closed conn: a read ends with EOF or a reset
// rather than the long deadline given here, which only stops a broken test from hanging.
func closedByServer(conn net.Conn) bool {
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, err := conn.Read(make([]byte, 1))
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// keyedPeerHello runs one server RPC from 127.0.0.1 as a server holding the cluster key.
func keyedPeerHello(t *testing.T, srv *Server) error {
	t.Helper()
	peer := &Server{clusterKey: mustKey(t, testClusterKey)}
	var reply HelloResponse
	return peer.rpcCallTimeout(srv.RaftAddr(), "Cluster.Hello", &HelloRequest{Server: ServerInfo{ID: "peer", Addr: "127.0.0.1:1"}}, &reply, 10*time.Second)
}

// Security finding (issue 19, item 2): 64 silent connections from one stranger filled a
// global cap on connections being authenticated, and the RPC port refused every server and
// client after that. Hundreds of silent connections from one address must leave other
// addresses served.
func TestSecurity_RPCStrangerHoldingSilentConnectionsDoesNotStarvePeers(t *testing.T) {
	srv := testServer(t, func(c *Config) {
		c.RaftBindAddr = freeAddr(t)
		c.EncryptKey = testClusterKey
		// Long enough that the stranger's connections are all still held while the peer calls.
		c.RPCHandshakeTimeout = 10 * time.Minute
	})
	for range 300 {
		dialFrom(t, attackerIP, srv.RaftAddr())
	}
	waitFor(t, 10*time.Second, func() bool { return srv.rpcListener.ConnsFrom(attackerIP) == 100 })

	must.NoError(t, keyedPeerHello(t, srv))
	// A client agent's connection from another address is served too.
	client := dialFrom(t, "127.0.0.1", srv.RaftAddr())
	_, err := client.Write([]byte{transport.KindClientAgent})
	must.NoError(t, err)
	waitFor(t, 10*time.Second, func() bool { return srv.rpcListener.ConnsFrom("127.0.0.1") >= 1 })
	must.NoError(t, srv.raft.Barrier(5*time.Second).Error())
}

func TestSecurity_RPCPerClientCapIsEnforcedAndReleased(t *testing.T) {
	cases := []struct {
		name string
		// first is what each held connection sends: nothing, or the byte of a client
		// agent's session, which is served without a handshake and must count all the same.
		first []byte
	}{
		{name: "silent connections", first: nil},
		{name: "client agent sessions", first: []byte{transport.KindClientAgent}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := testServer(t, func(c *Config) {
				c.RaftBindAddr = freeAddr(t)
				c.EncryptKey = testClusterKey
				c.RPCMaxConnsPerClient = 5
				c.RPCHandshakeTimeout = 10 * time.Minute
			})
			count := func() int { return srv.rpcListener.ConnsFrom(attackerIP) }
			open := func() net.Conn {
				conn := dialFrom(t, attackerIP, srv.RaftAddr())
				if tc.first != nil {
					_, err := conn.Write(tc.first)
					must.NoError(t, err)
				}
				return conn
			}
			var held []net.Conn
			for range 5 {
				held = append(held, open())
			}
			waitFor(t, 10*time.Second, func() bool { return count() == 5 })

			must.True(t, closedByServer(open()), must.Sprint("connection 6 from the same address is closed"))
			must.Eq(t, 5, count())

			// Closing one frees its slot: the next connection is held, not closed.
			must.NoError(t, held[0].Close())
			waitFor(t, 10*time.Second, func() bool { return count() == 4 })
			open()
			waitFor(t, 10*time.Second, func() bool { return count() == 5 })

			// The cap is the stranger's alone.
			must.NoError(t, keyedPeerHello(t, srv))
		})
	}
}

// Servers open one connection per forwarded call, so a follower forwarding many blocking
// queries holds many at once: connections that prove the cluster key stop counting.
func TestSecurity_RPCAuthenticatedServersAreNotCapped(t *testing.T) {
	srv := testServer(t, func(c *Config) {
		c.RaftBindAddr = freeAddr(t)
		c.EncryptKey = testClusterKey
		c.RPCMaxConnsPerClient = 3
	})
	peer := &Server{clusterKey: mustKey(t, testClusterKey)}
	hello, err := encodeBody(&HelloRequest{Server: ServerInfo{ID: "peer", Addr: "127.0.0.1:1"}})
	must.NoError(t, err)
	for i := range 10 {
		conn, err := peer.dialer().Dial(srv.RaftAddr(), transport.KindRPC, 5*time.Second)
		must.NoError(t, err, must.Sprintf("connection %d", i))
		t.Cleanup(func() { _ = conn.Close() })
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		must.NoError(t, exchange(conn, &rpcRequest{Method: "Cluster.Hello", Body: hello}), must.Sprintf("connection %d", i))
	}
	must.Eq(t, 0, srv.rpcListener.ConnsFrom("127.0.0.1"))
}

func TestSecurity_RPCSilentConnectionClosedAfterHandshakeTimeout(t *testing.T) {
	ca := tlstest.NewCA(t, "cluster")
	srv := testServer(t, func(c *Config) {
		c.RaftBindAddr = freeAddr(t)
		c.EncryptKey = testClusterKey
		// Upgrade mode keeps both handshakes live on the port.
		c.TLS = tlsFor(ca, ca.Issue(t, "server", []string{"server.global.nomad"}), true)
		c.TLS.RPCUpgradeMode = true
		c.RPCHandshakeTimeout = 300 * time.Millisecond
	})
	cases := []struct {
		name  string
		first []byte
	}{
		{name: "nothing sent", first: nil},
		{name: "cluster-key handshake begun", first: []byte{serverauth.ConnAuthenticated}},
		{name: "TLS begun", first: []byte{transport.OpenTLS}},
		{name: "TLS hello cut short", first: []byte{transport.OpenTLS, 0x16, 0x03, 0x01, 0x00, 0x80}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conn := dialFrom(t, attackerIP, srv.RaftAddr())
			if tc.first != nil {
				_, err := conn.Write(tc.first)
				must.NoError(t, err)
			}
			must.True(t, closedByServer(conn))
			waitFor(t, 10*time.Second, func() bool { return srv.rpcListener.ConnsFrom(attackerIP) == 0 })
		})
	}
}
