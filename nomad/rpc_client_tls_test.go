package nomad

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"github.com/nomadfork/nomad/nomad/transport"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/yamux"
	"github.com/nomadfork/nomad/structs"
	"github.com/nomadfork/nomad/tlsutil"
	"github.com/nomadfork/nomad/tlsutil/tlstest"
	"github.com/shoenig/test/must"
)

// tlsClientSession opens a client agent's session to srv over TLS presenting files.
func tlsClientSession(t *testing.T, srv *Server, ca *tlstest.CA, files tlstest.Files) (*yamux.Session, error) {
	t.Helper()
	ct, err := transport.NewClientTLS(&transport.TLSConfig{
		Config:               tlsutil.Config{CAFile: ca.CertFile, CertFile: files.CertFile, KeyFile: files.KeyFile},
		VerifyServerHostname: true,
	}, "global")
	must.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := ct.Dial(ctx, srv.RaftAddr())
	if err != nil {
		return nil, err
	}
	sess, err := yamux.Client(conn, ClientYamuxConfig())
	must.NoError(t, err)
	t.Cleanup(func() { _ = sess.Close() })
	return sess, nil
}

// TestSecurity_ClientAgentsNeedTLSWhenTheRPCPortHasIt: with tls.rpc a client agent's
// connection is TLS with a certificate from the CA that names a node (client.<region>.nomad,
// or a server's). A plain connection, a CLI certificate and another CA's certificate register
// nothing and leave the Raft log as it was; rpc_upgrade_mode still takes plain clients while
// they move to TLS.
func TestSecurity_ClientAgentsNeedTLSWhenTheRPCPortHasIt(t *testing.T) {
	ca := tlstest.NewCA(t, "cluster")
	other := tlstest.NewCA(t, "other")
	serverFiles := ca.Issue(t, "s1", []string{"server.global.nomad"})
	srv := rpcServer(t, func(c *Config) {
		c.EncryptKey = ""
		c.TLS = tlsFor(ca, serverFiles, true)
	})
	before := srv.raft.LastIndex()

	// The attacker skips its own check of the server's certificate, so only the server decides.
	attacker := func(files tlstest.Files) func(t *testing.T) *yamux.Session {
		return func(t *testing.T) *yamux.Session {
			pair, err := tls.LoadX509KeyPair(files.CertFile, files.KeyFile)
			must.NoError(t, err)
			conn, err := rawTLSDialer([]tls.Certificate{pair})(srv.RaftAddr(), transport.KindClientAgent, 5*time.Second)
			if err != nil {
				return nil // refused during the handshake
			}
			sess, err := yamux.Client(conn, ClientYamuxConfig())
			must.NoError(t, err)
			t.Cleanup(func() { _ = sess.Close() })
			return sess
		}
	}
	refused := []struct {
		name string
		open func(t *testing.T) *yamux.Session
	}{
		{name: "plain TCP", open: func(t *testing.T) *yamux.Session { return clientConn(t, srv) }},
		{name: "CLI certificate", open: attacker(ca.Issue(t, "cli", []string{"cli.global.nomad"}))},
		{name: "another region's client certificate", open: attacker(ca.Issue(t, "eu", []string{"client.europe.nomad"}))},
		{name: "another CA", open: attacker(other.Issue(t, "c", []string{"client.global.nomad"}))},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			sess := tc.open(t)
			if sess == nil {
				return
			}
			node := testNode("intruder-" + strings.ReplaceAll(tc.name, " ", "-"))
			err := registerOverConnErr(sess, node)
			must.Error(t, err)
			got, err := srv.State().NodeByID(nil, node.ID)
			must.NoError(t, err)
			must.Nil(t, got)
		})
	}
	must.Eq(t, before, srv.raft.LastIndex())

	for _, name := range []string{"client.global.nomad", "server.global.nomad"} {
		t.Run("accepted "+name, func(t *testing.T) {
			sess, err := tlsClientSession(t, srv, ca, ca.Issue(t, name, []string{name}))
			must.NoError(t, err)
			node := testNode("n-" + name)
			must.NoError(t, registerOverConn(t, sess, node, node.SecretID))
		})
	}
}

// TestSecurity_ClientAgentsPlainOnlyInUpgradeMode: rpc_upgrade_mode still serves plain client
// connections.
func TestSecurity_ClientAgentsPlainOnlyInUpgradeMode(t *testing.T) {
	ca := tlstest.NewCA(t, "cluster")
	srv := rpcServer(t, func(c *Config) {
		c.EncryptKey = ""
		c.TLS = tlsFor(ca, ca.Issue(t, "s1", []string{"server.global.nomad"}), true)
		c.TLS.RPCUpgradeMode = true
	})
	// A node registered before the upgrade keeps working over plain TCP while it moves to
	// TLS; a new one needs an introduction token there (node_introduction_test.go).
	node := testNode("migrating")
	var reply structs.NodeUpdateResponse
	must.NoError(t, srv.Endpoints.Node.Register(&structs.NodeRegisterRequest{Node: node.Copy()}, &reply))
	must.NoError(t, registerOverConn(t, clientConn(t, srv), node, node.SecretID))
}

// registerOverConnErr is registerOverConn for a session the server may have closed: any
// failure to call is the refusal the caller expects.
func registerOverConnErr(sess *yamux.Session, node *structs.Node) error {
	stream, err := sess.OpenStream()
	if err != nil {
		return err
	}
	defer stream.Close()
	_ = stream.SetDeadline(time.Now().Add(10 * time.Second))
	body, err := encodeBody(&structs.NodeRegisterRequest{Node: node, WriteRequest: structs.WriteRequest{AuthToken: node.SecretID}})
	if err != nil {
		return err
	}
	if err := codec.NewEncoder(stream, structs.MsgpackHandle).Encode(&rpcRequest{Method: "Node.Register", Body: body}); err != nil {
		return err
	}
	var resp rpcResponse
	if err := codec.NewDecoder(bufio.NewReader(stream), structs.MsgpackHandle).Decode(&resp); err != nil {
		return err
	}
	if resp.Error != "" {
		return errors.New(resp.Error)
	}
	return nil
}
