//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// TestSecurity_E2E_ClientIntroduction: a server with client_introduction.enforcement =
// "strict" and no TLS, as the attack of issue 19 found it. A client-only agent without a token
// never becomes a node; one given a token from `nomad node intro create` (left in its state
// directory, as an operator's provisioning would) joins and becomes ready.
func TestSecurity_E2E_ClientIntroduction(t *testing.T) {
	httpPort, rpcPort, serfPort := freePort(t), freePort(t), freePort(t)
	serverCfg := filepath.Join(t.TempDir(), "server.hcl")
	must.NoError(t, os.WriteFile(serverCfg, []byte(fmt.Sprintf(`
name      = "e2e"
data_dir  = %q
bind_addr = "127.0.0.1"
ports {
  http = %d
  rpc  = %d
  serf = %d
}
server {
  enabled          = true
  bootstrap_expect = 1
  client_introduction {
    enforcement = "strict"
  }
}
`, t.TempDir(), httpPort, rpcPort, serfPort)), 0o600))
	serverURL := fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	server := startAgent(t, serverCfg, serverURL)

	startClient := func(name, introToken string) {
		dataDir := t.TempDir()
		if introToken != "" {
			must.NoError(t, os.MkdirAll(filepath.Join(dataDir, "client"), 0o700))
			must.NoError(t, os.WriteFile(filepath.Join(dataDir, "client", "intro_token.jwt"), []byte(introToken+"\n"), 0o600))
		}
		port := freePort(t)
		cfg := filepath.Join(t.TempDir(), name+".hcl")
		must.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`
name      = %q
data_dir  = %q
bind_addr = "127.0.0.1"
ports {
  http = %d
  rpc  = %d
  serf = %d
}
client {
  enabled = true
  servers = ["127.0.0.1:%d"]
}
`, name, dataDir, port, freePort(t), freePort(t), rpcPort)), 0o600))
		startAgentNoWait(t, cfg, fmt.Sprintf("http://127.0.0.1:%d", port))
	}

	// The stranger starts first, so that by the time the introduced node is ready it has
	// tried (and been refused) many times.
	startClient("e2e-stranger", "")
	out, code := cli(t, serverURL, "", "node", "intro", "create", "-node-name=e2e-introduced", "-ttl=10m", "-t", "{{.JWT}}")
	must.Eq(t, 0, code, must.Sprint(out))
	token := strings.TrimSpace(out)
	must.StrHasPrefix(t, "eyJ", token)
	startClient("e2e-introduced", token)

	c := server.client()
	waitUntil(t, 60*time.Second, "the introduced node to be ready", func() bool {
		nodes, _, err := c.Nodes().List(nil)
		if err != nil {
			return false
		}
		for _, n := range nodes {
			if n.Name == "e2e-introduced" && n.Status == "ready" {
				return true
			}
		}
		return false
	})
	nodes, _, err := c.Nodes().List(nil)
	must.NoError(t, err)
	for _, n := range nodes {
		must.NotEq(t, "e2e-stranger", n.Name, must.Sprint("a client without an introduction token registered"))
	}
}
