package agent

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// newRPCServerAgent is a test agent whose server listens on a real RPC port (not a dev agent's
// in-memory Raft), with a scheduling worker and no client: client-only agents connect to it.
func newRPCServerAgent(t *testing.T, cb func(*Config)) (*TestAgent, string) {
	t.Helper()
	port := freePort(t)
	ta := NewTestAgent(t, func(c *Config) {
		c.DevMode = false
		c.Ports.RPC = port
		c.Ports.Serf = freePort(t)
		c.Server.NumSchedulers = 1
		if cb != nil {
			cb(c)
		}
	})
	return ta, net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// newClientOnlyAgent starts an agent that runs only a client, reaching the servers at addrs
// over their RPC port, with raw_exec and the mock driver.
func newClientOnlyAgent(t *testing.T, addrs ...string) *Agent {
	t.Helper()
	return newClientOnlyAgentWith(t, nil, addrs...)
}

// newClientOnlyAgentWith is newClientOnlyAgent with cb changing the configuration first.
func newClientOnlyAgentWith(t *testing.T, cb func(*Config), addrs ...string) *Agent {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Name = "client-" + strings.NewReplacer("/", "-").Replace(t.Name())
	cfg.BindAddr = "127.0.0.1"
	cfg.DataDir = t.TempDir()
	cfg.Ports = &Ports{HTTP: freePort(t), RPC: freePort(t), Serf: freePort(t)}
	cfg.Server.Enabled = false
	cfg.Client.Enabled = true
	cfg.Client.Servers = addrs
	cfg.Plugins = append(cfg.Plugins,
		&PluginConfig{Name: "mock_driver"},
		&PluginConfig{Name: "raw_exec", Config: map[string]any{"enabled": true}})
	cfg.LogLevel = "WARN"
	if cb != nil {
		cb(cfg)
	}
	cfg.NormalizeAddrs()
	must.NoError(t, cfg.Validate())
	a, err := NewAgent(cfg, hclog.New(&hclog.LoggerOptions{Name: "client-agent", Level: hclog.Warn, Output: testLogWriter{t}}))
	must.NoError(t, err)
	t.Cleanup(a.Shutdown)
	KillTasksAtCleanup(t, a)
	select {
	case <-a.Client().Registered():
	case <-time.After(20 * time.Second):
		t.Fatalf("the client-only agent never registered")
	}
	return a
}

// TestClientOnlyAgent_RunsAllocations: a client-only agent registers over the RPC port, runs
// what the server places on it and reports its status; exec and logs sent to the server reach
// it over the client's own connection (it advertises no HTTP address and opens no port for
// them).
func TestClientOnlyAgent_RunsAllocations(t *testing.T) {
	ta, rpcAddr := newRPCServerAgent(t, nil)
	ca := newClientOnlyAgent(t, rpcAddr)
	c := ta.Client("")

	node, _, err := c.Nodes().Info(ca.Client().NodeID(), nil)
	must.NoError(t, err)
	must.Eq(t, "ready", node.Status)
	must.Eq(t, "", node.HTTPAddr)

	alloc := runningAlloc(t, c, shJob("talk", "service", "echo line1; echo oops >&2; exec sleep 600"))
	must.Eq(t, ca.Client().NodeID(), alloc.NodeID)

	t.Run("logs through the server", func(t *testing.T) {
		eventually(t, 10*time.Second, "the task's output", func() (bool, string) {
			res := doHTTP(t, ta, "GET", logsPath(alloc.ID, url.Values{"task": {"sh"}, "type": {"stderr"}, "plain": {"true"}}), nil, nil)
			return res.body == "oops\n", res.body
		})
		out, err := officialLogs(t, c, alloc, "sh", "stdout", false, "start", 0)
		must.NoError(t, err)
		must.Eq(t, "line1\n", out)
		res := doHTTP(t, ta, "GET", logsPath(alloc.ID, url.Values{"task": {"nope"}, "type": {"stdout"}}), nil, nil)
		must.Eq(t, 404, res.status)
	})
	t.Run("exec through the server", func(t *testing.T) {
		res := execOfficial(t, c, alloc, "sh", false, "", "/bin/sh", "-c", "echo hi; echo err >&2; exit 3")
		must.NoError(t, res.err)
		must.Eq(t, 3, res.code)
		must.Eq(t, "hi\n", res.stdout)
		must.Eq(t, "err\n", res.stderr)
		res = execOfficial(t, c, alloc, "sh", false, "abc", "/bin/cat")
		must.NoError(t, res.err)
		must.Eq(t, "abc", res.stdout)
	})
	t.Run("the client agent's own API answers from the servers", func(t *testing.T) {
		cc, err := api.NewClient(&api.Config{Address: "http://" + ca.HTTPAddr()})
		must.NoError(t, err)
		jobs, _, err := cc.Jobs().List(nil)
		must.NoError(t, err)
		must.SliceLen(t, 1, jobs)
		must.Eq(t, "talk", jobs[0].ID)
	})

	// The task's status reaches the server over RPC when the task ends.
	_, _, err = c.Jobs().Deregister("talk", false, nil)
	must.NoError(t, err)
	eventually(t, 20*time.Second, "the allocation to complete", func() (bool, string) {
		a, _, err := c.Allocations().Info(alloc.ID, nil)
		if err != nil {
			return false, err.Error()
		}
		return a.ClientStatus == "complete" || a.ClientStatus == "failed", a.ClientStatus
	})
}

// TestClientOnlyAgent_ACLs: with ACLs on, the client registers and heartbeats with its node
// secret, no token; exec and logs through the server are decided by the caller's token there.
func TestClientOnlyAgent_ACLs(t *testing.T) {
	ta, rpcAddr := newRPCServerAgent(t, func(c *Config) { c.ACL.Enabled = true })
	token, _, err := ta.Client("").ACLTokens().Bootstrap(nil)
	must.NoError(t, err)
	root := token.SecretID
	ca := newClientOnlyAgent(t, rpcAddr)
	c := ta.Client(root)
	node, _, err := c.Nodes().Info(ca.Client().NodeID(), nil)
	must.NoError(t, err)
	must.Eq(t, "ready", node.Status)

	alloc := runningAlloc(t, c, shJob("talk", "service", "echo line1; exec sleep 600"))
	anon := ta.Client("")
	_, err = officialLogs(t, anon, alloc, "sh", "stdout", false, "start", 0)
	status, _ := responseError(t, err)
	must.Eq(t, 403, status)
	res := execOfficial(t, anon, alloc, "sh", false, "", "/bin/true")
	must.Error(t, res.err)
	// Running is reported once the task's shim started; its output follows.
	eventually(t, 10*time.Second, "the task's output through the server", func() (bool, string) {
		out, err := officialLogs(t, c, alloc, "sh", "stdout", false, "start", 0)
		return err == nil && out == "line1\n", fmt.Sprintf("%q %v", out, err)
	})
}

// TestSecurity_ClientOnlyAgent_JoinsStrictServerWithIntroToken: the agent hands its
// -client-intro-token (client.IntroToken) to its client, which a strict server requires of a
// node it does not know.
func TestSecurity_ClientOnlyAgent_JoinsStrictServerWithIntroToken(t *testing.T) {
	ta, addr := newRPCServerAgent(t, func(c *Config) { c.Server.ClientIntroduction.Enforcement = "strict" })
	name := "client-" + strings.NewReplacer("/", "-").Replace(t.Name())
	var reply structs.ClientIntroductionTokenResponse
	must.NoError(t, ta.Server().Endpoints.ACL.CreateClientIntroductionToken(&structs.ClientIntroductionTokenRequest{NodeName: name}, &reply))
	a := newClientOnlyAgentWith(t, func(c *Config) { c.Client.IntroToken = reply.JWT }, addr)
	node, err := ta.Server().State().NodeByID(nil, a.Client().NodeID())
	must.NoError(t, err)
	must.NotNil(t, node)
	must.Eq(t, name, node.Name)
}
