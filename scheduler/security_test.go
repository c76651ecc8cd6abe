package scheduler

import (
	"fmt"
	"testing"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// One plan places at most MaxPlacements allocations, whatever the count, and says how many
// it left; the next plan, seeing the first one's allocations, goes on from there.
func TestSecurity_PlanPlacementsBounded(t *testing.T) {
	job := testJob(structs.JobTypeService, 5000, "raw_exec")
	nodes := []*structs.Node{node("n1", "dc1", "raw_exec"), node("n2", "dc1", "raw_exec"), node("n3", "dc1", "raw_exec")}

	var allocs []*structs.Allocation
	for round := 1; round <= 5; round++ {
		plan := Compute(Input{Job: job, Allocs: allocs, Nodes: nodes, MaxPlacements: 1000})
		must.Len(t, 1000, plan.Place, must.Sprintf("round %d", round))
		must.Eq(t, 5000-1000*round, plan.Deferred["web"], must.Sprintf("round %d", round))
		must.Eq(t, 5000-1000*round, plan.DeferredTotal())
		must.Eq(t, 0, plan.Queued["web"])
		for i, a := range plan.Place {
			// Names continue where the last plan stopped, without gaps or repeats.
			must.Eq(t, structs.AllocName(job.ID, "web", 1000*(round-1)+i), a.Name)
			a.ID = fmt.Sprintf("a-%d-%d", round, i)
			allocs = append(allocs, a)
		}
	}
	plan := Compute(Input{Job: job, Allocs: allocs, Nodes: nodes, MaxPlacements: 1000})
	must.True(t, plan.IsNoOp())
	must.Eq(t, 0, plan.DeferredTotal())
}

// A count far beyond anything placeable costs neither memory nor time per allocation: with
// no feasible node the whole rest is queued at once, with a full plan deferred at once.
func TestSecurity_PlanHugeCountIsCheap(t *testing.T) {
	const huge = 99_999_999_999
	cases := []struct {
		name         string
		nodes        []*structs.Node
		wantPlaced   int
		wantQueued   int
		wantDeferred int
	}{
		{name: "no feasible node", nodes: []*structs.Node{node("n1", "dc1", "docker")}, wantQueued: huge},
		{name: "feasible nodes", nodes: []*structs.Node{node("n1", "dc1", "raw_exec")}, wantPlaced: 1000, wantDeferred: huge - 1000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan := Compute(Input{Job: testJob(structs.JobTypeService, huge, "raw_exec"), Nodes: tc.nodes, MaxPlacements: 1000})
			must.Len(t, tc.wantPlaced, plan.Place)
			must.Eq(t, tc.wantQueued, plan.Queued["web"])
			must.Eq(t, tc.wantDeferred, plan.Deferred["web"])
			if tc.wantQueued > 0 {
				must.Eq(t, tc.wantQueued-1, plan.Failed["web"].CoalescedFailures)
			}
		})
	}
}

// A system job places one allocation per node, also in batches.
func TestSecurity_PlanSystemPlacementsBounded(t *testing.T) {
	var nodes []*structs.Node
	for i := range 25 {
		nodes = append(nodes, node(fmt.Sprintf("n%02d", i), "dc1", "raw_exec"))
	}
	job := testJob(structs.JobTypeSystem, 1, "raw_exec")
	plan := Compute(Input{Job: job, Nodes: nodes, MaxPlacements: 10})
	must.Len(t, 10, plan.Place)
	must.Eq(t, 15, plan.Deferred["web"])
}
