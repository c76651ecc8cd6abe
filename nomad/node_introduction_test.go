package nomad

import (
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/yamux"
	"github.com/nomadfork/nomad/client"
	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/structs"
	"github.com/nomadfork/nomad/tlsutil/tlstest"
	"github.com/shoenig/test/must"
)

// introServer is rpcServer with client_introduction.enforcement set and its log kept.
func introServer(t *testing.T, enforcement string, cb func(*Config)) (*Server, *lockedBuffer) {
	t.Helper()
	logs := &lockedBuffer{}
	srv := rpcServer(t, func(c *Config) {
		c.ClientIntroduction.Enforcement = enforcement
		c.Logger = hclog.New(&hclog.LoggerOptions{Name: "test", Level: hclog.Warn, Output: logs})
		if cb != nil {
			cb(c)
		}
	})
	return srv, logs
}

// introToken asks srv for an introduction token through its endpoint, as the CLI does.
func introToken(t *testing.T, srv *Server, name, pool string, ttl time.Duration) string {
	t.Helper()
	var reply structs.ClientIntroductionTokenResponse
	must.NoError(t, srv.Endpoints.ACL.CreateClientIntroductionToken(&structs.ClientIntroductionTokenRequest{
		TTL: ttl, NodeName: name, NodePool: pool,
	}, &reply))
	return reply.JWT
}

// signedIntroClaims signs claims with srv's active root key, for tokens the endpoint would
// never make (expired, or for a pool that does not exist).
func signedIntroClaims(t *testing.T, srv *Server, name, pool string, iat, exp time.Time) string {
	t.Helper()
	token, err := srv.signJWT(srv.State(), structs.ClientIntroductionClaims{
		NodePool: pool, NodeName: name,
		Claims: jwt.Claims{
			Audience: jwt.Audience{structs.IntroductionTokenAudience},
			IssuedAt: jwt.NewNumericDate(iat), NotBefore: jwt.NewNumericDate(iat), Expiry: jwt.NewNumericDate(exp),
		},
	})
	must.NoError(t, err)
	return token
}

// forgedIntroToken is a well-formed token naming the cluster's active key ID, signed with
// another key: what an attacker who has seen a real token's header can make.
func forgedIntroToken(t *testing.T, srv *Server, name string) string {
	t.Helper()
	key, err := activeRootKey(srv.State())
	must.NoError(t, err)
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	must.NoError(t, err)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: priv},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader(jose.HeaderKey("kid"), key.KeyID))
	must.NoError(t, err)
	t0 := time.Now()
	token, err := jwt.Signed(signer).Claims(structs.ClientIntroductionClaims{
		NodePool: structs.DefaultNodePool, NodeName: name,
		Claims: jwt.Claims{
			Audience: jwt.Audience{structs.IntroductionTokenAudience},
			IssuedAt: jwt.NewNumericDate(t0), NotBefore: jwt.NewNumericDate(t0), Expiry: jwt.NewNumericDate(t0.Add(time.Hour)),
		},
	}).Serialize()
	must.NoError(t, err)
	return token
}

func registerIntroduced(t *testing.T, sess *yamux.Session, node *structs.Node, intro string) error {
	t.Helper()
	var reply structs.NodeUpdateResponse
	return clientRPC(t, sess, "Node.Register", &structs.NodeRegisterRequest{
		Node: node, IntroToken: intro, WriteRequest: structs.WriteRequest{AuthToken: node.SecretID},
	}, &reply)
}

// TestSecurity_ClientIntroduction_StrictRefusesStrangers: with enforcement strict, a node the
// cluster does not know registers over a client connection only with a valid token for its
// name and pool. Every refusal is a 403 that says why, never echoes the token, and leaves
// the Raft log as it was.
func TestSecurity_ClientIntroduction_StrictRefusesStrangers(t *testing.T) {
	srv, _ := introServer(t, structs.NodeIntroductionEnforcementStrict, nil)
	var poolReply structs.GenericResponse
	must.NoError(t, srv.Endpoints.NodePool.UpsertNodePools(&structs.NodePoolUpsertRequest{
		NodePools: []*structs.NodePool{{Name: "edge"}},
	}, &poolReply))
	sess := clientConn(t, srv)
	t0 := time.Now()

	other := testNode("other")
	otherIdentity, _, err := srv.signNodeIdentity(srv.State(), other, time.Hour, t0)
	must.NoError(t, err)

	refused := []struct {
		name  string
		token func(node *structs.Node) string
		want  string
	}{
		{name: "no token", token: func(*structs.Node) string { return "" }, want: "no client introduction token"},
		{name: "expired", token: func(n *structs.Node) string {
			return signedIntroClaims(t, srv, n.Name, "default", t0.Add(-time.Hour), t0.Add(-10*time.Minute))
		}, want: "expired"},
		{name: "another node name", token: func(*structs.Node) string { return introToken(t, srv, "someone-else", "default", 0) }, want: "another node pool or node name"},
		{name: "another node pool", token: func(n *structs.Node) string { return introToken(t, srv, n.Name, "edge", 0) }, want: "another node pool or node name"},
		{name: "forged with another key", token: func(n *structs.Node) string { return forgedIntroToken(t, srv, n.Name) }, want: "not signed by this cluster"},
		{name: "garbage", token: func(*structs.Node) string { return "eyJhbGciOiJSUzI1NiJ9.e30.AAAA" }, want: "not signed by this cluster"},
		{name: "another node's identity", token: func(*structs.Node) string { return otherIdentity }, want: "not signed by this cluster"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			before := srv.raft.LastIndex()
			node := testNode("stranger-" + tc.name)
			token := tc.token(node)
			err := registerIntroduced(t, sess, node, token)
			mustCode(t, 403, err)
			must.StrContains(t, err.Error(), tc.want)
			must.StrContains(t, err.Error(), "nomad node intro create")
			if token != "" {
				must.StrNotContains(t, err.Error(), token)
			}
			got, err := srv.State().NodeByID(nil, node.ID)
			must.NoError(t, err)
			must.Nil(t, got)
			must.Eq(t, before, srv.raft.LastIndex())
		})
	}

	accepted := []struct {
		name  string
		node  *structs.Node
		token func(node *structs.Node) string
	}{
		{name: "token for its name", node: testNode("named"), token: func(n *structs.Node) string { return introToken(t, srv, n.Name, "", time.Minute) }},
		{name: "token for any name of its pool", node: testNode("unnamed"), token: func(*structs.Node) string { return introToken(t, srv, "", "default", 0) }},
		{name: "token for its pool", node: func() *structs.Node { n := testNode("edge-1"); n.NodePool = "edge"; return n }(),
			token: func(n *structs.Node) string { return introToken(t, srv, n.Name, "edge", 0) }},
		// A node the GC removed comes back with the identity the servers gave it.
		{name: "its own node identity", node: testNode("returning"), token: func(n *structs.Node) string {
			id, _, err := srv.signNodeIdentity(srv.State(), n, time.Hour, time.Now())
			must.NoError(t, err)
			return id
		}},
	}
	for _, tc := range accepted {
		t.Run(tc.name, func(t *testing.T) {
			must.NoError(t, registerIntroduced(t, sess, tc.node, tc.token(tc.node)))
			got, err := srv.State().NodeByID(nil, tc.node.ID)
			must.NoError(t, err)
			must.NotNil(t, got)
			// Registered, it re-registers with its secret alone, as after a restart.
			must.NoError(t, registerIntroduced(t, sess, tc.node, ""))
		})
	}
}

// TestSecurity_ClientIntroduction_TokenStaysOutOfRaft: the token a node registered with is a
// secret; the request the leader hands to Raft no longer carries it.
func TestSecurity_ClientIntroduction_TokenStaysOutOfRaft(t *testing.T) {
	srv, _ := introServer(t, structs.NodeIntroductionEnforcementStrict, nil)
	node := testNode("kept-secret")
	token := introToken(t, srv, node.Name, "default", 0)
	args := &structs.NodeRegisterRequest{Node: node, IntroToken: token, WriteRequest: structs.WriteRequest{AuthToken: node.SecretID}}
	var reply structs.NodeUpdateResponse
	must.NoError(t, srv.Endpoints.Node.RegisterClient(args, &reply))
	// args is what raftApply encoded: cleared before, so the entry cannot hold the token.
	must.Eq(t, "", args.IntroToken)
	must.False(t, args.PlainConn)
}

// TestSecurity_ClientIntroduction_WarnAcceptsAndLogs: warn (the default) registers a node
// without a token and logs a warning naming it, once per interval however often strangers try.
func TestSecurity_ClientIntroduction_WarnAcceptsAndLogs(t *testing.T) {
	srv, logs := introServer(t, "", nil)
	must.Eq(t, structs.NodeIntroductionEnforcementWarn, srv.config.ClientIntroduction.Enforcement)
	sess := clientConn(t, srv)

	first := testNode("unintroduced-1")
	must.NoError(t, registerIntroduced(t, sess, first, ""))
	must.StrContains(t, logs.String(), "without a valid client introduction token")
	must.StrContains(t, logs.String(), first.Name)

	second := testNode("unintroduced-2")
	must.NoError(t, registerIntroduced(t, sess, second, forgedIntroToken(t, srv, second.Name)))
	must.StrNotContains(t, logs.String(), second.Name) // held back by the limiter

	third := testNode("introduced")
	must.NoError(t, registerIntroduced(t, sess, third, introToken(t, srv, third.Name, "", 0)))
	must.StrNotContains(t, logs.String(), third.Name)
	for _, n := range []*structs.Node{first, second, third} {
		got, err := srv.State().NodeByID(nil, n.ID)
		must.NoError(t, err)
		must.NotNil(t, got)
	}
}

// TestClientIntroduction_NoneIsSilent: none registers without a token and logs nothing.
func TestClientIntroduction_NoneIsSilent(t *testing.T) {
	srv, logs := introServer(t, structs.NodeIntroductionEnforcementNone, nil)
	node := testNode("quiet")
	must.NoError(t, registerIntroduced(t, clientConn(t, srv), node, ""))
	must.StrNotContains(t, logs.String(), "introduction")
}

// TestSecurity_ClientIntroduction_UpgradeModeNeedsTLSOrToken: rpc_upgrade_mode takes plain
// client connections so that nodes move to TLS, but a new node on one must be introduced
// even with enforcement none; a node registered before keeps re-registering with its secret,
// and a node with a client certificate is held to the configured enforcement only.
func TestSecurity_ClientIntroduction_UpgradeModeNeedsTLSOrToken(t *testing.T) {
	ca := tlstest.NewCA(t, "cluster")
	srv, _ := introServer(t, structs.NodeIntroductionEnforcementNone, func(c *Config) {
		c.EncryptKey = ""
		c.TLS = tlsFor(ca, ca.Issue(t, "s1", []string{"server.global.nomad"}), true)
		c.TLS.RPCUpgradeMode = true
	})
	plain := clientConn(t, srv)

	before := srv.raft.LastIndex()
	stranger := testNode("plain-stranger")
	// PlainConn sent by the client is overwritten by the server: claiming TLS does not help.
	var reply structs.NodeUpdateResponse
	err := clientRPC(t, plain, "Node.Register", &structs.NodeRegisterRequest{
		Node: stranger, PlainConn: false, WriteRequest: structs.WriteRequest{AuthToken: stranger.SecretID},
	}, &reply)
	mustCode(t, 403, err)
	must.StrContains(t, err.Error(), "rpc_upgrade_mode")
	must.Eq(t, before, srv.raft.LastIndex())

	introduced := testNode("plain-introduced")
	must.NoError(t, registerIntroduced(t, plain, introduced, introToken(t, srv, introduced.Name, "", 0)))

	tlsSess, err := tlsClientSession(t, srv, ca, ca.Issue(t, "c1", []string{"client.global.nomad"}))
	must.NoError(t, err)
	known := testNode("registered-over-tls")
	must.NoError(t, registerIntroduced(t, tlsSess, known, ""))
	// The same node, moving back and forth during the upgrade, is known: its secret suffices.
	must.NoError(t, registerIntroduced(t, plain, known, ""))
}

// TestClientIntroduction_TokenSurvivesForwarding: a follower forwards the registration to the
// leader in msgpack; the token and the connection's kind must arrive (json:"-" alone would
// drop them on the way, and the leader would refuse an introduced node).
func TestClientIntroduction_TokenSurvivesForwarding(t *testing.T) {
	in := &structs.NodeRegisterRequest{Node: testNode("fwd"), IntroToken: "eyJ.intro.x", PlainConn: true}
	body, err := encodeBody(in)
	must.NoError(t, err)
	var out structs.NodeRegisterRequest
	must.NoError(t, structs.Decode(body, &out))
	must.Eq(t, "eyJ.intro.x", out.IntroToken)
	must.True(t, out.PlainConn)
}

// TestSecurity_ClientIntroduction_ClientAgentJoins: a client agent (the client package over a
// client connection, as a client-only agent runs it) joins a strict server with a token given
// in its configuration or left in its state directory, and without one is told why, over and
// over, and never registered.
func TestSecurity_ClientIntroduction_ClientAgentJoins(t *testing.T) {
	srv, _ := introServer(t, structs.NodeIntroductionEnforcementStrict, nil)
	cases := []struct {
		name      string
		configure func(cfg *client.Config)
		joins     bool
	}{
		{name: "no token", configure: func(*client.Config) {}},
		{name: "token in configuration", joins: true, configure: func(cfg *client.Config) {
			cfg.IntroToken = introToken(t, srv, cfg.Name, "", 0)
		}},
		{name: "token file in the state directory", joins: true, configure: func(cfg *client.Config) {
			must.NoError(t, os.WriteFile(filepath.Join(cfg.StateDir, "intro_token.jwt"),
				[]byte(introToken(t, srv, cfg.Name, "", 0)+"\n"), 0o600))
		}},
		{name: "token for another node", configure: func(cfg *client.Config) {
			cfg.IntroToken = introToken(t, srv, "not-"+cfg.Name, "", 0)
		}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logs := &lockedBuffer{}
			cfg := &client.Config{
				Name: fmt.Sprintf("agent-%d", i), StateDir: t.TempDir(), AllocDir: t.TempDir(),
				Drivers: []drivers.Driver{drivers.Mock{}}, RetryInterval: 50 * time.Millisecond, MaxQueryTime: 2 * time.Second,
				Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: logs}),
			}
			tc.configure(cfg)
			rpc, err := client.NewRPCServers([]string{srv.RaftAddr()}, ClientYamuxConfig(), nil, nil)
			must.NoError(t, err)
			t.Cleanup(rpc.Close)
			c, err := client.New(cfg, rpc)
			must.NoError(t, err)
			t.Cleanup(c.Shutdown)
			if tc.joins {
				select {
				case <-c.Registered():
				case <-time.After(15 * time.Second):
					t.Fatalf("the client never registered: %s", logs.String())
				}
				node, err := srv.State().NodeByID(nil, c.NodeID())
				must.NoError(t, err)
				must.NotNil(t, node)
				return
			}
			// Refused at least twice: the client keeps trying and logs the servers' reason.
			waitFor(t, 10*time.Second, func() bool {
				return strings.Count(logs.String(), "nomad node intro create") >= 2
			})
			select {
			case <-c.Registered():
				t.Fatal("a client without a valid token registered")
			default:
			}
			node, err := srv.State().NodeByID(nil, c.NodeID())
			must.NoError(t, err)
			must.Nil(t, node)
		})
	}
}
