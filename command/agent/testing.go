package agent

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/nomad"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestAgent is an agent running in the test process: one server with Raft in memory, the
// HTTP API on a free loopback port.
type TestAgent struct {
	t     testing.TB
	Agent *Agent
}

// NewTestAgent starts a dev agent on 127.0.0.1 with a free HTTP port, waits until its server
// leads and can commit, and shuts it down when the test ends. cb may change the configuration
// first (for example cfg.ACL.Enabled or cfg.Server.JobTrackedVersions). It runs no client and
// no scheduling worker, so evaluations stay pending and a test sees only its own writes;
// NewTestClientAgent runs both.
func NewTestAgent(t testing.TB, cb func(*Config)) *TestAgent {
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
		Output: testLogWriter{t},
	})
	a, err := NewAgent(cfg, logger)
	must.NoError(t, err)
	t.Cleanup(a.Shutdown)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv := a.Server()
	must.NoError(t, srv.WaitForLeader(ctx))
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
	return &TestAgent{t: t, Agent: a}
}

// NewTestClientAgent starts a test agent that runs jobs: its scheduling worker places
// allocations on its own client, which offers raw_exec and the mock driver. It returns once
// the client's node is registered.
func NewTestClientAgent(t testing.TB, cb func(*Config)) *TestAgent {
	t.Helper()
	ta := NewTestAgent(t, func(c *Config) {
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
	KillTasksAtCleanup(t, ta.Agent)
	return ta
}

// KillTasksAtCleanup ends, once the test is over, the tasks an agent with a state directory
// leaves running at shutdown for its next run to re-attach to.
func KillTasksAtCleanup(t testing.TB, a *Agent) {
	c := a.Client()
	t.Cleanup(func() {
		a.Shutdown()
		for _, pid := range c.TaskPIDs() {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	})
}

// NewTestACLAgent starts a test agent with ACLs enabled and returns it with the secret of a
// bootstrap management token.
func NewTestACLAgent(t testing.TB, cb func(*Config)) (*TestAgent, string) {
	t.Helper()
	ta := NewTestAgent(t, func(c *Config) {
		c.ACL.Enabled = true
		if cb != nil {
			cb(c)
		}
	})
	var reply structs.ACLTokenUpsertResponse
	must.NoError(t, ta.Server().Endpoints.ACL.Bootstrap(&nomad.BootstrapRequest{}, &reply))
	must.SliceNotEmpty(t, reply.Tokens)
	return ta, reply.Tokens[0].SecretID
}

// URL is the agent's HTTP address, such as http://127.0.0.1:41234.
func (ta *TestAgent) URL() string { return "http://" + ta.Agent.HTTPAddr() }

// Server returns the agent's server.
func (ta *TestAgent) Server() *nomad.Server { return ta.Agent.Server() }

// Client returns an official API client for the agent that sends token ("" for none).
func (ta *TestAgent) Client(token string) *api.Client {
	ta.t.Helper()
	c, err := api.NewClient(&api.Config{Address: ta.URL(), SecretID: token})
	must.NoError(ta.t, err)
	ta.t.Cleanup(c.Close)
	return c
}

// testLogWriter sends agent logs to the test's log, shown only for failing or -v tests.
type testLogWriter struct{ t testing.TB }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
