package agent

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

const gossipTestKey = "5NEn9gQSVj1t0aRft5oiXlqXUMOLtueEDpybZxbiFt4="

// gossipAgent is a server agent with Raft on its RPC port and gossip on its serf port.
type gossipAgent struct {
	*Agent
	serfAddr string
}

func (g *gossipAgent) client(t *testing.T) *api.Client {
	t.Helper()
	c, err := api.NewClient(&api.Config{Address: "http://" + g.HTTPAddr()})
	must.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// startGossipAgent starts a server agent named name. A dev agent with join addresses puts
// Raft on TCP and runs gossip, with dev timeouts; join nil makes it join itself, which is
// how a first server with bootstrap_expect = 1 gets the same.
func startGossipAgent(t *testing.T, name, key string, expect int, join []string) *gossipAgent {
	t.Helper()
	cfg := DevConfig()
	cfg.Name = name
	cfg.LogLevel = "WARN"
	cfg.Client.Enabled = false
	cfg.Server.NumSchedulers = 0
	cfg.Ports.HTTP = freePort(t)
	cfg.Ports.RPC = freePort(t)
	cfg.Ports.Serf = freePort(t)
	cfg.Server.BootstrapExpect = expect
	cfg.Server.EncryptKey = key
	serfAddr := fmt.Sprintf("127.0.0.1:%d", cfg.Ports.Serf)
	if join == nil {
		join = []string{serfAddr}
	}
	cfg.Server.RetryJoin = join
	cfg.Server.RetryInterval = 100 * time.Millisecond
	a, err := NewAgent(cfg, hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: testLogWriter{t}}))
	must.NoError(t, err)
	t.Cleanup(a.Shutdown)
	return &gossipAgent{Agent: a, serfAddr: serfAddr}
}

func waitFor(t *testing.T, timeout time.Duration, cond func() bool) {
	t.Helper()
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(cond), wait.Timeout(timeout), wait.Gap(50*time.Millisecond)))
}

func TestAgentEndpoint_JoinMembersForceLeave(t *testing.T) {
	first := startGossipAgent(t, "first", gossipTestKey, 1, nil)
	waitFor(t, 10*time.Second, first.Server().LeaderReady)
	c := first.client(t)

	// A server that joins nobody yet and never bootstraps (bootstrap_expect 0 with a join
	// address that answers nothing).
	second := startGossipAgent(t, "second", gossipTestKey, 0, []string{"127.0.0.1:1"})
	n, err := c.Agent().Join(second.serfAddr)
	must.NoError(t, err)
	must.Eq(t, 1, n)

	_, err = c.Agent().Join("127.0.0.1:1")
	must.ErrorContains(t, err, "failed joining")

	members, err := c.Agent().Members()
	must.NoError(t, err)
	must.Eq(t, "first", members.ServerName)
	must.Eq(t, "global", members.ServerRegion)
	must.Len(t, 2, members.Members)
	names := map[string]*api.AgentMember{}
	for _, m := range members.Members {
		names[m.Name] = m
	}
	must.MapContainsKeys(t, names, []string{"first.global", "second.global"})
	m := names["second.global"]
	must.Eq(t, "alive", m.Status)
	must.Eq(t, "127.0.0.1", m.Addr)
	must.Eq(t, uint16(second.Config().Ports.Serf), m.Port)
	must.Eq(t, "nomad", m.Tags["role"])
	must.Eq(t, fmt.Sprint(second.Config().Ports.RPC), m.Tags["port"])
	must.Eq(t, second.Server().Config().NodeID, m.Tags["id"])
	must.Positive(t, m.ProtocolMax)

	// Gossip found it and its RPC port proved the key: the leader made it a voter.
	waitFor(t, 10*time.Second, func() bool {
		peers, err := c.Status().Peers()
		return err == nil && len(peers) == 2
	})

	// A third, so that one can fail without costing the quorum.
	third := startGossipAgent(t, "third", gossipTestKey, 0, []string{first.serfAddr})
	waitFor(t, 10*time.Second, func() bool {
		peers, err := c.Status().Peers()
		return err == nil && len(peers) == 3
	})

	// Stopped, it fails in gossip; force-leave with prune drops it from the member list, and
	// it is out of Raft (autopilot's cleanup, or the leave).
	third.Shutdown()
	waitFor(t, 20*time.Second, func() bool {
		ms, err := c.Agent().Members()
		if err != nil {
			return false
		}
		for _, m := range ms.Members {
			if m.Name == "third.global" {
				return m.Status == "failed"
			}
		}
		return false
	})
	must.NoError(t, c.Agent().ForceLeaveWithOptions("third.global", api.ForceLeaveOpts{Prune: true}))
	waitFor(t, 10*time.Second, func() bool {
		ms, err := c.Agent().Members()
		return err == nil && len(ms.Members) == 2
	})
	waitFor(t, 10*time.Second, func() bool {
		peers, err := c.Status().Peers()
		return err == nil && len(peers) == 2
	})
	// Unknown names are not an error, as upstream.
	must.NoError(t, c.Agent().ForceLeave("nope"))
}

func TestAgentEndpoint_GossipWithAnotherKeyCannotJoin(t *testing.T) {
	first := startGossipAgent(t, "first", gossipTestKey, 1, nil)
	waitFor(t, 10*time.Second, first.Server().LeaderReady)
	c := first.client(t)

	// Encrypted gossip: a server with another key cannot join it.
	stranger := startGossipAgent(t, "stranger", "ksFUw9rt21uXYt+ZAMfcsWXMpDNzX+W2y+p1i662DcM=", 1, nil)
	_, err := c.Agent().Join(stranger.serfAddr)
	must.ErrorContains(t, err, "failed joining")
	members, err := c.Agent().Members()
	must.NoError(t, err)
	must.Len(t, 1, members.Members)
	peers, err := c.Status().Peers()
	must.NoError(t, err)
	must.Len(t, 1, peers)
}

func TestAgentEndpoint_JoinNeedsAnAddress(t *testing.T) {
	ta := NewTestAgent(t, nil)
	resp, err := ta.Client("").Raw().Response("/v1/agent/join", nil) // GET: wrong method
	if resp != nil {
		resp.Close()
	}
	must.ErrorContains(t, err, "405")
	_, err = ta.Client("").Raw().Write("/v1/agent/join", nil, nil, nil)
	must.ErrorContains(t, err, "missing address")
	_, err = ta.Client("").Raw().Write("/v1/agent/force-leave?node=x&prune=maybe", nil, nil, nil)
	must.ErrorContains(t, err, "prune")
}

func TestServerConfig_GossipsTheBuild(t *testing.T) {
	old := Build
	t.Cleanup(func() { Build = old })
	Build = "9.9.9-test"
	cfg := DevConfig()
	cfg.NormalizeAddrs()
	must.Eq(t, "9.9.9-test", serverConfig(cfg, nil).Build)
	Build = ""
	must.Eq(t, "0.1.0-fork", serverConfig(cfg, nil).Build)
}
