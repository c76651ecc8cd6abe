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

// startClientOnly starts a client-only agent named name on addr (a loopback address of its
// own) that reaches the server at rpcAddr, with raw_exec enabled.
func startClientOnly(t *testing.T, name, addr, rpcAddr string) {
	t.Helper()
	httpPort := freePort(t)
	cfg := fmt.Sprintf(`
name      = %q
data_dir  = %q
bind_addr = %q
ports {
  http = %d
  rpc  = %d
  serf = %d
}
client {
  enabled = true
  servers = [%q]
}
plugin "raw_exec" {
  config {
    enabled = true
  }
}
`, name, t.TempDir(), addr, httpPort, freePort(t), freePort(t), rpcAddr)
	path := filepath.Join(t.TempDir(), name+".hcl")
	must.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	startAgentNoWait(t, path, fmt.Sprintf("http://%s:%d", addr, httpPort))
}

// TestMigrateDisk_AcrossNodes: a group with ephemeral_disk { migrate = true } moved from one
// client to another by an update finds, in its new allocation, the data the previous one
// wrote: the new node fetched it from the old one through the server before the task started.
func TestMigrateDisk_AcrossNodes(t *testing.T) {
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
	rpcAddr := fmt.Sprintf("127.0.0.1:%d", rpcPort)
	startClientOnly(t, "e2e-a", "127.0.0.2", rpcAddr)
	startClientOnly(t, "e2e-b", "127.0.0.3", rpcAddr)
	c := server.client()
	waitUntil(t, 30*time.Second, "both clients ready", func() bool {
		nodes, _, err := c.Nodes().List(nil)
		ready := 0
		for _, n := range nodes {
			if err == nil && n.Status == "ready" {
				ready++
			}
		}
		return ready == 2
	})

	// Each start appends its allocation's ID to the data it keeps, then the check reads it.
	job := func(node string) *api.Job {
		j := api.NewServiceJob("keep", "keep", "global", 50)
		j.Datacenters = []string{"dc1"}
		task := api.NewTask("w", "raw_exec")
		task.Config = map[string]any{"command": "/bin/sh", "args": []string{"-c",
			`echo "$NOMAD_ALLOC_ID" >> "$NOMAD_ALLOC_DIR/data/history"; echo "$NOMAD_ALLOC_ID" >> "$NOMAD_TASK_DIR/seen"; exec sleep 600`}}
		task.Resources = &api.Resources{CPU: new(50), MemoryMB: new(32)}
		tg := api.NewTaskGroup("g", 1).AddTask(task)
		tg.EphemeralDisk = &api.EphemeralDisk{Migrate: new(true), SizeMB: new(20)}
		tg.Constraints = []*api.Constraint{api.NewConstraint("${node.unique.name}", "=", node)}
		j.AddTaskGroup(tg)
		return j
	}
	running := func(node string) *api.AllocationListStub {
		var out *api.AllocationListStub
		waitUntil(t, 60*time.Second, "the allocation running on "+node, func() bool {
			allocs, _, err := c.Jobs().Allocations("keep", false, nil)
			if err != nil {
				return false
			}
			for _, a := range allocs {
				if a.NodeName == node && a.ClientStatus == "running" {
					out = a
					return true
				}
			}
			return false
		})
		return out
	}
	// cat reads a file of an allocation through the server; "" until it is there.
	cat := func(allocID, path string) string {
		resp, err := http.Get(serverURL + "/v1/client/fs/cat/" + allocID + "?path=" + path)
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			return ""
		}
		return string(b)
	}

	_, _, err = c.Jobs().Register(job("e2e-a"), nil)
	must.NoError(t, err)
	t.Cleanup(func() { stopJob(t, c, "keep") })
	first := running("e2e-a")
	waitUntil(t, 20*time.Second, "the first allocation's data", func() bool {
		return strings.TrimSpace(cat(first.ID, "alloc/data/history")) == first.ID
	})

	_, _, err = c.Jobs().Register(job("e2e-b"), nil)
	must.NoError(t, err)
	second := running("e2e-b")
	waitUntil(t, 20*time.Second, "the second allocation's data", func() bool {
		return strings.Count(cat(second.ID, "alloc/data/history"), "\n") == 2
	})
	must.Eq(t, first.ID+"\n"+second.ID+"\n", cat(second.ID, "alloc/data/history"),
		must.Sprint("the task on the new node found the old node's data before it started"))
	must.Eq(t, first.ID+"\n"+second.ID+"\n", cat(second.ID, "w/local/seen"))
	info, _, err := c.Allocations().Info(second.ID, nil)
	must.NoError(t, err)
	must.Eq(t, first.ID, info.PreviousAllocation)
}
