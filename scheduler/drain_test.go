package scheduler

import (
	"testing"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// Placement never picks an ineligible or draining node, and an allocation the drainer marked
// is stopped and replaced elsewhere in the same plan; unmarked ones stay where they are.
func TestCompute_DrainAndEligibility(t *testing.T) {
	running := structs.AllocClientStatusRunning
	v0 := testJob(structs.JobTypeService, 2, "raw_exec")
	sys := testJob(structs.JobTypeSystem, 1, "raw_exec")
	draining := func(id string) *structs.Node {
		n := node(id, "dc1", "raw_exec")
		n.Drain = true
		n.SchedulingEligibility = structs.NodeSchedulingIneligible
		return n
	}
	ineligible := func(id string) *structs.Node {
		n := node(id, "dc1", "raw_exec")
		n.SchedulingEligibility = structs.NodeSchedulingIneligible
		return n
	}
	migrate := func(a *structs.Allocation) *structs.Allocation {
		a.DesiredTransition.Migrate = ptr(true)
		return a
	}
	cases := []struct {
		name string
		in   Input
		want view
	}{
		{
			name: "ineligible node gets nothing new",
			in:   Input{Job: v0, Nodes: []*structs.Node{ineligible("n1"), node("n2", "dc1", "raw_exec")}},
			want: view{Place: []string{"web[0]@n2", "web[1]@n2"}, Queued: map[string]int{"web": 0}},
		},
		{
			name: "draining node gets nothing new",
			in:   Input{Job: v0, Nodes: []*structs.Node{draining("n1")}},
			want: view{Queued: map[string]int{"web": 2}},
		},
		{
			name: "unmarked allocation stays on a draining node",
			in: Input{Job: v0, Nodes: []*structs.Node{draining("n1"), node("n2", "dc1", "raw_exec")},
				Allocs: []*structs.Allocation{alloc(v0, 0, "n1", running), alloc(v0, 1, "n2", running)}},
			want: view{Queued: map[string]int{"web": 0}},
		},
		{
			name: "marked allocation is replaced on another node",
			in: Input{Job: v0, Nodes: []*structs.Node{draining("n1"), node("n2", "dc1", "raw_exec")},
				Allocs: []*structs.Allocation{migrate(alloc(v0, 0, "n1", running)), alloc(v0, 1, "n1", running)}},
			want: view{Place: []string{"web[0]@n2"}, Stop: []string{"web[0]@n1: " + ReasonMigrating}, Queued: map[string]int{"web": 0}},
		},
		{
			name: "marked allocation with nowhere to go is still stopped, its replacement queued",
			in: Input{Job: v0, Nodes: []*structs.Node{draining("n1")},
				Allocs: []*structs.Allocation{migrate(alloc(v0, 0, "n1", running)), alloc(v0, 1, "n1", running)}},
			want: view{Stop: []string{"web[0]@n1: " + ReasonMigrating}, Queued: map[string]int{"web": 1}},
		},
		{
			name: "system allocation stays on an ineligible or draining node",
			in: Input{Job: sys, Nodes: []*structs.Node{ineligible("n1"), draining("n2"), node("n3", "dc1", "raw_exec")},
				Allocs: []*structs.Allocation{alloc(sys, 0, "n1", running), alloc(sys, 0, "n2", running), alloc(sys, 0, "n3", running)}},
			want: view{Queued: map[string]int{"web": 0}},
		},
		{
			name: "marked system allocation is stopped, not replaced",
			in: Input{Job: sys, Nodes: []*structs.Node{draining("n1"), node("n2", "dc1", "raw_exec")},
				Allocs: []*structs.Allocation{migrate(alloc(sys, 0, "n1", running)), alloc(sys, 0, "n2", running)}},
			want: view{Stop: []string{"web[0]@n1: " + ReasonMigrating}, Queued: map[string]int{"web": 0}},
		},
		{
			name: "system allocation on a down node is stopped",
			in: Input{Job: sys, Nodes: []*structs.Node{func() *structs.Node {
				n := node("n1", "dc1", "raw_exec")
				n.Status = structs.NodeStatusDown
				return n
			}()}, Allocs: []*structs.Allocation{alloc(sys, 0, "n1", running)}},
			want: view{Stop: []string{"web[0]@n1: " + ReasonNodeRemoved}, Queued: map[string]int{"web": 0}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, viewOf(Compute(tc.in)))
		})
	}
}
