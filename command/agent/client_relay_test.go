package agent

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/nomad"
	"github.com/shoenig/test/must"
)

// TestClientOnlyAgent_RelaysOtherNodesAllocation: another node's allocation logs, files,
// exec, stats, checks, signal and restart, and another node's host statistics and host data,
// work through a client-only agent's address; the server decides on the caller's token, so
// a token without the capability gets the same 403 as from a server agent, even when the
// client agent does not ask first.
func TestClientOnlyAgent_RelaysOtherNodesAllocation(t *testing.T) {
	ta, rpcAddr := newRPCServerAgent(t, func(c *Config) { c.ACL.Enabled = true })
	boot, _, err := ta.Client("").ACLTokens().Bootstrap(nil)
	must.NoError(t, err)
	root := boot.SecretID
	aclOn := func(c *Config) { c.ACL.Enabled = true }
	one := newClientOnlyAgentWith(t, aclOn, rpcAddr)
	two := newClientOnlyAgentWith(t, aclOn, rpcAddr)
	full := clientToken(t, ta, root, "relay-full", `
namespace "default" { capabilities = ["submit-job", "read-job", "read-logs", "read-fs", "alloc-exec", "alloc-node-exec", "alloc-lifecycle"] }
node { policy = "read" }
agent { policy = "read" }`).SecretID
	weak := clientToken(t, ta, root, "relay-weak", `namespace "default" { capabilities = ["read-job"] }`).SecretID

	job := shJob("far", "service", "echo far; exec sleep 600")
	job.Constraints = append(job.Constraints, &api.Constraint{LTarget: "${node.unique.id}", RTarget: one.Client().NodeID(), Operand: "="})
	alloc := runningAlloc(t, ta.Client(root), job)
	must.Eq(t, one.Client().NodeID(), alloc.NodeID)
	through := func(token string) *api.Client {
		c, err := api.NewClient(&api.Config{Address: "http://" + two.HTTPAddr(), SecretID: token})
		must.NoError(t, err)
		return c
	}
	fc, wc := through(full), through(weak)

	t.Run("logs", func(t *testing.T) {
		eventually(t, 10*time.Second, "the task's output through the other agent", func() (bool, string) {
			out, err := officialLogs(t, fc, alloc, "sh", "stdout", false, "start", 0)
			if err != nil {
				return false, err.Error()
			}
			return out == "far\n", out
		})
		_, err := officialLogs(t, wc, alloc, "sh", "stdout", false, "start", 0)
		status, body := responseError(t, err)
		must.Eq(t, http.StatusForbidden, status)
		must.StrHasPrefix(t, "Permission denied", body)
	})
	t.Run("fs", func(t *testing.T) {
		entries, _, err := fc.AllocFS().List(alloc, "/", nil)
		must.NoError(t, err)
		names := []string{}
		for _, e := range entries {
			names = append(names, e.Name)
		}
		must.SliceContains(t, names, "alloc")
		rd, err := fc.AllocFS().Cat(alloc, "alloc/logs/sh.stdout.0", nil)
		must.NoError(t, err)
		b, _ := io.ReadAll(rd)
		rd.Close()
		must.Eq(t, "far\n", string(b))
		_, _, err = wc.AllocFS().List(alloc, "/", nil)
		status, body := responseError(t, err)
		must.Eq(t, http.StatusForbidden, status)
		must.StrHasPrefix(t, "Permission denied", body)
		must.StrContains(t, body, "read-fs")
	})
	t.Run("exec", func(t *testing.T) {
		res := execOfficial(t, fc, alloc, "sh", false, "", "/bin/sh", "-c", "echo relayed; exit 3")
		must.NoError(t, res.err)
		must.Eq(t, 3, res.code)
		must.Eq(t, "relayed\n", res.stdout)
		res = execOfficial(t, wc, alloc, "sh", false, "", "/bin/echo", "no")
		must.Error(t, res.err)
		must.Eq(t, "", res.stdout)
	})
	t.Run("stats and checks", func(t *testing.T) {
		usage, err := fc.Allocations().Stats(alloc, nil)
		must.NoError(t, err)
		must.MapContainsKey(t, usage.Tasks, "sh")
		_, err = fc.Allocations().Checks(alloc.ID, nil)
		must.NoError(t, err)
		host, err := fc.Nodes().Stats(one.Client().NodeID(), nil)
		must.NoError(t, err)
		must.Positive(t, host.Memory.Total)
		_, err = wc.Nodes().Stats(one.Client().NodeID(), nil)
		status, body := responseError(t, err)
		must.Eq(t, http.StatusForbidden, status)
		must.StrHasPrefix(t, "Permission denied", body)
	})
	t.Run("host data of another node", func(t *testing.T) {
		resp, err := fc.Agent().Host("", one.Client().NodeID(), nil)
		must.NoError(t, err)
		must.Eq(t, one.Client().NodeID(), resp.AgentID)
		must.NotNil(t, resp.HostData)
		_, err = wc.Agent().Host("", one.Client().NodeID(), nil)
		status, _ := responseError(t, err)
		must.Eq(t, http.StatusForbidden, status)
	})
	t.Run("signal and restart", func(t *testing.T) {
		err := wc.Allocations().Signal(alloc, nil, "sh", "SIGHUP")
		status, body := responseError(t, err)
		must.Eq(t, http.StatusForbidden, status)
		must.StrHasPrefix(t, "Permission denied", body)
		must.NoError(t, fc.Allocations().Restart(alloc, "sh", nil))
		err = fc.Allocations().Signal(alloc, nil, "nope", "SIGHUP")
		status, _ = responseError(t, err)
		must.Eq(t, http.StatusNotFound, status)
	})

	// The server decides on its own: a relay the client agent did not check first is refused
	// with the same 403.
	t.Run("the server decides on the token", func(t *testing.T) {
		for _, path := range []string{
			"/v1/client/fs/ls/" + alloc.ID,
			"/v1/client/fs/logs/" + alloc.ID + "?task=sh&type=stdout",
			"/v1/client/allocation/" + alloc.ID + "/restart",
		} {
			method := "GET"
			if strings.HasSuffix(path, "/restart") {
				method = "PUT"
			}
			status, body := rawForward(t, two, weak, method, path)
			must.Eq(t, http.StatusForbidden, status, must.Sprint(path, body))
			must.StrHasPrefix(t, "Permission denied", body)
		}
		status, body := rawForward(t, two, full, "GET", "/v1/client/identity")
		must.Eq(t, http.StatusBadRequest, status)
		must.StrContains(t, body, "not relayed")
		status, _ = rawForward(t, two, full, "GET", "/v1/client/fs/ls/"+alloc.ID)
		must.Eq(t, http.StatusOK, status)
		status, _ = rawForward(t, two, full, "GET", "/v1/client/fs/ls/00000000-0000-0000-0000-000000000000")
		must.Eq(t, http.StatusNotFound, status)
	})

	t.Run("at most 12 relays at once", func(t *testing.T) {
		var held []io.Closer
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for range 12 {
			conn, err := two.rpcServers.Forward(full)
			must.NoError(t, err)
			held = append(held, conn)
		}
		_, _, err := fc.AllocFS().List(alloc, "/", nil)
		status, body := responseError(t, err)
		must.Eq(t, http.StatusTooManyRequests, status)
		must.StrContains(t, body, "the limit is 12")
		held[0].Close()
		held = held[1:]
		_, _, err = fc.AllocFS().List(alloc, "/", nil)
		must.NoError(t, err)
	})
}

// rawForward relays one request through agent a's connection to its server with token,
// without the agent's own checks, and answers the relayed status and body.
func rawForward(t *testing.T, a *Agent, token, method, path string) (int, string) {
	t.Helper()
	conn, err := a.rpcServers.Forward(token)
	must.NoError(t, err)
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	_, err = fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: node\r\nConnection: close\r\n\r\n", method, path)
	must.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	must.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// TestClientForwardRoutesMatchStreamedRoutes: every route the servers relay for a client
// agent is served by a node's stream server, and every streamed route the HTTP API relays to
// another node is on the allow-list, except the node's own configuration (metadata,
// identity), which stays with a server agent, and the snapshot a server reads for a
// migration.
func TestClientForwardRoutesMatchStreamedRoutes(t *testing.T) {
	var rec patternList
	(&HTTPServer{}).registerStreamRoutes(&rec)
	// Not relayed for a client agent: a node's own configuration, the migration snapshot
	// only a server reads, and the catch-all.
	notRelayed := []string{"/v1/client/metadata", "/v1/client/identity", "/v1/client/identity/renew",
		"/v1/client/allocation/{alloc_id}/snapshot", "/"}
	var streamed []string
	for _, p := range rec {
		if !slices.Contains(notRelayed, p) {
			streamed = append(streamed, p)
		}
	}
	for _, p := range notRelayed {
		must.SliceContains(t, rec, p)
	}
	allow := nomad.ClientForwardPatterns()
	sort.Strings(streamed)
	sort.Strings(allow)
	must.Eq(t, streamed, allow)
	must.True(t, nomad.ClientForwardAllowed("/v1/client/fs/ls/abc"))
	must.False(t, nomad.ClientForwardAllowed("/v1/client/fs/ls/"))
	must.False(t, nomad.ClientForwardAllowed("/v1/client/fs/ls/a/b"))
	must.False(t, nomad.ClientForwardAllowed("/v1/client/metadata"))
}

// patternList records the patterns registered on it.
type patternList []string

func (p *patternList) Handle(pattern string, _ http.Handler) { *p = append(*p, pattern) }
