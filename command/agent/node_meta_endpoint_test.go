package agent

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func matrixNodeMetaEndpoints() []matrixEndpoint {
	// The matrix agent runs no client: an unknown node answers 404 once the caller passed.
	return []matrixEndpoint{
		{name: "node meta read", method: "GET", path: "/v1/client/metadata?node_id=no-such-node", allow: allowNodeRead, okStatus: 404},
		{name: "node meta apply", method: "POST", path: "/v1/client/metadata",
			body: `{"NodeID":"no-such-node","Meta":{"rack":"r1"}}`, allow: allowNodeWrite, okStatus: 404},
		{name: "node meta apply put", method: "PUT", path: "/v1/client/metadata",
			body: `{"NodeID":"no-such-node","Meta":{"rack":"r1"}}`, allow: allowNodeWrite, okStatus: 404},
	}
}

func TestACLMatrix_NodeMeta(t *testing.T) {
	runACLMatrix(t, matrixNodeMetaEndpoints(), matrixRows)
}

// Dynamic metadata through the official client: the answer merges it over the static meta,
// a nil value hides a static key, the servers' node follows, and a constraint on the new key
// places a job that could not be placed before.
func TestNodeMeta_ApplyThroughOfficialClient(t *testing.T) {
	ta := NewTestClientAgent(t, func(c *Config) { c.Client.Meta = map[string]string{"static": "s"} })
	c := ta.Client("")
	nodeID := ta.Agent.Client().NodeID()

	node, _, err := c.Nodes().Info(nodeID, nil)
	must.NoError(t, err)
	must.Eq(t, "s", node.Meta["static"])
	must.Greater(t, 1, len(node.Meta))

	read, err := c.Nodes().Meta().Read(nodeID, nil)
	must.NoError(t, err)
	must.MapEq(t, node.Meta, read.Meta)
	must.MapEq(t, node.Meta, read.Static)
	must.MapEmpty(t, read.Dynamic)

	job := api.NewBatchJob("racked", "racked", "global", 50)
	job.Datacenters = []string{"dc1"}
	task := api.NewTask("t", "mock_driver").SetConfig("run_for", "1h")
	task.Resources = &api.Resources{CPU: new(20), MemoryMB: new(16)}
	job.AddTaskGroup(api.NewTaskGroup("g", 1).AddTask(task))
	job.Constrain(api.NewConstraint("${meta.rack}", "=", "r1"))
	resp, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	eval := completedEval(t, c, resp.EvalID)
	must.MapContainsKey(t, eval.FailedTGAllocs, "g")

	out, err := c.Nodes().Meta().Apply(&api.NodeMetaApplyRequest{
		NodeID: nodeID, Meta: map[string]*string{"static": nil, "rack": new("r1")},
	}, nil)
	must.NoError(t, err)
	must.Eq(t, map[string]*string{"static": nil, "rack": new("r1")}, out.Dynamic)
	must.MapNotContainsKey(t, out.Meta, "static")
	must.Eq(t, "r1", out.Meta["rack"])
	must.Eq(t, "s", out.Static["static"])

	eventually(t, 10*time.Second, "the servers' node meta", func() (bool, string) {
		node, _, err := c.Nodes().Info(nodeID, nil)
		if err != nil {
			return false, err.Error()
		}
		_, hasStatic := node.Meta["static"]
		return node.Meta["rack"] == "r1" && !hasStatic, strings.Join([]string{node.Meta["rack"]}, ",")
	})
	// The node's registration is an update of the node: the blocked evaluation places now.
	allocsIn(t, c, "racked", map[string]int{"running": 1})

	// Applying on the empty node ID means this agent's node.
	out, err = c.Nodes().Meta().Apply(&api.NodeMetaApplyRequest{Meta: map[string]*string{"rack": nil}}, nil)
	must.NoError(t, err)
	must.MapNotContainsKey(t, out.Meta, "rack")
	read, err = c.Nodes().Meta().Read("", nil)
	must.NoError(t, err)
	must.Eq(t, out.Meta, read.Meta)
}

func TestNodeMeta_BadInput(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	long := strings.Repeat("k", 200)
	cases := []struct {
		name     string
		method   string
		path     string
		body     string
		want     int
		contains string
	}{
		{name: "no keys", method: "POST", path: "/v1/client/metadata", body: `{"Meta":{}}`, want: 400, contains: "Meta"},
		{name: "empty key", method: "POST", path: "/v1/client/metadata", body: `{"Meta":{"":"x"}}`, want: 400, contains: "Meta"},
		{name: "long key", method: "POST", path: "/v1/client/metadata", body: `{"Meta":{"` + long + `":"x"}}`, want: 400, contains: "128"},
		{name: "not json", method: "POST", path: "/v1/client/metadata", body: `{`, want: 400},
		{name: "unknown node", method: "GET", path: "/v1/client/metadata?node_id=nope", want: 404},
		{name: "wrong method", method: "DELETE", path: "/v1/client/metadata", want: 405},
	}
	before, err := ta.Agent.Client().NodeMeta(), error(nil)
	must.NoError(t, err)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := doHTTP(t, ta, tc.method, tc.path, strings.NewReader(tc.body), http.Header{})
			must.Eq(t, tc.want, res.status, must.Sprint(res.body))
			must.StrContains(t, res.body, tc.contains)
		})
	}
	must.Eq(t, before, ta.Agent.Client().NodeMeta())
}
