//go:build e2e

package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// TestClientOnlyAgent_ThroughServer runs one server process on 127.0.0.1 and one client-only
// agent process on 127.0.0.2 that reaches it over the RPC port: a raw_exec job runs on the
// client, and its logs and an exec sent to the server come back from the client over the
// client's own connection.
func TestClientOnlyAgent_ThroughServer(t *testing.T) {
	serverCfg, serverURL := writeConfig(t, t.TempDir(), "")
	server := startAgent(t, serverCfg, serverURL)
	raw, err := os.ReadFile(serverCfg)
	must.NoError(t, err)
	var rpcPort int
	for _, line := range strings.Split(string(raw), "\n") {
		if _, err := fmt.Sscanf(strings.TrimSpace(line), "rpc  = %d", &rpcPort); err == nil {
			break
		}
	}
	must.Positive(t, rpcPort)

	httpPort := freePort(t)
	clientCfg := fmt.Sprintf(`
name      = "e2e-client"
data_dir  = %q
bind_addr = "127.0.0.2"
ports {
  http = %d
  rpc  = %d
  serf = %d
}
client {
  enabled = true
  servers = ["127.0.0.1:%d"]
}
plugin "raw_exec" {
  config {
    enabled = true
  }
}
`, t.TempDir(), httpPort, freePort(t), freePort(t), rpcPort)
	path := filepath.Join(t.TempDir(), "client.hcl")
	must.NoError(t, os.WriteFile(path, []byte(clientCfg), 0o600))
	startAgentNoWait(t, path, fmt.Sprintf("http://127.0.0.2:%d", httpPort))

	c := server.client()
	var nodeID string
	waitUntil(t, 30*time.Second, "the client's node to be ready", func() bool {
		nodes, _, err := c.Nodes().List(nil)
		if err != nil {
			return false
		}
		for _, n := range nodes {
			if n.Name == "e2e-client" && n.Status == "ready" {
				nodeID = n.ID
				return true
			}
		}
		return false
	})

	job := api.NewServiceJob("talk", "talk", "global", 50)
	job.Datacenters = []string{"dc1"}
	task := api.NewTask("sh", "raw_exec")
	task.Config = map[string]any{"command": "/bin/sh", "args": []string{"-c", "echo hello from the client; exec sleep 600"}}
	job.AddTaskGroup(api.NewTaskGroup("g", 1).AddTask(task))
	_, _, err = c.Jobs().Register(job, nil)
	must.NoError(t, err)
	var allocID string
	waitUntil(t, 30*time.Second, "the allocation to run", func() bool {
		allocs, _, err := c.Jobs().Allocations("talk", false, nil)
		if err != nil || len(allocs) != 1 || allocs[0].ClientStatus != "running" {
			return false
		}
		allocID = allocs[0].ID
		must.Eq(t, nodeID, allocs[0].NodeID)
		return true
	})

	var body string
	waitUntil(t, 20*time.Second, "the logs through the server", func() bool {
		resp, err := http.Get(serverURL + "/v1/client/fs/logs/" + allocID + "?task=sh&type=stdout&plain=true")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		return resp.StatusCode == 200 && body == "hello from the client\n"
	})

	// The CLI, pointed at the server, reads the same logs.
	out, code := cli(t, serverURL, "", "alloc", "logs", allocID, "sh")
	must.Eq(t, 0, code, must.Sprint(out))
	must.StrContains(t, out, "hello from the client")
}

func waitUntil(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
