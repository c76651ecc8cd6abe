package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/nomad/nomadtest"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// allowNodeWrite is node write access, which management has too.
var allowNodeWrite = []string{rowNodeWrite, rowManagement}

// The matrix agent runs no client: an allowed call reaches the node lookup and answers 404.
func matrixNodeLifecycleEndpoints() []matrixEndpoint {
	return []matrixEndpoint{
		{name: "node drain", method: "PUT", path: "/v1/node/no-such-node/drain", body: `{"DrainSpec":{"Deadline":0}}`, allow: allowNodeWrite, okStatus: 404},
		{name: "node eligibility", method: "PUT", path: "/v1/node/no-such-node/eligibility", body: `{"Eligibility":"ineligible"}`, allow: allowNodeWrite, okStatus: 404},
		{name: "node purge", method: "PUT", path: "/v1/node/no-such-node/purge", allow: allowNodeWrite, okStatus: 404},
		{name: "node evaluate", method: "PUT", path: "/v1/node/no-such-node/evaluate", allow: allowNodeWrite, okStatus: 404},
	}
}

func TestACLMatrix_NodeLifecycle(t *testing.T) {
	runACLMatrix(t, matrixNodeLifecycleEndpoints(), matrixRows)
}

func registerMockNode(t *testing.T, ta *TestAgent, token, id string) {
	t.Helper()
	var reply structs.NodeUpdateResponse
	must.NoError(t, ta.Server().Endpoints.Node.Register(&structs.NodeRegisterRequest{
		Node: mock.Node(id), WriteRequest: structs.WriteRequest{AuthToken: token},
	}, &reply))
}

// The official client drives drain, eligibility, evaluate and purge and reads back the shapes
// it expects.
func TestHTTP_NodeLifecycle(t *testing.T) {
	ta, root := NewTestACLAgent(t, nil)
	registerMockNode(t, ta, root, "n1")
	c := ta.Client(root)
	nodes := c.Nodes()
	// A running batch allocation keeps the drain in progress (the drainer leaves it until the
	// deadline) while the test reads the node.
	batch := testJob("hold")
	batch.Type = new("batch")
	_, _, err := c.Jobs().Register(batch, nil)
	must.NoError(t, err)
	stored, err := ta.Server().State().JobByID(nil, structs.DefaultNamespace, "hold")
	must.NoError(t, err)
	nomadtest.PlaceAllocs(t, ta.Server(), stored, &structs.Allocation{ID: "6f1ad1d4-6bd4-4d86-9f2a-6c1f5a1c0a02",
		Name: "hold.web[0]", TaskGroup: "web", NodeID: "n1", ClientStatus: structs.AllocClientStatusRunning})

	elig, err := nodes.ToggleEligibility("n1", false, nil)
	must.NoError(t, err)
	must.Positive(t, elig.LastIndex)
	out, _, err := nodes.Info("n1", nil)
	must.NoError(t, err)
	must.Eq(t, api.NodeSchedulingIneligible, out.SchedulingEligibility)
	_, err = nodes.ToggleEligibility("n1", true, nil)
	must.NoError(t, err)

	before := time.Now().Add(-time.Second)
	drain, err := nodes.UpdateDrainOpts("n1", &api.DrainOptions{
		DrainSpec: &api.DrainSpec{Deadline: time.Hour, IgnoreSystemJobs: true},
		Meta:      map[string]string{"reason": "kernel"},
	}, nil)
	must.NoError(t, err)
	must.Positive(t, drain.NodeModifyIndex)
	must.Eq(t, drain.NodeModifyIndex, drain.LastIndex)
	out, _, err = nodes.Info("n1", nil)
	must.NoError(t, err)
	must.True(t, out.Drain)
	must.Eq(t, api.NodeSchedulingIneligible, out.SchedulingEligibility)
	must.NotNil(t, out.DrainStrategy)
	must.True(t, out.DrainStrategy.IgnoreSystemJobs)
	must.Eq(t, time.Hour, out.DrainStrategy.Deadline)
	must.NotNil(t, out.LastDrain)
	must.Eq(t, api.DrainStatusDraining, out.LastDrain.Status)
	must.True(t, out.LastDrain.StartedAt.After(before))
	must.Eq(t, map[string]string{"reason": "kernel"}, out.LastDrain.Meta)
	self, _, err := c.ACLTokens().Self(nil)
	must.NoError(t, err)
	must.Eq(t, self.AccessorID, out.LastDrain.AccessorID)
	list, _, err := nodes.List(nil)
	must.NoError(t, err)
	must.SliceLen(t, 1, list)
	must.True(t, list[0].Drain)

	_, err = nodes.UpdateDrain("n1", nil, true, nil)
	must.NoError(t, err)
	out, _, err = nodes.Info("n1", nil)
	must.NoError(t, err)
	must.False(t, out.Drain)
	must.Nil(t, out.DrainStrategy)
	must.Eq(t, api.NodeSchedulingEligible, out.SchedulingEligibility)
	must.Eq(t, api.DrainStatusCanceled, out.LastDrain.Status)

	_, _, err = nodes.ForceEvaluate("n1", nil)
	must.NoError(t, err)
	_, _, err = nodes.ForceEvaluate("12345678-abcd-efab-cdef-123456789abc", nil)
	must.ErrorContains(t, err, "not found")

	_, _, err = nodes.Purge("12345678-abcd-efab-cdef-123456789abc", nil)
	must.ErrorContains(t, err, "not found")
	purged, meta, err := nodes.Purge("n1", nil)
	must.NoError(t, err)
	must.NotNil(t, purged)
	must.Positive(t, meta.LastIndex)
	must.SliceLen(t, 1, purged.EvalIDs)
	alloc, _, err := c.Allocations().Info("6f1ad1d4-6bd4-4d86-9f2a-6c1f5a1c0a02", nil)
	must.NoError(t, err)
	must.Eq(t, api.AllocClientStatusLost, alloc.ClientStatus)
	_, _, err = nodes.Info("n1", nil)
	must.ErrorContains(t, err, "not found")
}

func TestHTTP_NodeLifecycleBadInput(t *testing.T) {
	ta := NewTestAgent(t, nil)
	registerMockNode(t, ta, "", "n1")
	cases := []struct {
		name   string
		method string
		path   string
		body   string
		status int
		want   string
	}{
		{name: "eligibility value", method: "PUT", path: "/v1/node/n1/eligibility", body: `{"Eligibility":"sometimes"}`, status: 400, want: "Eligibility"},
		{name: "eligibility body missing", method: "PUT", path: "/v1/node/n1/eligibility", status: 400, want: "body"},
		{name: "drain body not JSON", method: "POST", path: "/v1/node/n1/drain", body: `{`, status: 400},
		{name: "drain deadline wrong type", method: "POST", path: "/v1/node/n1/drain", body: `{"DrainSpec":{"Deadline":"soon"}}`, status: 400},
		{name: "drain via GET", method: "GET", path: "/v1/node/n1/drain", status: 405},
		{name: "purge via DELETE", method: "DELETE", path: "/v1/node/n1/purge", status: 405},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			index := ta.Server().State().LatestIndex()
			res := doHTTP(t, ta, tc.method, tc.path, strings.NewReader(tc.body), nil)
			must.Eq(t, tc.status, res.status, must.Sprint(res.body))
			must.StrContains(t, res.body, tc.want)
			must.Eq(t, index, ta.Server().State().LatestIndex())
		})
	}
}
