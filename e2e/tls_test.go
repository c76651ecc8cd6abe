//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// tlsFiles is what `nomad tls ca create` and `nomad tls cert create` wrote into dir.
type tlsFiles struct{ dir string }

func (f tlsFiles) path(name string) string { return filepath.Join(f.dir, name) }

// nomadIn runs the binary in dir and returns its combined output and exit code.
func nomadIn(t *testing.T, dir string, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if exitErr, ok := err.(*exec.ExitError); ok {
		return string(out), exitErr.ExitCode()
	} else if err != nil {
		t.Fatalf("running nomad %v: %v", args, err)
	}
	return string(out), 0
}

// createTLS runs the tls commands the README shows and returns where the files are.
func createTLS(t *testing.T) tlsFiles {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"tls", "ca", "create"},
		{"tls", "cert", "create", "-server"},
		{"tls", "cert", "create", "-client"},
		{"tls", "cert", "create", "-cli"},
	} {
		out, code := nomadIn(t, dir, nil, args...)
		must.Eq(t, 0, code, must.Sprintf("nomad %v: %s", args, out))
	}
	for _, name := range []string{"nomad-agent-ca.pem", "nomad-agent-ca-key.pem", "global-server-nomad.pem",
		"global-server-nomad-key.pem", "global-client-nomad.pem", "global-client-nomad-key.pem",
		"global-cli-nomad.pem", "global-cli-nomad-key.pem"} {
		_, err := os.Stat(filepath.Join(dir, name))
		must.NoError(t, err, must.Sprint(name))
	}
	return tlsFiles{dir: dir}
}

func (f tlsFiles) block() string {
	return fmt.Sprintf(`
tls {
  http                   = true
  rpc                    = true
  ca_file                = %q
  cert_file              = %q
  key_file               = %q
  verify_server_hostname = true
  verify_https_client    = true
}
`, f.path("nomad-agent-ca.pem"), f.path("global-server-nomad.pem"), f.path("global-server-nomad-key.pem"))
}

func (f tlsFiles) client(t *testing.T, url string) *api.Client {
	t.Helper()
	c, err := api.NewClient(&api.Config{Address: url, TLSConfig: &api.TLSConfig{
		CACert: f.path("nomad-agent-ca.pem"), ClientCert: f.path("global-cli-nomad.pem"), ClientKey: f.path("global-cli-nomad-key.pem"),
	}})
	must.NoError(t, err)
	return c
}

func waitTLSLeader(t *testing.T, c *api.Client) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if l, err := c.Status().Leader(); err == nil && l != "" {
			if _, _, err := c.Jobs().List(nil); err == nil {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("no leader over HTTPS")
}

// TestTLS_ClusterFromTheTLSCommands creates a CA and certificates with the binary, runs three
// servers with mutual TLS on HTTP and RPC and no cluster key, writes through a follower, and
// checks the CLI flags and variables, and that a server from another CA cannot join.
func TestTLS_ClusterFromTheTLSCommands(t *testing.T) {
	files := createTLS(t)
	const n = 3
	type node struct{ http, rpc, serf int }
	nodes := make([]node, n)
	var joins []string
	for i := range nodes {
		nodes[i] = node{http: freePort(t), rpc: freePort(t), serf: freePort(t)}
		joins = append(joins, fmt.Sprintf("%q", fmt.Sprintf("127.0.0.1:%d", nodes[i].serf)))
	}
	agentConfig := func(name string, nd node, bootstrap int, joins string, tlsBlock string) string {
		return fmt.Sprintf(`
name      = %q
data_dir  = %q
bind_addr = "127.0.0.1"
ports {
  http = %d
  rpc  = %d
  serf = %d
}
server {
  enabled          = true
  bootstrap_expect = %d
  retry_join       = [%s]
}
%s
`, name, t.TempDir(), nd.http, nd.rpc, nd.serf, bootstrap, joins, tlsBlock)
	}
	urls := make([]string, n)
	procs := make([]*agentProc, n)
	for i, nd := range nodes {
		path := writeFile(t, "agent.hcl", agentConfig(fmt.Sprintf("server-%d", i), nd, n, joinList(joins), files.block()))
		urls[i] = fmt.Sprintf("https://127.0.0.1:%d", nd.http)
		procs[i] = startAgentNoWait(t, path, urls[i])
	}
	for _, u := range urls {
		waitTLSLeader(t, files.client(t, u))
	}
	leaderRPC, err := files.client(t, urls[0]).Status().Leader()
	must.NoError(t, err)
	follower := ""
	for i, nd := range nodes {
		if fmt.Sprintf("127.0.0.1:%d", nd.rpc) != leaderRPC {
			follower = urls[i]
			break
		}
	}
	// A write through a follower is forwarded over TLS and replicated to every server.
	_, _, err = files.client(t, follower).Jobs().Register(testJob("tls-job"), nil)
	must.NoError(t, err)
	for _, u := range urls {
		c := files.client(t, u)
		deadline := time.Now().Add(10 * time.Second)
		for {
			q := &api.QueryOptions{AllowStale: true}
			if job, _, err := c.Jobs().Info("tls-job", q); err == nil && *job.ID == "tls-job" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("tls-job never reached %s", u)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	// The CLI: flags, then the environment variables; without a client certificate refused.
	flags := []string{"-address", follower, "-ca-cert", files.path("nomad-agent-ca.pem"),
		"-client-cert", files.path("global-cli-nomad.pem"), "-client-key", files.path("global-cli-nomad-key.pem")}
	out, code := nomadIn(t, files.dir, nil, append([]string{"job", "status"}, flags...)...)
	must.Eq(t, 0, code, must.Sprint(out))
	must.StrContains(t, out, "tls-job")
	env := []string{"NOMAD_ADDR=" + follower, "NOMAD_CACERT=" + files.path("nomad-agent-ca.pem"),
		"NOMAD_CLIENT_CERT=" + files.path("global-cli-nomad.pem"), "NOMAD_CLIENT_KEY=" + files.path("global-cli-nomad-key.pem")}
	out, code = nomadIn(t, files.dir, env, "job", "status")
	must.Eq(t, 0, code, must.Sprint(out))
	out, code = nomadIn(t, files.dir, nil, "job", "status", "-address", follower, "-ca-cert", files.path("nomad-agent-ca.pem"))
	must.NotEq(t, 0, code, must.Sprint(out))

	// A server whose certificates come from another CA cannot join: gossip (not encrypted
	// without server.encrypt) lists it, but the leader's call to its RPC port fails, so it is
	// never added to Raft.
	other := createTLS(t)
	stranger := node{http: freePort(t), rpc: freePort(t), serf: freePort(t)}
	path := writeFile(t, "stranger.hcl", agentConfig("stranger", stranger, 0, joinList(joins), other.block()))
	refused := func() int {
		total := 0
		for _, p := range procs {
			total += strings.Count(p.logs.String(), "refused a connection on the RPC port")
			total += strings.Count(p.logs.String(), "does not authenticate on its RPC port")
		}
		return total
	}
	before := refused()
	startAgentNoWait(t, path, fmt.Sprintf("https://127.0.0.1:%d", stranger.http))
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) && refused() == before {
		time.Sleep(100 * time.Millisecond)
	}
	must.Greater(t, before, refused(), must.Sprint("no server refused the stranger"))
	peers, err := files.client(t, urls[0]).Status().Peers()
	must.NoError(t, err)
	must.Len(t, n, peers)
}

// TestTLS_AgentRefusesBadTLSConfiguration starts the binary with broken tls blocks: it exits
// 1 with an error naming the file or key.
func TestTLS_AgentRefusesBadTLSConfiguration(t *testing.T) {
	files := createTLS(t)
	garbage := writeFile(t, "garbage.pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
	cases := []struct {
		name  string
		block string
		want  string
	}{
		{name: "unknown key", block: "tls {\n  http = true\n  verify_incoming = true\n}\n", want: `"verify_incoming"`},
		{name: "malformed certificate", block: fmt.Sprintf("tls {\n  http = true\n  cert_file = %q\n  key_file = %q\n}\n",
			garbage, files.path("global-server-nomad-key.pem")), want: "tls.cert_file " + garbage},
		{name: "certificate of another CA", block: fmt.Sprintf("tls {\n  rpc = true\n  ca_file = %q\n  cert_file = %q\n  key_file = %q\n}\n",
			garbage, files.path("global-server-nomad.pem"), files.path("global-server-nomad-key.pem")), want: "tls.ca_file " + garbage},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			config, _ := writeConfig(t, t.TempDir(), tc.block)
			cmd := exec.Command(binary(t), "agent", "-config", config)
			out, err := cmd.CombinedOutput()
			exitErr, ok := err.(*exec.ExitError)
			must.True(t, ok, must.Sprintf("agent did not fail: %v\n%s", err, out))
			must.Eq(t, 1, exitErr.ExitCode())
			must.StrContains(t, string(out), tc.want)
		})
	}
}
