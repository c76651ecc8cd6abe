package nomad

import (
	"bufio"
	"github.com/nomadfork/nomad/nomad/transport"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/yamux"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// rpcServer is a lone server listening on a real RPC port, with no cluster key: client
// connections need none.
func rpcServer(t *testing.T, cb func(*Config)) *Server {
	t.Helper()
	return testServer(t, func(c *Config) {
		c.RaftBindAddr = freeAddr(t)
		if cb != nil {
			cb(c)
		}
	})
}

// clientConn opens a client agent's connection to srv, as a client would.
func clientConn(t *testing.T, srv *Server) *yamux.Session {
	t.Helper()
	conn, err := net.Dial("tcp", srv.RaftAddr())
	must.NoError(t, err)
	_, err = conn.Write([]byte{transport.KindClientAgent})
	must.NoError(t, err)
	sess, err := yamux.Client(conn, ClientYamuxConfig())
	must.NoError(t, err)
	t.Cleanup(func() { _ = sess.Close() })
	return sess
}

// clientRPC makes one call over sess and returns its answer's error (a *structs.CodedError).
func clientRPC(t *testing.T, sess *yamux.Session, method string, args, reply any) error {
	t.Helper()
	stream, err := sess.OpenStream()
	must.NoError(t, err)
	defer stream.Close()
	_ = stream.SetDeadline(time.Now().Add(20 * time.Second))
	body, err := encodeBody(args)
	must.NoError(t, err)
	must.NoError(t, codec.NewEncoder(stream, structs.MsgpackHandle).Encode(&rpcRequest{Method: method, Body: body}))
	var resp rpcResponse
	must.NoError(t, codec.NewDecoder(bufio.NewReader(stream), structs.MsgpackHandle).Decode(&resp))
	if resp.Error != "" {
		return &structs.CodedError{Code: resp.Code, Msg: resp.Error}
	}
	return structs.Decode(resp.Body, reply)
}

func registerOverConn(t *testing.T, sess *yamux.Session, node *structs.Node, token string) error {
	t.Helper()
	var reply structs.NodeUpdateResponse
	return clientRPC(t, sess, "Node.Register", &structs.NodeRegisterRequest{Node: node, WriteRequest: structs.WriteRequest{AuthToken: token}}, &reply)
}

func mustCode(t *testing.T, code int, err error) {
	t.Helper()
	must.Error(t, err)
	must.Eq(t, code, structs.ErrorCode(err), must.Sprintf("error: %v", err))
}

// TestSecurity_ClientRPC_AllowList: beyond the node's own calls, a client connection reaches
// only the rows an ACL token authorises, for its agent's HTTP API, and each is decided on the
// token the request carries exactly as on the server's HTTP API: a request without one that
// needs one is refused and changes nothing, while a token that holds the capability acts as
// itself. Server-to-server calls, the relay and Raft stay out of reach.
func TestSecurity_ClientRPC_AllowList(t *testing.T) {
	srv, root := testACLServer(t, func(c *Config) { c.RaftBindAddr = freeAddr(t) })
	registerJob(t, srv, root, mock.Job())
	before := srv.raft.LastIndex()
	sess := clientConn(t, srv)

	refused := []struct {
		name   string
		method string
		args   any
		want   string
	}{
		{name: "job deregister", method: "Job.Deregister", args: &structs.JobDeregisterRequest{JobID: "web", Purge: true, WriteRequest: structs.WriteRequest{Namespace: "default"}}, want: "Permission denied"},
		{name: "job register", method: "Job.Register", args: &structs.JobRegisterRequest{Job: mock.Job(), WriteRequest: structs.WriteRequest{Namespace: "default"}}, want: "Permission denied"},
		{name: "node list", method: "Node.List", args: &structs.NodeListRequest{}, want: "Permission denied"},
		{name: "peer hello", method: "Cluster.Hello", args: &HelloRequest{Server: ServerInfo{ID: "peer", Addr: "127.0.0.1:1"}}, want: "not a client RPC"},
		{name: "relay", method: relayMethod, args: &relayRequest{NodeID: "x"}, want: "not a client RPC"},
		{name: "raft", method: "Raft", args: &structs.NodeSpecificRequest{}, want: "not a client RPC"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			var reply structs.GenericResponse
			err := clientRPC(t, sess, tc.method, tc.args, &reply)
			mustCode(t, 403, err)
			must.StrContains(t, err.Error(), tc.want)
		})
	}
	job, err := srv.State().JobByID(nil, "default", "web")
	must.NoError(t, err)
	must.NotNil(t, job)
	must.Eq(t, before, srv.raft.LastIndex())

	t.Run("a token row with the caller's token", func(t *testing.T) {
		var reply structs.JobListResponse
		must.NoError(t, clientRPC(t, sess, "Job.List", &structs.JobListRequest{QueryOptions: structs.QueryOptions{Namespace: "default", AuthToken: root}}, &reply))
		must.SliceLen(t, 1, reply.Jobs)
	})

	// Raft's stream kind as the first byte, without the cluster handshake: closed unread.
	conn, err := net.Dial("tcp", srv.RaftAddr())
	must.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte{transport.KindRaft, 0, 0, 0})
	must.NoError(t, err)
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = conn.Read(make([]byte, 1))
	must.Error(t, err)
	must.False(t, strings.Contains(err.Error(), "timeout"), must.Sprintf("connection left open: %v", err))
}

// TestSecurity_ClientRPC_NodeSecret: every client call carries the node's secret; a wrong or
// missing one is a 403 that changes nothing and names no secret.
func TestSecurity_ClientRPC_NodeSecret(t *testing.T) {
	srv := rpcServer(t, nil)
	sess := clientConn(t, srv)
	node := testNode("n1")
	must.NoError(t, registerOverConn(t, sess, node, node.SecretID))
	before := srv.raft.LastIndex()

	wrong := "00000000-bad0-4bad-8bad-000000000000"
	calls := []struct {
		name string
		call func(token string) error
	}{
		{name: "heartbeat", call: func(token string) error {
			var reply structs.NodeUpdateResponse
			return clientRPC(t, sess, "Node.UpdateStatus", &structs.NodeUpdateStatusRequest{NodeID: node.ID, Status: structs.NodeStatusDown, WriteRequest: structs.WriteRequest{AuthToken: token}}, &reply)
		}},
		{name: "allocations", call: func(token string) error {
			var reply structs.NodeAllocsResponse
			return clientRPC(t, sess, "Node.GetAllocs", &structs.NodeSpecificRequest{NodeID: node.ID, QueryOptions: structs.QueryOptions{AuthToken: token}}, &reply)
		}},
		{name: "alloc update", call: func(token string) error {
			var reply structs.GenericResponse
			return clientRPC(t, sess, "Alloc.UpdateFromClient", &structs.AllocUpdateRequest{NodeID: node.ID,
				Alloc: []*structs.Allocation{{ID: "a", ClientStatus: structs.AllocClientStatusFailed}}, WriteRequest: structs.WriteRequest{AuthToken: token}}, &reply)
		}},
		{name: "session", call: func(token string) error {
			var reply structs.GenericResponse
			return clientRPC(t, sess, "Node.Session", &structs.NodeSpecificRequest{NodeID: node.ID, QueryOptions: structs.QueryOptions{AuthToken: token}}, &reply)
		}},
	}
	for _, tc := range calls {
		for _, token := range []string{"", wrong} {
			t.Run(tc.name+"/"+map[string]string{"": "missing", wrong: "wrong"}[token], func(t *testing.T) {
				err := tc.call(token)
				mustCode(t, 403, err)
				must.StrNotContains(t, err.Error(), node.SecretID)
			})
		}
	}
	must.Eq(t, before, srv.raft.LastIndex())
	must.Nil(t, srv.clientSessions.get(node.ID))
	got, err := srv.State().NodeByID(nil, node.ID)
	must.NoError(t, err)
	must.Eq(t, structs.NodeStatusReady, got.Status)

	// The right secret works for each.
	var reply structs.NodeAllocsResponse
	must.NoError(t, clientRPC(t, sess, "Node.GetAllocs", &structs.NodeSpecificRequest{NodeID: node.ID, QueryOptions: structs.QueryOptions{AuthToken: node.SecretID}}, &reply))
	var empty structs.GenericResponse
	must.NoError(t, clientRPC(t, sess, "Node.Session", &structs.NodeSpecificRequest{NodeID: node.ID, QueryOptions: structs.QueryOptions{AuthToken: node.SecretID}}, &empty))
	must.NotNil(t, srv.clientSessions.get(node.ID))
}

// TestSecurity_ClientRPC_StealNodeID: a node ID keeps the secret it registered with. Another
// secret is refused over a client connection, and on the endpoint itself even for a caller
// the ACLs let through (here: ACLs off), so the leader refuses what a lagging follower let by.
func TestSecurity_ClientRPC_StealNodeID(t *testing.T) {
	srv := rpcServer(t, nil)
	sess := clientConn(t, srv)
	victim := testNode("victim")
	must.NoError(t, registerOverConn(t, sess, victim, victim.SecretID))

	thief := victim.Copy()
	thief.SecretID = "11111111-1111-4111-8111-111111111111"
	thief.Name = "thief"
	before := srv.raft.LastIndex()
	mustCode(t, 403, registerOverConn(t, clientConn(t, srv), thief, thief.SecretID))
	// Its own secret as the token does not help either, nor a token that is not the record's.
	mustCode(t, 403, registerOverConn(t, clientConn(t, srv), thief, victim.SecretID))

	var reply structs.NodeUpdateResponse
	err := srv.Endpoints.Node.Register(&structs.NodeRegisterRequest{Node: thief.Copy()}, &reply)
	mustCode(t, 403, err)
	must.StrNotContains(t, err.Error(), victim.SecretID)
	err = srv.Endpoints.Node.RegisterClient(&structs.NodeRegisterRequest{Node: thief.Copy(), WriteRequest: structs.WriteRequest{AuthToken: thief.SecretID}}, &reply)
	mustCode(t, 403, err)

	must.Eq(t, before, srv.raft.LastIndex())
	got, err := srv.State().NodeByID(nil, victim.ID)
	must.NoError(t, err)
	must.Eq(t, victim.SecretID, got.SecretID)
	must.Eq(t, victim.Name, got.Name)
}

// TestClientRPC_RegisterWithACLs: with ACLs on, a client agent registers its new node with its
// secret alone, as upstream's do; the same call in-process without the client path needs a
// token.
func TestClientRPC_RegisterWithACLs(t *testing.T) {
	srv, _ := testACLServer(t, func(c *Config) { c.RaftBindAddr = freeAddr(t) })
	sess := clientConn(t, srv)
	node := testNode("n1")
	must.NoError(t, registerOverConn(t, sess, node, node.SecretID))
	var hb structs.NodeUpdateResponse
	must.NoError(t, clientRPC(t, sess, "Node.UpdateStatus", &structs.NodeUpdateStatusRequest{NodeID: node.ID, Status: structs.NodeStatusReady,
		WriteRequest: structs.WriteRequest{AuthToken: node.SecretID}}, &hb))
	must.Positive(t, hb.HeartbeatTTL)

	other := testNode("n2")
	var reply structs.NodeUpdateResponse
	mustCode(t, 403, srv.Endpoints.Node.Register(&structs.NodeRegisterRequest{Node: other, WriteRequest: structs.WriteRequest{AuthToken: other.SecretID}}, &reply))
}

// TestSecurity_ClientRPC_Bounds: a call larger than the request limit gets no answer, and calls
// beyond the in-flight bound are reset rather than queued without end.
func TestSecurity_ClientRPC_Bounds(t *testing.T) {
	srv := rpcServer(t, nil)
	sess := clientConn(t, srv)
	stream, err := sess.OpenStream()
	must.NoError(t, err)
	defer stream.Close()
	_ = stream.SetDeadline(time.Now().Add(20 * time.Second))
	big := make([]byte, maxClientRequestSize+1024)
	go func() {
		_ = codec.NewEncoder(stream, structs.MsgpackHandle).Encode(&rpcRequest{Method: "Node.Register", Body: big})
	}()
	var resp rpcResponse
	err = codec.NewDecoder(bufio.NewReader(stream), structs.MsgpackHandle).Decode(&resp)
	must.Error(t, err)

	// The connection still serves calls of a normal size.
	node := testNode("n1")
	must.NoError(t, registerOverConn(t, sess, node, node.SecretID))
}
