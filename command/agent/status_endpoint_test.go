package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"github.com/hashicorp/cli"

	"github.com/shoenig/test/must"
)

func TestStatusEndpoint_LeaderAndPeers(t *testing.T) {
	ta := NewTestAgent(t, nil)
	c := ta.Client("")

	leader, err := c.Status().Leader()
	must.NoError(t, err)
	// A dev agent's in-memory Raft is reported by its advertised RPC address, as upstream.
	must.Eq(t, "127.0.0.1:4647", leader)

	peers, err := c.Status().Peers()
	must.NoError(t, err)
	must.Eq(t, []string{"127.0.0.1:4647"}, peers)

	res := doHTTP(t, ta, "GET", "/v1/status/leader", nil, nil)
	must.Eq(t, `"127.0.0.1:4647"`, res.body)
	must.Eq(t, "application/json", res.header.Get("Content-Type"))
}

func TestStatusEndpoint_Regions(t *testing.T) {
	ta := NewTestAgent(t, func(c *Config) { c.Region = "eu" })
	regions, err := ta.Client("").Regions().List()
	must.NoError(t, err)
	must.Eq(t, []string{"eu"}, regions)
}

func TestStatusEndpoint_AgentSelfAndMembers(t *testing.T) {
	ta := NewTestAgent(t, func(c *Config) {
		c.Name = "node1"
		c.Datacenter = "dc7"
		c.Server.EncryptKey = "3q2+7wAAc2VjcmV0LWdvc3NpcC1rZXktMzItYnl0ZSE="
	})
	c := ta.Client("")

	self, err := c.Agent().Self()
	must.NoError(t, err)
	must.Eq(t, "node1.global", self.Member.Name)
	must.Eq(t, "alive", self.Member.Status)
	must.Eq(t, "dc7", self.Member.Tags["dc"])
	must.Eq(t, "true", self.Stats["nomad"]["leader"])
	must.Eq(t, "global", self.Config["Region"])

	region, err := c.Agent().Region()
	must.NoError(t, err)
	must.Eq(t, "global", region)
	dc, err := c.Agent().Datacenter()
	must.NoError(t, err)
	must.Eq(t, "dc7", dc)

	// The gossip key never leaves the agent.
	res := doHTTP(t, ta, "GET", "/v1/agent/self", nil, nil)
	must.Eq(t, 200, res.status)
	must.StrNotContains(t, res.body, "3q2+7wAAc2VjcmV0LWdvc3NpcC1rZXktMzItYnl0ZSE=")

	members, err := c.Agent().Members()
	must.NoError(t, err)
	must.Eq(t, "node1", members.ServerName)
	must.Eq(t, "global", members.ServerRegion)
	must.Eq(t, "dc7", members.ServerDC)
	must.Len(t, 1, members.Members)
	must.Eq(t, "node1.global", members.Members[0].Name)
	must.Eq(t, "alive", members.Members[0].Status)
}

func TestStatusEndpoint_SystemGC(t *testing.T) {
	ta := NewTestAgent(t, nil)
	c := ta.Client("")
	jobs := c.Jobs()
	for _, id := range []string{"stopped", "scaled", "tagged"} {
		_, _, err := jobs.Register(testJob(id), nil)
		must.NoError(t, err)
	}
	_, _, err := jobs.Deregister("stopped", false, nil)
	must.NoError(t, err)
	_, _, err = jobs.Scale("scaled", "web", new(0), "park it", false, nil, nil)
	must.NoError(t, err)
	_, err = jobs.TagVersion("tagged", 0, "keep", "", nil)
	must.NoError(t, err)
	_, _, err = jobs.Deregister("tagged", false, nil)
	must.NoError(t, err)

	must.NoError(t, c.System().GarbageCollect())

	cases := []struct {
		name       string
		id         string
		wantExists bool
	}{
		{name: "stopped job is collected", id: "stopped", wantExists: false},
		{name: "job scaled to zero is kept", id: "scaled", wantExists: true},
		{name: "stopped job with a tagged version is kept", id: "tagged", wantExists: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := jobs.Info(tc.id, nil)
			if tc.wantExists {
				must.NoError(t, err)
				return
			}
			status, _ := responseError(t, err)
			must.Eq(t, 404, status)
		})
	}
}

func TestStatusEndpoint_SystemGCNeedsManagement(t *testing.T) {
	ta, root := NewTestACLAgent(t, nil)
	cases := []struct {
		name       string
		token      string
		wantStatus int
	}{
		{name: "anonymous", token: "", wantStatus: 403},
		{name: "management", token: root, wantStatus: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := ta.Client(tc.token).System().GarbageCollect()
			if tc.wantStatus == 0 {
				must.NoError(t, err)
				return
			}
			status, body := responseError(t, err)
			must.Eq(t, tc.wantStatus, status)
			must.StrHasPrefix(t, "Permission denied", body)
		})
	}
	// Status needs no token, as upstream.
	leader, err := ta.Client("").Status().Leader()
	must.NoError(t, err)
	must.NotEq(t, "", leader)
}

// PUT /v1/system/gc by a management token: the purge record read back over HTTP names the job
// GC as the actor and the token as ForcedBy, by accessor, name and type, never by secret.
func TestSecurity_SystemGCRecordsForcingToken(t *testing.T) {
	ta, root := NewTestACLAgent(t, nil)
	c := ta.Client(root)
	self, _, err := c.ACLTokens().Self(nil)
	must.NoError(t, err)
	_, _, err = c.Jobs().Register(testJob("gc-me"), nil)
	must.NoError(t, err)
	_, _, err = c.Jobs().Deregister("gc-me", false, nil)
	must.NoError(t, err)

	res := doHTTP(t, ta, http.MethodPut, "/v1/system/gc", nil, http.Header{"X-Nomad-Token": {root}})
	must.Eq(t, http.StatusOK, res.status, must.Sprint(res.body))

	list := doHTTP(t, ta, http.MethodGet, "/v1/jobs/purged", nil, http.Header{"X-Nomad-Token": {root}})
	must.Eq(t, http.StatusOK, list.status)
	var records []struct {
		ID       string
		JobID    string
		Reason   string
		Actor    map[string]string
		ForcedBy map[string]string
	}
	must.NoError(t, json.Unmarshal([]byte(list.body), &records))
	must.Len(t, 1, records)
	must.Eq(t, "gc-me", records[0].JobID)
	must.Eq(t, "gc", records[0].Reason)
	must.Eq(t, map[string]string{"Name": "job-gc", "Type": "system"}, records[0].Actor)
	must.Eq(t, map[string]string{"AccessorID": self.AccessorID, "Name": self.Name, "Type": "management"}, records[0].ForcedBy)
	must.StrNotContains(t, list.body, root)

	read := doHTTP(t, ta, http.MethodGet, "/v1/jobs/purged/"+records[0].ID, nil, http.Header{"X-Nomad-Token": {root}})
	must.Eq(t, http.StatusOK, read.status)
	must.StrContains(t, read.body, `"ForcedBy":{"AccessorID":"`+self.AccessorID)
	must.StrNotContains(t, read.body, root)
}

// The banner and GET /v1/agent/self report whether this agent runs a client, from the client
// itself rather than a constant.
func TestSecurity_BannerAndAgentSelfReportClient(t *testing.T) {
	cases := []struct {
		name       string
		start      func(t *testing.T) *TestAgent
		wantClient bool
	}{
		{name: "server and client", start: func(t *testing.T) *TestAgent { return NewTestClientAgent(t, nil) }, wantClient: true},
		{name: "server only", start: func(t *testing.T) *TestAgent { return NewTestAgent(t, nil) }, wantClient: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ta := tc.start(t)
			ui := cli.NewMockUi()
			printBanner(ui, ta.Agent)
			must.StrContains(t, ui.OutputWriter.String(), fmt.Sprintf("Client: %t\n", tc.wantClient))

			self, err := ta.Client("").Agent().Self()
			must.NoError(t, err)
			must.Eq(t, strconv.FormatBool(tc.wantClient), self.Stats["client"]["enabled"])
			clientCfg, _ := self.Config["Client"].(map[string]any)
			must.Eq[any](t, tc.wantClient, clientCfg["Enabled"])
		})
	}
}
