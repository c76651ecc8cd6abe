package agent

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// TestAgentHost answers the host's data in api.HostData's shape with credentials in the
// environment redacted, and refuses an unknown server or node and a debug-less
// unauthenticated agent (another agent's data: agent_debug_forward_test.go).
func TestAgentHost(t *testing.T) {
	t.Setenv("CLIOPS_TEST_TOKEN", "s3cr3t-value-1")
	t.Setenv("CLIOPS_DB_PASSWORD", "s3cr3t-value-2")
	t.Setenv("CLIOPS_PLAIN", "visible")
	ta := NewTestAgent(t, nil)

	resp, err := ta.Client("").Agent().Host("", "", nil)
	must.NoError(t, err)
	must.Eq(t, ta.Server().Config().NodeID, resp.AgentID)
	must.NotNil(t, resp.HostData)
	must.StrContains(t, resp.HostData.OS, "Linux")
	must.Eq(t, "visible", resp.HostData.Environment["CLIOPS_PLAIN"])
	must.Eq(t, "<redacted>", resp.HostData.Environment["CLIOPS_TEST_TOKEN"])
	must.Eq(t, "<redacted>", resp.HostData.Environment["CLIOPS_DB_PASSWORD"])
	must.MapContainsKey(t, resp.HostData.Disk, "/")
	must.Positive(t, resp.HostData.Disk["/"].DiskMB)

	raw := doHTTP(t, ta, "GET", "/v1/agent/host", nil, nil)
	must.Eq(t, http.StatusOK, raw.status)
	must.StrNotContains(t, raw.body, "s3cr3t-value")
	var shape map[string]any
	must.NoError(t, json.Unmarshal([]byte(raw.body), &shape))
	must.MapContainsKey(t, shape, "AgentID")

	cases := []struct {
		name   string
		path   string
		status int
		body   string
	}{
		{name: "an unknown server", path: "/v1/agent/host?server_id=elsewhere", status: 500, body: "unknown Nomad server elsewhere"},
		{name: "an unknown node", path: "/v1/agent/host?node_id=elsewhere", status: 404, body: "not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := doHTTP(t, ta, "GET", tc.path, nil, nil)
			must.Eq(t, tc.status, res.status)
			must.StrContains(t, res.body, tc.body)
		})
	}
	t.Run("wrong method", func(t *testing.T) {
		must.Eq(t, http.StatusMethodNotAllowed, doHTTP(t, ta, "PUT", "/v1/agent/host", nil, nil).status)
	})

	t.Run("no ACLs and no enable_debug", func(t *testing.T) {
		quiet := NewTestAgent(t, func(c *Config) { c.EnableDebug = false })
		res := doHTTP(t, quiet, "GET", "/v1/agent/host", nil, nil)
		must.Eq(t, http.StatusForbidden, res.status)
		must.True(t, strings.HasPrefix(res.body, "Permission denied"), must.Sprint(res.body))
		must.StrContains(t, res.body, "enable_debug")
	})
}

// TestAgentServers: a server agent's client talks to its own server; the list is its RPC
// address and cannot be replaced; bad addresses are named.
func TestAgentServers(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	servers, err := ta.Client("").Agent().Servers()
	must.NoError(t, err)
	must.Eq(t, []string{ta.Agent.config.Advertise.RPC}, servers)

	cases := []struct {
		name string
		path string
		body string
	}{
		{name: "no address", path: "/v1/agent/servers", body: "missing address"},
		{name: "no port", path: "/v1/agent/servers?address=10.0.0.1", body: `address "10.0.0.1": want host:port`},
		{name: "in process", path: "/v1/agent/servers?address=10.0.0.1:4647", body: "in process"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := doHTTP(t, ta, "PUT", tc.path, nil, nil)
			must.Eq(t, http.StatusBadRequest, res.status)
			must.StrContains(t, res.body, tc.body)
		})
	}
	servers, err = ta.Client("").Agent().Servers()
	must.NoError(t, err)
	must.Eq(t, []string{ta.Agent.config.Advertise.RPC}, servers)

	t.Run("no client", func(t *testing.T) {
		srv := NewTestAgent(t, nil)
		_, err := srv.Client("").Agent().Servers()
		status, body := responseError(t, err)
		must.Eq(t, http.StatusBadRequest, status)
		must.StrContains(t, body, "runs no client")
	})
}

// TestACLPolicySelf lists the caller's policies, direct and through roles, and is not
// mistaken for a policy named "self".
func TestACLPolicySelf(t *testing.T) {
	ta, root := NewTestACLAgent(t, nil)
	mgmt := ta.Client(root)
	mustUpsertPolicy(t, mgmt, "readers", `namespace "default" { policy = "read" }`)
	mustUpsertPolicy(t, mgmt, "ops", `node { policy = "read" }`)
	mustUpsertPolicy(t, mgmt, "unrelated", `agent { policy = "read" }`)
	role, _, err := mgmt.ACLRoles().Create(&api.ACLRole{Name: "ops-role", Policies: []*api.ACLRolePolicyLink{{Name: "ops"}}}, nil)
	must.NoError(t, err)
	tok, _, err := mgmt.ACLTokens().Create(&api.ACLToken{Name: "t", Type: "client", Policies: []string{"readers"},
		Roles: []*api.ACLTokenRoleLink{{ID: role.ID}}}, nil)
	must.NoError(t, err)

	got, _, err := ta.Client(tok.SecretID).ACLPolicies().Self(nil)
	must.NoError(t, err)
	var names []string
	for _, p := range got {
		names = append(names, p.Name)
	}
	must.Eq(t, []string{"ops", "readers"}, names)

	got, _, err = mgmt.ACLPolicies().Self(nil)
	must.NoError(t, err)
	must.SliceEmpty(t, got)

	_, _, err = ta.Client("not-a-token").ACLPolicies().Self(nil)
	status, body := responseError(t, err)
	must.Eq(t, http.StatusForbidden, status)
	must.StrHasPrefix(t, "Permission denied", body)
}

// TestSystemReconcileSummaries recounts summaries through Raft with a management token.
func TestSystemReconcileSummaries(t *testing.T) {
	ta, root := NewTestACLAgent(t, nil)
	c := ta.Client(root)
	_, _, err := c.Jobs().Register(testJob("web"), nil)
	must.NoError(t, err)
	must.NoError(t, c.System().ReconcileSummaries())
	put := doHTTP(t, ta, "PUT", "/v1/system/reconcile/summaries", nil, tokenHeader(root))
	must.Eq(t, http.StatusOK, put.status)
	index, err := strconv.ParseUint(put.header.Get("X-Nomad-Index"), 10, 64)
	must.NoError(t, err)
	must.Greater(t, ta.Server().State().LatestIndex(), index)
	sum, _, err := c.Jobs().Summary("web", nil)
	must.NoError(t, err)
	must.MapContainsKey(t, sum.Summary, "web")

	res := doHTTP(t, ta, "GET", "/v1/system/reconcile/summaries", nil, tokenHeader(root))
	must.Eq(t, http.StatusMethodNotAllowed, res.status)
}
