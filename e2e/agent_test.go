//go:build e2e

// Package e2e runs the built nomad binary as real processes.
package e2e

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// binary is the nomad binary under test; `make e2e` builds it and sets NOMAD_E2E_BINARY.
func binary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("NOMAD_E2E_BINARY")
	if bin == "" {
		t.Fatal("NOMAD_E2E_BINARY is not set; run the suite with `make e2e`")
	}
	return bin
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// agentProc is one running agent process with a persistent data dir.
type agentProc struct {
	t       *testing.T
	cmd     *exec.Cmd
	config  string
	httpURL string
	logs    *bytes.Buffer
	// httpOnce/http is the one connection pool every client() of this agent shares: a new
	// transport per poll would leave an idle connection each, and the agent caps
	// connections per address (limits.http_max_conns_per_client).
	httpOnce sync.Once
	http     *http.Client
}

// rawExecClientConfig makes writeConfig's agent a client too, with raw_exec enabled.
const rawExecClientConfig = `
client {
  enabled = true
}
plugin "raw_exec" {
  config { enabled = true }
}
`

func writeConfig(t *testing.T, dataDir string, extra string) (string, string) {
	t.Helper()
	httpPort, rpcPort, serfPort := freePort(t), freePort(t), freePort(t)
	cfg := fmt.Sprintf(`
name      = "e2e"
data_dir  = %q
bind_addr = "127.0.0.1"
log_level = "DEBUG"
ports {
  http = %d
  rpc  = %d
  serf = %d
}
server {
  enabled          = true
  bootstrap_expect = 1
}
%s
`, dataDir, httpPort, rpcPort, serfPort, extra)
	path := filepath.Join(t.TempDir(), "agent.hcl")
	must.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	return path, fmt.Sprintf("http://127.0.0.1:%d", httpPort)
}

func startAgent(t *testing.T, config, httpURL string) *agentProc {
	t.Helper()
	a := startAgentNoWait(t, config, httpURL)
	a.waitForLeader()
	return a
}

// startAgentNoWait starts an agent process without waiting for a leader: the servers of a
// cluster elect one only once they are all up.
func startAgentNoWait(t *testing.T, config, httpURL string) *agentProc {
	t.Helper()
	a := &agentProc{t: t, config: config, httpURL: httpURL, logs: &bytes.Buffer{}}
	a.cmd = exec.Command(binary(t), "agent", "-config", config)
	a.cmd.Stdout, a.cmd.Stderr = a.logs, a.logs
	must.NoError(t, a.cmd.Start())
	t.Cleanup(func() {
		if a.cmd.ProcessState == nil {
			_ = a.cmd.Process.Kill()
			_ = a.cmd.Wait()
		}
		reapTasks(a.config)
		if t.Failed() {
			t.Logf("agent output:\n%s", a.logs.String())
		}
	})
	return a
}

func (a *agentProc) client() *api.Client {
	a.httpOnce.Do(func() {
		a.http = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8, IdleConnTimeout: 30 * time.Second}}
		a.t.Cleanup(a.http.CloseIdleConnections)
	})
	c, err := api.NewClient(&api.Config{Address: a.httpURL, HttpClient: a.http})
	must.NoError(a.t, err)
	return c
}

func (a *agentProc) waitForLeader() {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		leader, err := a.client().Status().Leader()
		if err == nil && leader != "" {
			// A leader that can commit answers a read of the job list (with ACLs on, a 403
			// also proves the server is up and deciding).
			if _, _, err := a.client().Jobs().List(nil); err == nil || strings.Contains(err.Error(), "403") {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	a.t.Fatalf("agent at %s never elected a leader\n%s", a.httpURL, a.logs.String())
}

func (a *agentProc) kill9() {
	must.NoError(a.t, a.cmd.Process.Signal(syscall.SIGKILL))
	_ = a.cmd.Wait()
}

func testJob(id string) *api.Job {
	job := api.NewServiceJob(id, id, "global", 50)
	job.Datacenters = []string{"dc1"}
	task := api.NewTask("server", "raw_exec")
	task.Config = map[string]any{"command": "/bin/sleep", "args": []string{"600"}}
	group := api.NewTaskGroup("web", 1).AddTask(task)
	job.AddTaskGroup(group)
	job.Meta = map[string]string{"rev": "1"}
	return job
}

// TestDurability_Kill9 acknowledges writes, kills the agent without warning, restarts it on
// the same data dir and expects every acknowledged write, stop and purge to be there.
func TestDurability_Kill9(t *testing.T) {
	dataDir := t.TempDir()
	config, url := writeConfig(t, dataDir, "")
	agent := startAgent(t, config, url)
	c := agent.client()

	const jobs = 20
	for i := 0; i < jobs; i++ {
		_, _, err := c.Jobs().Register(testJob(fmt.Sprintf("job-%02d", i)), nil)
		must.NoError(t, err)
	}
	// A second version of every job.
	for i := 0; i < jobs; i++ {
		job := testJob(fmt.Sprintf("job-%02d", i))
		job.Meta["rev"] = "2"
		_, _, err := c.Jobs().Register(job, nil)
		must.NoError(t, err)
	}
	for i := 0; i < 5; i++ {
		_, _, err := c.Jobs().Deregister(fmt.Sprintf("job-%02d", i), false, nil)
		must.NoError(t, err)
	}
	for i := 5; i < 10; i++ {
		_, _, err := c.Jobs().Deregister(fmt.Sprintf("job-%02d", i), true, nil)
		must.NoError(t, err)
	}
	agent.kill9()

	agent = startAgent(t, config, url)
	c = agent.client()
	for i := 0; i < jobs; i++ {
		id := fmt.Sprintf("job-%02d", i)
		job, _, err := c.Jobs().Info(id, nil)
		switch {
		case i < 5:
			must.NoError(t, err)
			must.True(t, *job.Stop, must.Sprintf("%s should be stopped", id))
			must.Eq(t, uint64(2), *job.Version)
		case i < 10:
			must.Error(t, err, must.Sprintf("%s should stay purged", id))
			must.StrContains(t, err.Error(), "job not found")
		default:
			must.NoError(t, err)
			must.False(t, *job.Stop)
			must.Eq(t, "2", job.Meta["rev"])
			must.Eq(t, uint64(1), *job.Version)
		}
	}
	// The purges left their records, which survive the crash too.
	var records []map[string]any
	_, err := c.Raw().Query("/v1/jobs/purged?namespace=*", &records, nil)
	must.NoError(t, err)
	must.Len(t, 5, records)
	for _, r := range records {
		must.Eq(t, "purge", r["Reason"])
	}
}
