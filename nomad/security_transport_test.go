package nomad

import (
	"errors"
	"github.com/nomadfork/nomad/nomad/transport"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/nomad/serverauth"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// strangerLayer is a raft stream layer for an attacker: it dials the target and opens the
// stream the way the server used to accept one, with a bare kind byte, or runs the handshake
// with a key of the attacker's own.
type strangerLayer struct {
	prefix []byte
	key    *serverauth.Key
}

func (s *strangerLayer) Accept() (net.Conn, error) { select {} }
func (s *strangerLayer) Close() error              { return nil }
func (s *strangerLayer) Addr() net.Addr            { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }
func (s *strangerLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	if s.key != nil {
		return transport.DialKey(s.key, string(addr), transport.KindRaft, timeout)
	}
	conn, err := net.DialTimeout("tcp", string(addr), timeout)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Write(s.prefix); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

func mustKey(t *testing.T, encoded string) *serverauth.Key {
	t.Helper()
	k, err := serverauth.ParseKey(encoded)
	must.NoError(t, err)
	return k
}

const strangerKey = "87UHz5Qo403iLTaXOijzvDpUbFq08ZxKzBnfTUhjr5M="

// forgeAppendEntries sends one AppendEntries with a higher term whose only entry purges the
// job "web" in the name of an innocent user, as the stranger of finding 1 did.
func forgeAppendEntries(t *testing.T, srv *Server, layer raft.StreamLayer) error {
	t.Helper()
	stats := srv.raft.Stats()
	term, _ := strconv.ParseUint(stats["term"], 10, 64)
	lastTerm, _ := strconv.ParseUint(stats["last_log_term"], 10, 64)
	last := srv.raft.LastIndex()
	entry, err := structs.Encode(structs.JobDeregisterRequestType, &structs.JobDeregisterRequest{
		JobID: "web", Purge: true, PurgeRecordID: "forged", PurgeTime: 1, StopTime: 1,
		Actor:        &structs.Actor{AccessorID: "innocent", Name: "innocent-user", Type: "client"},
		WriteRequest: structs.WriteRequest{Namespace: structs.DefaultNamespace},
	})
	must.NoError(t, err)
	trans := raft.NewNetworkTransport(layer, 1, 2*time.Second, io.Discard)
	defer trans.Close()
	req := &raft.AppendEntriesRequest{
		RPCHeader:         raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("stranger"), Addr: []byte("127.0.0.1:1")},
		Term:              term + 10,
		PrevLogEntry:      last,
		PrevLogTerm:       lastTerm,
		Entries:           []*raft.Log{{Index: last + 1, Term: term + 10, Type: raft.LogCommand, Data: entry}},
		LeaderCommitIndex: last + 1,
	}
	var resp raft.AppendEntriesResponse
	if err := trans.AppendEntries(raft.ServerID(srv.config.NodeID), raft.ServerAddress(srv.RaftAddr()), req, &resp); err != nil {
		return err
	}
	if !resp.Success {
		return errors.New("append refused by raft")
	}
	return nil
}

func TestSecurity_ForgedRaftAppendEntriesRefused(t *testing.T) {
	cases := []struct {
		name     string
		key      string
		attacker raft.StreamLayer
	}{
		{name: "lone server without a key, bare raft byte", attacker: &strangerLayer{prefix: []byte{transport.KindRaft}}},
		{name: "keyed server, bare raft byte", key: testClusterKey, attacker: &strangerLayer{prefix: []byte{transport.KindRaft}}},
		{name: "keyed server, handshake with another key", key: testClusterKey, attacker: &strangerLayer{key: mustKey(t, strangerKey)}},
		{name: "lone server without a key, handshake with some key", attacker: &strangerLayer{key: mustKey(t, strangerKey)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := testServer(t, func(c *Config) {
				c.RaftBindAddr = freeAddr(t)
				c.EncryptKey = tc.key
			})
			var reply structs.JobRegisterResponse
			must.NoError(t, srv.Endpoints.Job.Register(&structs.JobRegisterRequest{Job: mock.Job(),
				WriteRequest: structs.WriteRequest{Namespace: structs.DefaultNamespace}}, &reply))
			termBefore := srv.raft.Stats()["term"]
			indexBefore := srv.raft.LastIndex()

			err := forgeAppendEntries(t, srv, tc.attacker)
			must.Error(t, err)

			// Nothing moved: same term, same log, the job and no purge record.
			must.True(t, srv.IsLeader())
			must.Eq(t, termBefore, srv.raft.Stats()["term"])
			must.Eq(t, indexBefore, srv.raft.LastIndex())
			job, err := srv.State().JobByID(nil, structs.DefaultNamespace, "web")
			must.NoError(t, err)
			must.NotNil(t, job)
			records, err := srv.State().PurgeRecords(nil)
			must.NoError(t, err)
			must.SliceEmpty(t, records)
		})
	}
}

// rawRPC sends one server RPC the way the port used to accept one (kind byte, then the
// request) and reports the answer's error, or the transport error when there is no answer.
func rawRPC(t *testing.T, addr, method string, args any) error {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	must.NoError(t, err)
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	body, err := encodeBody(args)
	must.NoError(t, err)
	if _, err := conn.Write([]byte{transport.KindRPC}); err != nil {
		return err
	}
	return exchange(conn, &rpcRequest{Method: method, Body: body})
}

func TestSecurity_UnauthenticatedClusterJoinRefused(t *testing.T) {
	for _, key := range []string{"", testClusterKey} {
		name := "lone server without a key"
		if key != "" {
			name = "keyed server"
		}
		t.Run(name, func(t *testing.T) {
			srv := testServer(t, func(c *Config) {
				c.RaftBindAddr = freeAddr(t)
				c.EncryptKey = key
			})
			fake := ServerInfo{ID: "fake-voter", Addr: "127.0.0.1:1"}
			must.Error(t, rawRPC(t, srv.RaftAddr(), "Cluster.Hello", &HelloRequest{Server: fake}))

			// A stranger with a key of its own gets no further than the handshake.
			stranger := &Server{clusterKey: mustKey(t, strangerKey)}
			var hr HelloResponse
			err := stranger.rpcCallTimeout(srv.RaftAddr(), "Cluster.Hello", &HelloRequest{Server: fake}, &hr, 5*time.Second)
			must.Error(t, err)

			peers, err := srv.Peers()
			must.NoError(t, err)
			must.Eq(t, []string{srv.RaftAddr()}, peers)
			// The server still leads and still commits.
			must.NoError(t, srv.raft.Barrier(5*time.Second).Error())
		})
	}
}

func TestSecurity_JoiningServersNeedAClusterKey(t *testing.T) {
	cases := []struct {
		name string
		cfg  func(*Config)
	}{
		{name: "retry_join", cfg: func(c *Config) { c.RetryJoin = []string{"127.0.0.1:1"} }},
		{name: "bootstrap_expect 3", cfg: func(c *Config) { c.BootstrapExpect = 3 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.RaftBindAddr = freeAddr(t)
			tc.cfg(cfg)
			_, err := NewServer(cfg)
			must.ErrorContains(t, err, "server.encrypt is required")
		})
	}
	t.Run("bad key", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.RaftBindAddr = freeAddr(t)
		cfg.EncryptKey = "c2VjcmV0" // six bytes
		_, err := NewServer(cfg)
		must.ErrorContains(t, err, "server.encrypt: key is 6 bytes")
	})
}

func TestSecurity_ServerWithAnotherKeyCannotJoin(t *testing.T) {
	servers := testCluster(t, 1)

	cfg := DefaultConfig()
	cfg.FastRaft = true
	cfg.NodeName = "stranger"
	cfg.RaftBindAddr = freeAddr(t)
	cfg.SerfBindAddr = freeAddr(t)
	cfg.BootstrapExpect = 0
	cfg.EncryptKey = strangerKey
	other, err := NewServer(cfg)
	must.NoError(t, err)
	t.Cleanup(func() { _ = other.Shutdown() })

	// Gossip is encrypted with the cluster key: a server with another key cannot even join
	// the member list, from either side.
	n, err := other.JoinGossip([]string{servers[0].config.SerfBindAddr})
	must.Error(t, err)
	must.Zero(t, n)
	n, err = servers[0].JoinGossip([]string{other.config.SerfBindAddr})
	must.Error(t, err)
	must.Zero(t, n)
	must.Len(t, 1, servers[0].Serf().Members())
	must.Len(t, 1, other.Serf().Members())
	peers, err := servers[0].Peers()
	must.NoError(t, err)
	must.Eq(t, []string{servers[0].RaftAddr()}, peers)
}
