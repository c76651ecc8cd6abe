package agent

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func matrixClientStatsEndpoints() []matrixEndpoint {
	return []matrixEndpoint{
		{name: "client stats", method: "GET", path: "/v1/client/stats?node_id=no-such-node", allow: allowNodeRead, okStatus: 404},
	}
}

func TestACLMatrix_ClientStats(t *testing.T) {
	runACLMatrix(t, matrixClientStatsEndpoints(), matrixRows)
}

// TestClientStats_ThroughOfficialClient reads the host statistics of the agent's own node,
// with its node ID and without, and lists the node with and without its resources.
func TestClientStats_ThroughOfficialClient(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	nodeID := ta.Agent.Client().NodeID()

	for _, id := range []string{nodeID, ""} {
		stats, err := c.Nodes().Stats(id, nil)
		must.NoError(t, err)
		must.NotNil(t, stats.Memory)
		must.Positive(t, stats.Memory.Total)
		must.Positive(t, stats.Memory.Available)
		must.NotNil(t, stats.AllocDirStats)
		must.Positive(t, stats.AllocDirStats.Size)
	}
	_, err := c.Nodes().Stats("no-such-node", nil)
	must.ErrorContains(t, err, "404")

	nodes, _, err := c.Nodes().List(nil)
	must.NoError(t, err)
	must.Len(t, 1, nodes)
	must.Nil(t, nodes[0].NodeResources)
	nodes, _, err = c.Nodes().List(&api.QueryOptions{Params: map[string]string{"resources": "true"}})
	must.NoError(t, err)
	must.NotNil(t, nodes[0].NodeResources)
	must.NotNil(t, nodes[0].ReservedResources)

	// The node's history starts with its registration.
	node, _, err := c.Nodes().Info(nodeID, nil)
	must.NoError(t, err)
	must.SliceNotEmpty(t, node.Events)
	must.Eq(t, "Node registered", node.Events[0].Message)
	must.Positive(t, node.Events[0].CreateIndex)
}

// TestAllocList_IndexAndResources: before any allocation exists the list answers index 0, as
// upstream; allocated resources come only with ?resources=true.
func TestAllocList_IndexAndResources(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	allocs, qm, err := c.Allocations().List(nil)
	must.NoError(t, err)
	must.SliceEmpty(t, allocs)
	must.Zero(t, qm.LastIndex)
	_, qm, err = c.Jobs().Allocations("nope", true, nil)
	must.NoError(t, err)
	must.Zero(t, qm.LastIndex)

	job := testJob("web")
	_, _, err = c.Jobs().Register(job, nil)
	must.NoError(t, err)
	allocsIn(t, c, "web", map[string]int{"running": 1})
	allocs, qm, err = c.Allocations().List(nil)
	must.NoError(t, err)
	must.Positive(t, qm.LastIndex)
	must.Len(t, 1, allocs)
	must.Nil(t, allocs[0].AllocatedResources)
	allocs, _, err = c.Allocations().List(&api.QueryOptions{Params: map[string]string{"resources": "true"}})
	must.NoError(t, err)
	must.NotNil(t, allocs[0].AllocatedResources)

	// A running allocation's client reported its (host) network status.
	alloc, _, err := c.Allocations().Info(allocs[0].ID, nil)
	must.NoError(t, err)
	must.NotNil(t, alloc.NetworkStatus)
}
