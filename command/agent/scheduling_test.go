package agent

import (
	"runtime"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// TestScheduling_NodeResourcesThroughAPI: the official client decodes the node's resources,
// reservations and fingerprinted attributes as upstream's.
func TestScheduling_NodeResourcesThroughAPI(t *testing.T) {
	ta := NewTestClientAgent(t, func(c *Config) {
		c.Client.CPUTotalCompute = 4000
		c.Client.MemoryTotalMB = 2048
		c.Client.MinDynamicPort, c.Client.MaxDynamicPort = 21000, 21100
		c.Client.Reserved = &ReservedConfig{CPU: 100, MemoryMB: 256, DiskMB: 10, ReservedPorts: "22,8080"}
		c.Client.Meta = map[string]string{"rack": "r1"}
		c.Client.NodeClass = "fast"
	})
	c := ta.Client("")
	node, _, err := c.Nodes().Info(ta.Agent.Client().NodeID(), nil)
	must.NoError(t, err)
	must.Eq(t, int64(4000), node.NodeResources.Cpu.CpuShares)
	must.Eq(t, int64(2048), node.NodeResources.Memory.MemoryMB)
	must.Positive(t, node.NodeResources.Disk.DiskMB)
	must.Eq(t, 21000, node.NodeResources.MinDynamicPort)
	must.Eq(t, 21100, node.NodeResources.MaxDynamicPort)
	must.Eq(t, uint64(100), node.ReservedResources.Cpu.CpuShares)
	must.Eq(t, uint64(256), node.ReservedResources.Memory.MemoryMB)
	must.Eq(t, uint64(10), node.ReservedResources.Disk.DiskMB)
	must.Eq(t, "22,8080", node.ReservedResources.Networks.ReservedHostPorts)
	must.Eq(t, runtime.GOOS, node.Attributes["kernel.name"])
	must.Eq(t, runtime.GOARCH, node.Attributes["cpu.arch"])
	must.Eq(t, "1", node.Attributes["driver.raw_exec"])
	must.Eq(t, "r1", node.Meta["rack"])
	must.Eq(t, "fast", node.NodeClass)
	if runtime.GOOS == "linux" {
		must.NotEq(t, "", node.Attributes["kernel.version"])
		must.NotEq(t, "", node.Attributes["cpu.numcores"])
	}
}

// TestScheduling_ExhaustedAndFilteredThroughAPI runs the two examples against an
// agent whose node has 1000 MB, read back with the official client: 4 allocations of 400 MB
// place 2 and block 2 on memory; a plan9 constraint places nothing and says why.
func TestScheduling_ExhaustedAndFilteredThroughAPI(t *testing.T) {
	ta := NewTestClientAgent(t, func(c *Config) { c.Client.MemoryTotalMB = 1000 })
	c := ta.Client("")

	job := testJob("big")
	job.TaskGroups[0].Count = new(4)
	job.TaskGroups[0].Tasks[0].Resources = &api.Resources{CPU: new(50), MemoryMB: new(400)}
	resp, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	eval := completedEval(t, c, resp.EvalID)
	must.Eq(t, map[string]int{"web": 2}, eval.QueuedAllocations)
	m := eval.FailedTGAllocs["web"]
	must.NotNil(t, m)
	must.Eq(t, map[string]int{"memory": 1}, m.DimensionExhausted)
	must.Eq(t, 1, m.NodesExhausted)
	must.Eq(t, 1, m.CoalescedFailures)
	blocked, _, err := c.Evaluations().Info(eval.BlockedEval, nil)
	must.NoError(t, err)
	must.Eq(t, "blocked", blocked.Status)
	summary, _, err := c.Jobs().Summary("big", nil)
	must.NoError(t, err)
	must.Eq(t, 2, summary.Summary["web"].Queued)
	allocs := allocsIn(t, c, "big", map[string]int{"running": 2})
	full, _, err := c.Allocations().Info(allocs[0].ID, nil)
	must.NoError(t, err)
	must.Eq(t, int64(400), full.AllocatedResources.Tasks["sleep"].Memory.MemoryMB)
	must.SliceNotEmpty(t, full.Metrics.ScoreMetaData)
	must.Positive(t, full.Metrics.ScoreMetaData[0].Scores["binpack"])

	plan9 := testJob("plan9")
	plan9.Constraints = []*api.Constraint{api.NewConstraint("${attr.kernel.name}", "=", "plan9")}
	resp, _, err = c.Jobs().Register(plan9, nil)
	must.NoError(t, err)
	eval = completedEval(t, c, resp.EvalID)
	m = eval.FailedTGAllocs["web"]
	must.NotNil(t, m)
	must.Eq(t, map[string]int{"${attr.kernel.name} = plan9": 1}, m.ConstraintFiltered)
	must.Eq(t, 1, m.NodesFiltered)
}

func completedEval(t *testing.T, c *api.Client, id string) *api.Evaluation {
	t.Helper()
	var eval *api.Evaluation
	eventually(t, 10*time.Second, "evaluation "+id+" to complete", func() (bool, string) {
		var err error
		eval, _, err = c.Evaluations().Info(id, nil)
		if err != nil {
			return false, err.Error()
		}
		return eval.Status == "complete", eval.Status
	})
	return eval
}

// TestSecurity_PlacementBadInputIs400: a constraint the scheduler could not evaluate is a 400
// naming it at register time.
func TestSecurity_PlacementBadInputIs400(t *testing.T) {
	ta := NewTestAgent(t, nil)
	c := ta.Client("")
	job := testJob("bad")
	job.Constraints = []*api.Constraint{api.NewConstraint("${meta.rack}", "regexp", "(")}
	_, _, err := c.Jobs().Register(job, nil)
	must.ErrorContains(t, err, "400")
	must.ErrorContains(t, err, `constraint 0: invalid regexp "("`)

	job = testJob("bad")
	job.Spreads = []*api.Spread{{Attribute: "${meta.rack}", SpreadTarget: []*api.SpreadTarget{{Value: "a", Percent: 80}, {Value: "b", Percent: 80}}}}
	_, _, err = c.Jobs().Register(job, nil)
	must.ErrorContains(t, err, "400")
	must.ErrorContains(t, err, "percentages must add up to at most 100, got 160")
}
