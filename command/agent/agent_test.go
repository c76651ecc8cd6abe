package agent

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// freePort finds a loopback port nobody listens on right now, for configurations that must
// name a real port (Validate rejects 0).
// handedOutPorts are the ports freePort already gave: the kernel may offer a closed port
// again at once, and two ports of one agent must differ.
var handedOutPorts sync.Map

func freePort(t *testing.T) int {
	t.Helper()
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		must.NoError(t, err)
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if _, given := handedOutPorts.LoadOrStore(port, true); !given {
			return port
		}
	}
}

func TestAgent_NeedsServer(t *testing.T) {
	cfg := DevConfig()
	cfg.Server.Enabled = false
	_, err := NewAgent(cfg, nil)
	must.ErrorContains(t, err, "server")
}

// TestAgent_PersistentServer runs a non-dev agent: Raft over TCP on the RPC port and state in
// the data dir, so a restarted agent finds its jobs again.
func TestAgent_PersistentServer(t *testing.T) {
	dataDir := t.TempDir()
	cfg := DefaultConfig()
	cfg.Name = "persistent"
	cfg.BindAddr = "127.0.0.1"
	cfg.DataDir = dataDir
	cfg.Ports = &Ports{HTTP: 0, RPC: freePort(t), Serf: freePort(t)}
	cfg.Server.Enabled = true
	cfg.Server.BootstrapExpect = 1
	logger := hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: testLogWriter{t}})

	start := func() (*Agent, *api.Client) {
		t.Helper()
		a, err := NewAgent(cfg, logger)
		must.NoError(t, err)
		t.Cleanup(a.Shutdown)
		must.Eq(t, cfg.Advertise.RPC, a.Server().RaftAddr())
		c, err := api.NewClient(&api.Config{Address: "http://" + a.HTTPAddr()})
		must.NoError(t, err)
		t.Cleanup(c.Close)
		waitForWrites(t, c)
		return a, c
	}
	cfg.NormalizeAddrs()

	a, c := start()
	_, _, err := c.Jobs().Register(testJob("web"), nil)
	must.NoError(t, err)
	leader, err := c.Status().Leader()
	must.NoError(t, err)
	must.Eq(t, cfg.Advertise.RPC, leader)
	a.Shutdown()
	a.Shutdown() // twice is fine

	_, c = start()
	job, _, err := c.Jobs().Info("web", nil)
	must.NoError(t, err)
	must.Eq(t, "web", *job.ID)
}

// waitForWrites polls until the agent has a leader that answers reads, as a started agent's
// users would.
func waitForWrites(t *testing.T, c *api.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		leader, err := c.Status().Leader()
		if err == nil && leader != "" {
			if _, _, err := c.Jobs().List(nil); err == nil {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("agent never had a leader: last error %v", err)
		case <-tick.C:
		}
	}
}
