package agent

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/nomad"
	"github.com/nomadfork/nomad/structs"
)

// HarnessAgent is an agent running in the test process: one server with Raft in memory, the
// HTTP API on a free loopback port. The harness takes nomad.HarnessT rather than testing.TB
// so that the nomad binary, which links this package, does not link the testing package; the
// tests reach it through agenttest or this package's own test twins.
type HarnessAgent struct {
	t     nomad.HarnessT
	Agent *Agent
}

// StartHarnessAgent starts a dev agent on 127.0.0.1 with a free HTTP port, waits until its
// server leads and can commit, and shuts it down when the test ends. cb may change the
// configuration first (for example cfg.ACL.Enabled or cfg.Server.JobTrackedVersions). It runs
// no client and no scheduling worker, so evaluations stay pending and a test sees only its own
// writes; StartHarnessClientAgent runs both.
func StartHarnessAgent(t nomad.HarnessT, cb func(*Config)) *HarnessAgent {
	t.Helper()
	cfg := DevConfig()
	cfg.Name = "test-" + strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	cfg.BindAddr = "127.0.0.1"
	cfg.Ports.HTTP = 0
	cfg.LogLevel = "WARN"
	cfg.Client.Enabled = false
	cfg.Server.NumSchedulers = 0
	if cb != nil {
		cb(cfg)
	}
	logger := hclog.NewInterceptLogger(&hclog.LoggerOptions{
		Name:   "agent",
		Level:  hclog.LevelFromString(cfg.LogLevel),
		Output: harnessLogWriter{t},
	})
	a, err := NewAgent(cfg, logger)
	if err != nil {
		t.Fatalf("starting the test agent: %v", err)
	}
	t.Cleanup(a.Shutdown)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv := a.Server()
	if err := srv.WaitForLeader(ctx); err != nil {
		t.Fatalf("waiting for the test agent's leader: %v", err)
	}
	// A leader is known before it can commit: wait until this server holds the leadership.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !srv.IsLeader() {
		select {
		case <-ctx.Done():
			t.Fatalf("test agent never became leader")
		case <-tick.C:
		}
	}
	return &HarnessAgent{t: t, Agent: a}
}

// StartHarnessClientAgent starts a test agent that runs jobs: its scheduling worker places
// allocations on its own client, which offers raw_exec and the mock driver. It returns once
// the client's node is registered.
func StartHarnessClientAgent(t nomad.HarnessT, cb func(*Config)) *HarnessAgent {
	t.Helper()
	ta := StartHarnessAgent(t, func(c *Config) {
		c.Client.Enabled = true
		c.Server.NumSchedulers = 1
		c.Plugins = append(c.Plugins, &PluginConfig{Name: "mock_driver"})
		if cb != nil {
			cb(c)
		}
	})
	select {
	case <-ta.Agent.Client().Registered():
	case <-time.After(10 * time.Second):
		t.Fatalf("test agent's client never registered")
	}
	KillHarnessTasksAtCleanup(t, ta.Agent)
	return ta
}

// KillHarnessTasksAtCleanup ends, once the test is over, the tasks an agent with a state
// directory leaves running at shutdown for its next run to re-attach to.
func KillHarnessTasksAtCleanup(t nomad.HarnessT, a *Agent) {
	c := a.Client()
	t.Cleanup(func() {
		a.Shutdown()
		for _, pid := range c.TaskPIDs() {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	})
}

// StartHarnessACLAgent starts a test agent with ACLs enabled and returns it with the secret of
// a bootstrap management token.
func StartHarnessACLAgent(t nomad.HarnessT, cb func(*Config)) (*HarnessAgent, string) {
	t.Helper()
	ta := StartHarnessAgent(t, func(c *Config) {
		c.ACL.Enabled = true
		if cb != nil {
			cb(c)
		}
	})
	var reply structs.ACLTokenUpsertResponse
	if err := ta.Server().Endpoints.ACL.Bootstrap(&nomad.BootstrapRequest{}, &reply); err != nil {
		t.Fatalf("bootstrapping ACLs: %v", err)
	}
	if len(reply.Tokens) == 0 {
		t.Fatalf("ACL bootstrap returned no token")
	}
	return ta, reply.Tokens[0].SecretID
}

// URL is the agent's HTTP address, such as http://127.0.0.1:41234.
func (ta *HarnessAgent) URL() string { return "http://" + ta.Agent.HTTPAddr() }

// Server returns the agent's server.
func (ta *HarnessAgent) Server() *nomad.Server { return ta.Agent.Server() }

// Client returns an official API client for the agent that sends token ("" for none).
func (ta *HarnessAgent) Client(token string) *api.Client {
	ta.t.Helper()
	c, err := api.NewClient(&api.Config{Address: ta.URL(), SecretID: token})
	if err != nil {
		ta.t.Fatalf("API client for the test agent: %v", err)
	}
	ta.t.Cleanup(c.Close)
	return c
}

// harnessLogWriter sends agent logs to the test's log, shown only for failing or -v tests.
type harnessLogWriter struct{ t nomad.HarnessT }

func (w harnessLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// StartHarnessServers starts n server agents (named server-0 … server-n-1) on 127.0.0.1 that
// find each other through gossip with a cluster key: the first bootstraps alone and leads,
// the others join it. It returns once every server is in the first's Raft configuration and
// its gossip pool. cb may change each configuration (i is its index) before it starts.
func StartHarnessServers(t nomad.HarnessT, n int, cb func(i int, cfg *Config)) []*HarnessAgent {
	t.Helper()
	var out []*HarnessAgent
	var firstSerf string
	for i := 0; i < n; i++ {
		cfg := DevConfig()
		cfg.Name = fmt.Sprintf("server-%d", i)
		cfg.BindAddr = "127.0.0.1"
		cfg.LogLevel = "WARN"
		cfg.Client.Enabled = false
		cfg.Server.NumSchedulers = 0
		cfg.Ports.HTTP = 0
		cfg.Ports.RPC = harnessFreePort(t)
		cfg.Ports.Serf = harnessFreePort(t)
		cfg.Server.EncryptKey = harnessClusterKey
		serf := net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.Ports.Serf))
		cfg.Server.BootstrapExpect = 0
		if i == 0 {
			// A dev agent with a join address puts Raft on TCP and runs gossip; the first
			// joins itself.
			cfg.Server.BootstrapExpect = 1
			firstSerf = serf
		}
		cfg.Server.RetryJoin = []string{firstSerf}
		cfg.Server.RetryInterval = 100 * time.Millisecond
		if cb != nil {
			cb(i, cfg)
		}
		logger := hclog.NewInterceptLogger(&hclog.LoggerOptions{Name: cfg.Name, Level: hclog.LevelFromString(cfg.LogLevel), Output: harnessLogWriter{t}})
		a, err := NewAgent(cfg, logger)
		if err != nil {
			t.Fatalf("starting test server %d: %v", i, err)
		}
		t.Cleanup(a.Shutdown)
		out = append(out, &HarnessAgent{t: t, Agent: a})
		if i == 0 {
			harnessWait(t, "the first test server to lead", a.Server().LeaderReady)
		}
	}
	first := out[0].Server()
	harnessWait(t, "every test server to join", func() bool {
		peers, err := first.Peers()
		return err == nil && len(peers) == n && len(first.Serf().Members()) == n
	})
	return out
}

// harnessClusterKey is the cluster key (server.encrypt) of test servers.
const harnessClusterKey = "5NEn9gQSVj1t0aRft5oiXlqXUMOLtueEDpybZxbiFt4="

// harnessFreePort is a loopback TCP port free at the time of the call.
func harnessFreePort(t nomad.HarnessT) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// harnessWait polls cond until it holds, failing the test after 15 seconds.
func harnessWait(t nomad.HarnessT, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s", what)
		}
		<-tick.C
	}
}
