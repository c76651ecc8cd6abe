//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// Issue 19, item 2: slow-body connections from one address used up the agent's file
// descriptors, and health checks, the CLI and node registration hung. The agent runs here
// with a limit of 1,024 open files, and a stranger on 127.0.0.50 opens more connections than
// that; the agent must go on answering 127.0.0.1.
func TestSecurity_E2E_HTTPFloodFromOneAddressLeavesOthersServed(t *testing.T) {
	cfg, url := writeConfig(t, t.TempDir(), "")
	a := &agentProc{t: t, config: cfg, httpURL: url, logs: &bytes.Buffer{}}
	// The shell lowers both limits before it becomes the agent, so the agent cannot raise
	// its way out of the test.
	a.cmd = exec.Command("sh", "-c", `ulimit -n 1024 && exec "$0" agent -config "$1"`, binary(t), cfg)
	a.cmd.Stdout, a.cmd.Stderr = a.logs, a.logs
	must.NoError(t, a.cmd.Start())
	t.Cleanup(func() {
		if a.cmd.ProcessState == nil {
			_ = a.cmd.Process.Kill()
			_ = a.cmd.Wait()
		}
		if t.Failed() {
			out := a.logs.String()
			t.Logf("agent output (last 4 KiB):\n%s", out[max(0, len(out)-4096):])
		}
	})
	a.waitForLeader()

	addr := strings.TrimPrefix(url, "http://")
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.50")}, Timeout: 2 * time.Second}
	opened := 0
	for range 1200 {
		conn, err := d.Dial("tcp", addr)
		if err != nil {
			continue
		}
		t.Cleanup(func() { _ = conn.Close() })
		_, _ = io.WriteString(conn, "PUT /v1/jobs HTTP/1.1\r\nHost: nomad\r\nContent-Length: 1000000\r\n\r\n{")
		opened++
	}
	t.Logf("the stranger opened %d connections", opened)

	c, err := api.NewClient(&api.Config{Address: url, HttpClient: &http.Client{Timeout: 20 * time.Second}})
	must.NoError(t, err)
	for i := range 5 {
		_, err := c.Status().Leader()
		must.NoError(t, err, must.Sprintf("request %d from 127.0.0.1", i))
	}
	_, _, err = c.Jobs().Register(testJob("served"), nil)
	must.NoError(t, err)
	must.StrContains(t, a.logs.String(), "open-file limit is low")
}

// rpcFlood holds width silent connections to addr from the local address from ("" lets the
// system choose), opening a new one whenever the server closes one, until ctx ends; wg
// counts its goroutines. It counts the connections it opened, so a test can show the attack
// ran.
func rpcFlood(ctx context.Context, wg *sync.WaitGroup, from, addr string, width int, opened *atomic.Int64) {
	for range width {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := net.Dialer{Timeout: 2 * time.Second}
			if from != "" {
				d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
			}
			for ctx.Err() == nil {
				conn, err := d.DialContext(ctx, "tcp", addr)
				if err != nil {
					select {
					case <-ctx.Done():
					case <-time.After(100 * time.Millisecond):
					}
					continue
				}
				opened.Add(1)
				// Silent: wait for the server to close it, or for the test to end.
				stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
				_, _ = conn.Read(make([]byte, 1))
				stop()
				_ = conn.Close()
				// A pause before the next one keeps the flood from taking the CPU the
				// servers need on a small test machine; the held connections are the attack.
				select {
				case <-ctx.Done():
				case <-time.After(200 * time.Millisecond):
				}
			}
		}()
	}
}

// Issue 19, item 2: 64 silent connections from a stranger closed the RPC port to every server
// and client. With 127.0.0.50 holding 300 of them, a client-only agent on 127.0.0.2 must still
// register its node.
func TestSecurity_E2E_RPCFloodFromOneAddressLeavesClientsServed(t *testing.T) {
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

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	var opened atomic.Int64
	rpcFlood(ctx, &wg, "127.0.0.50", fmt.Sprintf("127.0.0.1:%d", rpcPort), 300, &opened)
	waitUntil(t, 30*time.Second, "the flood to hold its connections", func() bool { return opened.Load() >= 300 })

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
`, t.TempDir(), httpPort, freePort(t), freePort(t), rpcPort)
	path := filepath.Join(t.TempDir(), "client.hcl")
	must.NoError(t, os.WriteFile(path, []byte(clientCfg), 0o600))
	startAgentNoWait(t, path, fmt.Sprintf("http://127.0.0.2:%d", httpPort))

	c := server.client()
	waitUntil(t, 60*time.Second, "the client's node to be ready despite the flood", func() bool {
		nodes, _, err := c.Nodes().List(nil)
		if err != nil {
			return false
		}
		for _, n := range nodes {
			if n.Name == "e2e-client" && n.Status == "ready" {
				return true
			}
		}
		return false
	})
	t.Logf("the stranger opened %d RPC connections", opened.Load())
}
