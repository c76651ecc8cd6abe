package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// debugPair starts two servers (harness names server-0 and server-1, here alpha and beta):
// alpha leads, beta has joined its gossip pool and Raft configuration.
func debugPair(t *testing.T, first, second func(*Config)) (*gossipAgent, *gossipAgent) {
	t.Helper()
	servers := StartHarnessServers(t, 2, func(i int, c *Config) {
		if i == 0 {
			first(c)
		} else {
			second(c)
		}
	})
	return &gossipAgent{Agent: servers[0].Agent}, &gossipAgent{Agent: servers[1].Agent}
}

// getAs sends GET path to agent a with token.
func getAs(t *testing.T, a *gossipAgent, path, token string) httpResult {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+a.HTTPAddr()+path, nil)
	must.NoError(t, err)
	if token != "" {
		req.Header.Set("X-Nomad-Token", token)
	}
	return sendHTTP(t, http.DefaultClient, req)
}

func hostAgentID(t *testing.T, res httpResult) string {
	t.Helper()
	must.Eq(t, http.StatusOK, res.status, must.Sprint(res.body))
	var out api.HostDataResponse
	must.NoError(t, json.Unmarshal([]byte(res.body), &out))
	must.NotNil(t, out.HostData)
	return out.AgentID
}

// TestAgentDebug_ServerIDForwardedWithACLs: host data, profiles and log lines of another
// server are answered through any server, by that server, and the token is checked on both:
// a token without agent write gets no profile, and the target refuses it even when a request
// reaches it without passing the first agent's check.
func TestAgentDebug_ServerIDForwardedWithACLs(t *testing.T) {
	aclOn := func(c *Config) { c.ACL.Enabled = true; c.EnableDebug = false }
	alpha, beta := debugPair(t, aclOn, aclOn)
	boot, _, err := alpha.client(t).ACLTokens().Bootstrap(nil)
	must.NoError(t, err)
	root := alpha.client(t)
	root.SetSecretID(boot.SecretID)
	mustUpsertPolicy(t, root, "agent-read", `agent { policy = "read" }`)
	mustUpsertPolicy(t, root, "agent-write", `agent { policy = "write" }`)
	reader := mustCreateToken(t, root, "reader", "agent-read").SecretID
	writer := mustCreateToken(t, root, "writer", "agent-write").SecretID
	// beta decides on its own copy of the tokens.
	waitFor(t, 10*time.Second, func() bool {
		return beta.Server().State().LatestIndex() >= alpha.Server().State().LatestIndex()
	})
	alphaID, betaID := alpha.Server().Config().NodeID, beta.Server().Config().NodeID

	t.Run("host", func(t *testing.T) {
		must.Eq(t, betaID, hostAgentID(t, getAs(t, alpha, "/v1/agent/host?server_id=server-1.global", reader)))
		must.Eq(t, betaID, hostAgentID(t, getAs(t, alpha, "/v1/agent/host?server_id="+betaID, reader)))
		must.Eq(t, alphaID, hostAgentID(t, getAs(t, beta, "/v1/agent/host?server_id=leader", reader)))
		must.Eq(t, alphaID, hostAgentID(t, getAs(t, alpha, "/v1/agent/host?server_id=server-0.global", reader)))
		res := getAs(t, alpha, "/v1/agent/host?server_id=server-1.global", "")
		must.Eq(t, http.StatusForbidden, res.status)
	})

	t.Run("pprof", func(t *testing.T) {
		res := getAs(t, alpha, "/v1/agent/pprof/goroutine?debug=1&server_id=server-1.global", writer)
		must.Eq(t, http.StatusOK, res.status, must.Sprint(res.body))
		must.StrContains(t, res.body, "goroutine profile:")
		res = getAs(t, beta, "/v1/agent/pprof/heap?server_id=leader", writer)
		must.Eq(t, http.StatusOK, res.status, must.Sprint(res.body))
		must.NotEq(t, "", res.body)
		res = getAs(t, alpha, "/v1/agent/pprof/heap?server_id=server-1.global", reader)
		must.Eq(t, http.StatusForbidden, res.status)
		must.StrHasPrefix(t, "Permission denied", res.body)
		// Bounds are checked before anything is sent on.
		res = getAs(t, alpha, "/v1/agent/pprof/profile?seconds=100000&server_id=server-1.global", writer)
		must.Eq(t, http.StatusBadRequest, res.status)
		must.StrContains(t, res.body, "invalid seconds")
	})

	t.Run("unknown server", func(t *testing.T) {
		for _, path := range []string{"/v1/agent/host", "/v1/agent/pprof/heap", "/v1/agent/monitor"} {
			res := getAs(t, alpha, path+"?server_id=nope.global", boot.SecretID)
			must.Eq(t, http.StatusInternalServerError, res.status, must.Sprint(path))
			must.StrContains(t, res.body, "unknown Nomad server nope.global")
		}
	})

	t.Run("the target checks the token itself", func(t *testing.T) {
		target, err := alpha.Server().LookupServer("server-1.global")
		must.NoError(t, err)
		must.False(t, target.Self)
		direct := func(path, token string) httpResult {
			conn, err := alpha.Server().DialServerAgent(target)
			must.NoError(t, err)
			defer conn.Close()
			req, err := http.NewRequest(http.MethodGet, "http://agent"+path, nil)
			must.NoError(t, err)
			if token != "" {
				req.Header.Set("X-Nomad-Token", token)
			}
			must.NoError(t, req.Write(conn))
			resp, err := http.ReadResponse(bufio.NewReader(conn), req)
			must.NoError(t, err)
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			return httpResult{status: resp.StatusCode, body: string(raw)}
		}
		must.Eq(t, http.StatusForbidden, direct("/v1/agent/pprof/heap", reader).status)
		must.Eq(t, http.StatusForbidden, direct("/v1/agent/pprof/heap", "").status)
		must.Eq(t, http.StatusForbidden, direct("/v1/agent/host", "").status)
		must.Eq(t, http.StatusOK, direct("/v1/agent/pprof/heap", writer).status)
		// Only the debug routes are served there.
		must.Eq(t, http.StatusNotFound, direct("/v1/jobs", boot.SecretID).status)
	})

	t.Run("monitor", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet,
			"http://"+alpha.HTTPAddr()+"/v1/agent/monitor?plain=true&log_level=warn&server_id=server-1.global", nil)
		must.NoError(t, err)
		req.Header.Set("X-Nomad-Token", reader)
		resp, err := http.DefaultClient.Do(req)
		must.NoError(t, err)
		defer resp.Body.Close()
		must.Eq(t, http.StatusOK, resp.StatusCode)
		lines := make(chan string, 64)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		// Lines logged by beta, not alpha, come through.
		deadline := time.After(10 * time.Second)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
	wait:
		for {
			select {
			case line := <-lines:
				must.StrNotContains(t, line, "marker-from-alpha")
				if strings.Contains(line, "marker-from-beta") {
					break wait
				}
			case <-tick.C:
				beta.logger.Warn("marker-from-beta")
				alpha.logger.Warn("marker-from-alpha")
			case <-deadline:
				t.Fatal("beta's log line never came through alpha")
			}
		}
		t.Log("marker seen")
		must.Eq(t, int64(1), beta.monitors.Load())
		// The caller leaving ends the monitor on beta.
		cancel()
		waitFor(t, 10*time.Second, func() bool { return beta.monitors.Load() == 0 })
		t.Log("monitor ended")
		for range lines {
		}
	})
}

// TestAgentDebug_ForwardedKeepsTargetsEnableDebug: without ACLs, a server started without
// enable_debug gives no host data or profile, even asked through one started with it.
func TestAgentDebug_ForwardedKeepsTargetsEnableDebug(t *testing.T) {
	alpha, beta := debugPair(t, func(c *Config) { c.EnableDebug = true }, func(c *Config) { c.EnableDebug = false })
	for _, path := range []string{"/v1/agent/host?server_id=server-1.global", "/v1/agent/pprof/heap?server_id=server-1.global"} {
		res := getAs(t, alpha, path, "")
		must.Eq(t, http.StatusForbidden, res.status, must.Sprint(path))
		must.StrContains(t, res.body, "enable_debug")
	}
	// beta asks alpha, which has it.
	must.Eq(t, alpha.Server().Config().NodeID, hostAgentID(t, getAs(t, beta, "/v1/agent/host?server_id=server-0.global", "")))
	res := getAs(t, beta, "/v1/agent/pprof/heap?server_id=leader", "")
	must.Eq(t, http.StatusForbidden, res.status, must.Sprint("beta refuses before sending on: its own rule"))
}

// TestAgentDebug_NodeIDPprofRelayed: a profile of a client-only agent is asked through a
// server agent and through another client-only agent; the node's own enable_debug still
// decides. A client-only agent reaches a server's data with server_id through its server.
func TestAgentDebug_NodeIDPprofRelayed(t *testing.T) {
	ta, rpcAddr := newRPCServerAgent(t, nil)
	loud := newClientOnlyAgentWith(t, func(c *Config) { c.EnableDebug = true }, rpcAddr)
	quiet := newClientOnlyAgentWith(t, func(c *Config) { c.EnableDebug = false }, rpcAddr)

	res := doHTTP(t, ta, "GET", "/v1/agent/pprof/goroutine?debug=1&node_id="+loud.Client().NodeID(), nil, nil)
	must.Eq(t, http.StatusOK, res.status, must.Sprint(res.body))
	must.StrContains(t, res.body, "goroutine profile:")

	res = doHTTP(t, ta, "GET", "/v1/agent/pprof/heap?node_id="+quiet.Client().NodeID(), nil, nil)
	must.Eq(t, http.StatusForbidden, res.status)
	must.StrContains(t, res.body, "enable_debug")

	through := &gossipAgent{Agent: loud}
	res = getAs(t, through, "/v1/agent/pprof/heap?node_id="+quiet.Client().NodeID(), "")
	must.Eq(t, http.StatusForbidden, res.status)
	must.StrContains(t, res.body, "enable_debug")

	// The client-only agent's own profile, and the server's through it.
	res = getAs(t, through, "/v1/agent/pprof/heap", "")
	must.Eq(t, http.StatusOK, res.status, must.Sprint(res.body))
	serverID := ta.Server().Config().NodeID
	must.Eq(t, serverID, hostAgentID(t, getAs(t, through, "/v1/agent/host?server_id=leader", "")))
	res = getAs(t, through, "/v1/agent/host?server_id=nope.global", "")
	must.Eq(t, http.StatusInternalServerError, res.status)
	must.StrContains(t, res.body, "unknown Nomad server nope.global")
}
