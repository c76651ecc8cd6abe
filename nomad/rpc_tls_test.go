package nomad

import (
	"bufio"
	"crypto/tls"
	"errors"
	"github.com/nomadfork/nomad/nomad/transport"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/raft"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/nomadfork/nomad/tlsutil"
	"github.com/nomadfork/nomad/tlsutil/tlstest"
	"github.com/shoenig/test/must"
)

// tlsFor is the RPC TLS block of a server presenting files, signed by ca.
func tlsFor(ca *tlstest.CA, files tlstest.Files, verify bool) *transport.TLSConfig {
	return &transport.TLSConfig{
		Config:               tlsutil.Config{CAFile: ca.CertFile, CertFile: files.CertFile, KeyFile: files.KeyFile},
		VerifyServerHostname: verify,
	}
}

// testTLSCluster is testCluster with TLS on the RPC port and no cluster key: the
// certificates alone authenticate the servers.
func testTLSCluster(t *testing.T, n int, ca *tlstest.CA) []*Server {
	t.Helper()
	return testCluster(t, n, func(cfg *Config) {
		cfg.EncryptKey = ""
		cfg.TLS = tlsFor(ca, ca.Issue(t, cfg.NodeName, []string{"server.global.nomad"}), true)
	})
}

func TestSecurity_TLSClusterFormsAndReplicatesWithoutAKey(t *testing.T) {
	ca := tlstest.NewCA(t, "cluster")
	servers := testTLSCluster(t, 3, ca)
	leader := leaderOf(servers)
	waitFor(t, 15*time.Second, func() bool {
		peers, err := leader.Peers()
		return err == nil && len(peers) == 3
	})
	var reply structs.JobRegisterResponse
	must.NoError(t, leader.Endpoints.Job.Register(&structs.JobRegisterRequest{Job: mock.Job(),
		WriteRequest: structs.WriteRequest{Namespace: structs.DefaultNamespace}}, &reply))
	for _, s := range servers {
		waitFor(t, 10*time.Second, func() bool {
			job, err := s.State().JobByID(nil, structs.DefaultNamespace, "web")
			return err == nil && job != nil
		})
	}
	// A write sent to a follower is forwarded to the leader over TLS server RPC.
	job := mock.Job()
	job.ID, job.Name = "api", "api"
	must.NoError(t, followerOf(servers).Endpoints.Job.Register(&structs.JobRegisterRequest{Job: job,
		WriteRequest: structs.WriteRequest{Namespace: structs.DefaultNamespace}}, &reply))
}

// dialLayer is a raft stream layer for an attacker who dials with dial.
type dialLayer struct {
	dial func(addr string, timeout time.Duration) (net.Conn, error)
}

func (d *dialLayer) Accept() (net.Conn, error) { select {} }
func (d *dialLayer) Close() error              { return nil }
func (d *dialLayer) Addr() net.Addr            { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }
func (d *dialLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return d.dial(string(addr), timeout)
}

// certDialer dials as a server presenting files would, with the server-name check off so
// only the listening side decides.
func certDialer(t *testing.T, ca *tlstest.CA, files tlstest.Files) transport.Dialer {
	t.Helper()
	tlsConf, err := transport.LoadTLS(&transport.TLSConfig{Config: tlsutil.Config{CAFile: ca.CertFile, CertFile: files.CertFile, KeyFile: files.KeyFile}}, "global")
	must.NoError(t, err)
	return transport.Dialer{TLS: tlsConf}
}

// rawTLSDialer presents a certificate that expired: tlsutil refuses to load one, so the
// attacker builds its tls.Config by hand.
func rawTLSDialer(certs []tls.Certificate) func(addr string, kind byte, timeout time.Duration) (net.Conn, error) {
	return func(addr string, kind byte, timeout time.Duration) (net.Conn, error) {
		conn, err := net.DialTimeout("tcp", addr, timeout)
		if err != nil {
			return nil, err
		}
		if _, err := conn.Write([]byte{transport.OpenTLS}); err != nil {
			conn.Close()
			return nil, err
		}
		tc := tls.Client(conn, &tls.Config{InsecureSkipVerify: true, Certificates: certs})
		if err := tc.Handshake(); err != nil {
			conn.Close()
			return nil, err
		}
		if _, err := tc.Write([]byte{kind}); err != nil {
			tc.Close()
			return nil, err
		}
		return tc, nil
	}
}

func TestSecurity_TLSRefusesPeersWithoutAServerCertificate(t *testing.T) {
	ca := tlstest.NewCA(t, "cluster")
	other := tlstest.NewCA(t, "other")
	expired := ca.Issue(t, "expired", []string{"server.global.nomad"}, tlstest.Expired)
	expiredPair, err := tls.LoadX509KeyPair(expired.CertFile, expired.KeyFile)
	must.NoError(t, err)

	type dialFn = func(addr string, kind byte, timeout time.Duration) (net.Conn, error)
	cases := []struct {
		name   string
		verify bool
		dial   func(t *testing.T) dialFn
	}{
		{name: "no certificate", verify: true, dial: func(t *testing.T) dialFn { return rawTLSDialer(nil) }},
		{name: "server certificate from another CA", verify: true, dial: func(t *testing.T) dialFn {
			return certDialer(t, other, other.Issue(t, "evil", []string{"server.global.nomad"})).Dial
		}},
		{name: "expired server certificate", verify: true, dial: func(t *testing.T) dialFn {
			return rawTLSDialer([]tls.Certificate{expiredPair})
		}},
		{name: "client certificate", verify: true, dial: func(t *testing.T) dialFn {
			return certDialer(t, ca, ca.Issue(t, "client", []string{"client.global.nomad"})).Dial
		}},
		{name: "client certificate, verify_server_hostname off", verify: false, dial: func(t *testing.T) dialFn {
			return certDialer(t, ca, ca.Issue(t, "client", []string{"client.global.nomad"})).Dial
		}},
		{name: "cli certificate, verify_server_hostname off", verify: false, dial: func(t *testing.T) dialFn {
			return certDialer(t, ca, ca.Issue(t, "cli", []string{"cli.global.nomad"})).Dial
		}},
		{name: "server certificate of another region", verify: true, dial: func(t *testing.T) dialFn {
			return certDialer(t, ca, ca.Issue(t, "eu", []string{"server.eu.nomad"})).Dial
		}},
		{name: "cluster key while TLS is required", verify: true, dial: func(t *testing.T) dialFn {
			return transport.Dialer{Key: mustKey(t, testClusterKey)}.Dial
		}},
		{name: "bare raft byte", verify: true, dial: func(t *testing.T) dialFn {
			return func(addr string, kind byte, timeout time.Duration) (net.Conn, error) {
				return (&strangerLayer{prefix: []byte{kind}}).Dial(raft.ServerAddress(addr), timeout)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := testServer(t, func(c *Config) {
				c.RaftBindAddr = freeAddr(t)
				// The key is set to show that, without rpc_upgrade_mode, it opens nothing.
				c.EncryptKey = testClusterKey
				c.TLS = tlsFor(ca, ca.Issue(t, "server", []string{"server.global.nomad"}), tc.verify)
			})
			var reply structs.JobRegisterResponse
			must.NoError(t, srv.Endpoints.Job.Register(&structs.JobRegisterRequest{Job: mock.Job(),
				WriteRequest: structs.WriteRequest{Namespace: structs.DefaultNamespace}}, &reply))
			termBefore := srv.raft.Stats()["term"]
			indexBefore := srv.raft.LastIndex()
			refusedBefore := srv.rpcListener.Refused()
			dial := tc.dial(t)

			layer := &dialLayer{dial: func(addr string, timeout time.Duration) (net.Conn, error) {
				return dial(addr, transport.KindRaft, timeout)
			}}
			must.Error(t, forgeAppendEntries(t, srv, layer))

			fake := ServerInfo{ID: "fake-voter", Addr: "127.0.0.1:1"}
			conn, err := dial(srv.RaftAddr(), transport.KindRPC, 2*time.Second)
			if err == nil {
				err = rpcOnConn(conn, "Cluster.Hello", &HelloRequest{Server: fake})
			}
			must.Error(t, err)

			waitFor(t, 5*time.Second, func() bool { return srv.rpcListener.Refused() >= refusedBefore+2 })
			must.True(t, srv.IsLeader())
			must.Eq(t, termBefore, srv.raft.Stats()["term"])
			must.Eq(t, indexBefore, srv.raft.LastIndex())
			peers, err := srv.Peers()
			must.NoError(t, err)
			must.Eq(t, []string{srv.RaftAddr()}, peers)
			records, err := srv.State().PurgeRecords(nil)
			must.NoError(t, err)
			must.SliceEmpty(t, records)
		})
	}
}

// rpcOnConn sends one server RPC on an opened stream and returns its error.
func rpcOnConn(conn net.Conn, method string, args any) error {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	body, err := encodeBody(args)
	if err != nil {
		return err
	}
	return exchange(conn, &rpcRequest{Method: method, Body: body})
}

func TestSecurity_TLSServerWithAnotherCACannotJoin(t *testing.T) {
	ca := tlstest.NewCA(t, "cluster")
	servers := testTLSCluster(t, 1, ca)
	refusedBefore := servers[0].rpcListener.Refused()

	other := tlstest.NewCA(t, "other")
	cfg := DefaultConfig()
	cfg.FastRaft = true
	cfg.NodeName = "evil"
	cfg.RaftBindAddr = freeAddr(t)
	cfg.SerfBindAddr = freeAddr(t)
	cfg.BootstrapExpect = 0
	cfg.RetryJoin = []string{servers[0].config.SerfBindAddr}
	cfg.TLS = tlsFor(other, other.Issue(t, "evil", []string{"server.global.nomad"}), true)
	evil, err := NewServer(cfg)
	must.NoError(t, err)
	t.Cleanup(func() { _ = evil.Shutdown() })

	// Gossip is not encrypted in a TLS-only cluster, so the stranger joins the member list;
	// the leader then calls it on its RPC port, where the certificates do not match, and
	// never adds it. Its own attempts to call the leader are refused too.
	waitFor(t, 15*time.Second, func() bool { return len(servers[0].regionServers()) == 2 })
	waitFor(t, 15*time.Second, func() bool {
		return evil.rpcListener.Refused() >= 1 && servers[0].rpcListener.Refused() >= refusedBefore
	})
	peers, err := servers[0].Peers()
	must.NoError(t, err)
	must.Eq(t, []string{servers[0].RaftAddr()}, peers)
}

func TestSecurity_GossipStrangerNeitherHoldsUpNorJoinsTheBootstrap(t *testing.T) {
	ca := tlstest.NewCA(t, "cluster")
	other := tlstest.NewCA(t, "other")
	cfg := DefaultConfig()
	cfg.FastRaft = true
	cfg.NodeName = "evil"
	cfg.RaftBindAddr = freeAddr(t)
	cfg.SerfBindAddr = freeAddr(t)
	cfg.BootstrapExpect = 3
	cfg.TLS = tlsFor(other, other.Issue(t, "evil", []string{"server.global.nomad"}), true)
	evil, err := NewServer(cfg)
	must.NoError(t, err)
	t.Cleanup(func() { _ = evil.Shutdown() })

	// The three real servers also know the stranger's gossip address: it is alive in their
	// member list, with a matching bootstrap_expect, but cannot prove itself on its RPC port.
	servers := testCluster(t, 3, func(c *Config) {
		c.EncryptKey = ""
		c.TLS = tlsFor(ca, ca.Issue(t, c.NodeName, []string{"server.global.nomad"}), true)
		c.RetryJoin = append(append([]string(nil), c.RetryJoin...), evil.config.SerfBindAddr)
	})
	leader := leaderOf(servers)
	waitFor(t, 15*time.Second, func() bool {
		peers, err := leader.Peers()
		return err == nil && len(peers) == 3
	})
	waitFor(t, 15*time.Second, func() bool { return len(leader.regionServers()) == 4 })
	peers, err := leader.Peers()
	must.NoError(t, err)
	must.SliceNotContains(t, peers, evil.RaftAddr())
	must.False(t, evil.hasConfiguration())
}

func TestSecurity_TLSUpgradeModeAcceptsTheKeyButNeverBareBytes(t *testing.T) {
	ca := tlstest.NewCA(t, "cluster")
	srv := testServer(t, func(c *Config) {
		c.RaftBindAddr = freeAddr(t)
		c.EncryptKey = testClusterKey
		c.TLS = tlsFor(ca, ca.Issue(t, "server", []string{"server.global.nomad"}), true)
		c.TLS.RPCUpgradeMode = true
	})
	hello := &HelloRequest{Server: ServerInfo{ID: "peer", Addr: "127.0.0.1:1"}}
	var reply HelloResponse
	keyed := &Server{clusterKey: mustKey(t, testClusterKey)}
	must.NoError(t, keyed.rpcCallTimeout(srv.RaftAddr(), "Cluster.Hello", hello, &reply, 5*time.Second))
	tlsPeer := &Server{rpcTLS: certDialer(t, ca, ca.Issue(t, "peer", []string{"server.global.nomad"})).TLS}
	must.NoError(t, tlsPeer.rpcCallTimeout(srv.RaftAddr(), "Cluster.Hello", hello, &reply, 5*time.Second))

	must.Error(t, rawRPC(t, srv.RaftAddr(), "Cluster.Hello", hello))
	must.Error(t, forgeAppendEntries(t, srv, &strangerLayer{prefix: []byte{transport.KindRaft}}))
}

func TestSecurity_GarbageFirstByteClosesOnlyThatConnection(t *testing.T) {
	ca := tlstest.NewCA(t, "cluster")
	srv := testServer(t, func(c *Config) {
		c.RaftBindAddr = freeAddr(t)
		c.TLS = tlsFor(ca, ca.Issue(t, "server", []string{"server.global.nomad"}), true)
	})
	peer := &Server{rpcTLS: certDialer(t, ca, ca.Issue(t, "peer", []string{"server.global.nomad"})).TLS}
	good, err := peer.dialer().Dial(srv.RaftAddr(), transport.KindRPC, 2*time.Second)
	must.NoError(t, err)
	defer good.Close()

	for _, garbage := range [][]byte{{0xff}, {0x00, 1, 2, 3}, []byte("GET / HTTP/1.1\r\n\r\n"), {transport.OpenTLS, 0x16, 0x03}} {
		conn, err := net.DialTimeout("tcp", srv.RaftAddr(), 2*time.Second)
		must.NoError(t, err)
		_, _ = conn.Write(garbage)
		_ = conn.SetReadDeadline(time.Now().Add(15 * time.Second))
		_, err = conn.Read(make([]byte, 1))
		must.Error(t, err) // closed by the server, not left hanging
		conn.Close()
	}
	// The connection opened before still answers.
	hello := &HelloRequest{Server: ServerInfo{ID: "peer", Addr: "127.0.0.1:1"}}
	body, err := encodeBody(hello)
	must.NoError(t, err)
	_ = good.SetDeadline(time.Now().Add(5 * time.Second))
	must.NoError(t, exchange(good, &rpcRequest{Method: "Cluster.Hello", Body: body}))
}

func TestSecurity_TransportWarnings(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{name: "in-memory raft", cfg: Config{}},
		{name: "loopback with key", cfg: Config{RaftBindAddr: "127.0.0.1:4647", EncryptKey: testClusterKey}},
		{name: "any address with key", cfg: Config{RaftBindAddr: "0.0.0.0:4647", EncryptKey: testClusterKey},
			want: "authenticated by the shared cluster key (server.encrypt) only"},
		{name: "private address without key", cfg: Config{RaftBindAddr: "10.0.0.5:4647"}, want: "refuses every connection"},
		{name: "tls with hostname check", cfg: Config{RaftBindAddr: "0.0.0.0:4647", TLS: &transport.TLSConfig{VerifyServerHostname: true}}},
		{name: "tls without hostname check", cfg: Config{RaftBindAddr: "0.0.0.0:4647", TLS: &transport.TLSConfig{}},
			want: "tls.verify_server_hostname is off"},
		{name: "tls upgrade mode", cfg: Config{RaftBindAddr: "0.0.0.0:4647", TLS: &transport.TLSConfig{VerifyServerHostname: true, RPCUpgradeMode: true}},
			want: "remove rpc_upgrade_mode once every server runs with TLS"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(transportWarnings(&tc.cfg), "\n")
			if tc.want == "" {
				must.Eq(t, "", got)
				return
			}
			must.StrContains(t, got, tc.want)
		})
	}

	// And the server logs it at start.
	var buf lockedBuffer
	cfg := DefaultConfig()
	cfg.FastRaft = true
	cfg.RaftBindAddr = freeAddr(t)
	cfg.RaftBindAddr = "0.0.0.0:" + strings.Split(cfg.RaftBindAddr, ":")[1]
	cfg.RaftAdvertiseAddr = "127.0.0.1:" + strings.Split(cfg.RaftBindAddr, ":")[1]
	cfg.EncryptKey = testClusterKey
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Warn})
	srv, err := NewServer(cfg)
	must.NoError(t, err)
	// Read before anything else can log: the warning is written inside NewServer.
	logged := buf.String()
	t.Cleanup(func() { _ = srv.Shutdown() })
	must.StrContains(t, logged, "enable tls { rpc = true, verify_server_hostname = true }")
}

// exchange sends one request on conn and reads the answer.
func exchange(conn net.Conn, req *rpcRequest) error {
	if err := codec.NewEncoder(conn, structs.MsgpackHandle).Encode(req); err != nil {
		return err
	}
	var resp rpcResponse
	if err := codec.NewDecoder(bufio.NewReader(conn), structs.MsgpackHandle).Decode(&resp); err != nil {
		return err
	}
	if resp.Error != "" {
		return errors.New(resp.Error)
	}
	return nil
}

// lockedBuffer is a log sink safe to read while the server logs.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
