package scheduler

import (
	"fmt"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestRank_BinPack: by default allocations fill the busiest node that fits; the spread
// algorithm prefers the emptiest.
func TestRank_BinPack(t *testing.T) {
	other := sized(1, 2000, 2000)
	other.ID = "other"
	busy := alloc(other, 0, "n2", structs.AllocClientStatusRunning)
	nodes := []*structs.Node{resNode("n1", 4000, 4000), resNode("n2", 4000, 4000)}
	in := Input{Job: sized(1, 500, 500), Nodes: nodes, NodeAllocs: map[string][]*structs.Allocation{"n2": {busy}}}

	p := Compute(in)
	must.Eq(t, map[string]int{"n2": 1}, placedOn(p))
	meta := p.Place[0].Metrics.ScoreMetaData
	must.Len(t, 2, meta)
	must.Eq(t, "n2", meta[0].NodeID)
	must.Eq(t, 0.625, meta[0].Scores["binpack"])
	must.Eq(t, 0.125, meta[1].Scores["binpack"])
	must.Eq(t, 0.625, meta[0].NormScore)

	in.Algorithm = AlgorithmSpread
	must.Eq(t, map[string]int{"n1": 1}, placedOn(Compute(in)))
}

// TestRank_JobAntiAffinity: allocations of one group spread over equal nodes before
// doubling up, and the penalty shows in the scores.
func TestRank_JobAntiAffinity(t *testing.T) {
	nodes := []*structs.Node{resNode("n1", 40000, 40000), resNode("n2", 40000, 40000), resNode("n3", 40000, 40000)}
	p := Compute(Input{Job: sized(3, 100, 100), Nodes: nodes})
	must.Eq(t, map[string]int{"n1": 1, "n2": 1, "n3": 1}, placedOn(p))
	last := p.Place[2].Metrics.ScoreMetaData
	var penalised int
	for _, m := range last {
		if _, ok := m.Scores["job-anti-affinity"]; ok {
			penalised++
			must.Eq(t, -2.0/3, m.Scores["job-anti-affinity"])
		}
	}
	must.Eq(t, 2, penalised)
}

func TestRank_Affinity(t *testing.T) {
	nodes := []*structs.Node{resNode("n1", 4000, 4000), resNode("n2", 4000, 4000), resNode("n3", 4000, 4000)}
	nodes[1].Meta = map[string]string{"ssd": "true"}
	nodes[2].Meta = map[string]string{"ssd": "true", "gpu": "1"}
	job := sized(1, 100, 100)
	job.Affinities = []*api.Affinity{{LTarget: "${meta.ssd}", RTarget: "true", Operand: "=", Weight: new(int8(50))}}
	job.TaskGroups[0].Affinities = []*api.Affinity{{LTarget: "${meta.gpu}", Operand: "is_set", Weight: new(int8(-100))}}
	p := Compute(Input{Job: job, Nodes: nodes})
	must.Eq(t, map[string]int{"n2": 1}, placedOn(p), must.Sprint("ssd wanted, gpu avoided"))
	meta := p.Place[0].Metrics.ScoreMetaData
	must.Eq(t, "n2", meta[0].NodeID)
	must.Eq(t, 50.0/150, meta[0].Scores["node-affinity"])
}

func rackNodes(n, racks int) []*structs.Node {
	var nodes []*structs.Node
	for i := range n {
		nd := resNode(fmt.Sprintf("n%02d", i), 40000, 40000)
		nd.Meta = map[string]string{"rack": fmt.Sprintf("r%d", i%racks)}
		nodes = append(nodes, nd)
	}
	return nodes
}

func perMeta(p *Plan, nodes []*structs.Node, key string) map[string]int {
	byID := map[string]*structs.Node{}
	for _, n := range nodes {
		byID[n.ID] = n
	}
	out := map[string]int{}
	for _, a := range p.Place {
		out[byID[a.NodeID].Meta[key]]++
	}
	return out
}

func TestRank_Spread(t *testing.T) {
	t.Run("even over the attribute's values", func(t *testing.T) {
		nodes := rackNodes(9, 3)
		job := sized(9, 100, 100)
		job.Spreads = []*api.Spread{{Attribute: "${meta.rack}", Weight: new(int8(100))}}
		p := Compute(Input{Job: job, Nodes: nodes})
		must.Eq(t, map[string]int{"r0": 3, "r1": 3, "r2": 3}, perMeta(p, nodes, "rack"))
		_, ok := p.Place[0].Metrics.ScoreMetaData[0].Scores["allocation-spread"]
		must.True(t, ok)
	})
	t.Run("targets", func(t *testing.T) {
		nodes := rackNodes(8, 2)
		job := sized(10, 100, 100)
		job.TaskGroups[0].Spreads = []*api.Spread{{Attribute: "${meta.rack}", Weight: new(int8(100)),
			SpreadTarget: []*api.SpreadTarget{{Value: "r0", Percent: 70}, {Value: "r1", Percent: 30}}}}
		p := Compute(Input{Job: job, Nodes: nodes})
		must.Eq(t, map[string]int{"r0": 7, "r1": 3}, perMeta(p, nodes, "rack"))
	})
	t.Run("implicit rest", func(t *testing.T) {
		nodes := rackNodes(8, 4)
		job := sized(10, 100, 100)
		job.Spreads = []*api.Spread{{Attribute: "${meta.rack}",
			SpreadTarget: []*api.SpreadTarget{{Value: "r0", Percent: 50}}}}
		p := Compute(Input{Job: job, Nodes: nodes})
		got := perMeta(p, nodes, "rack")
		must.Eq(t, 5, got["r0"])
		must.Eq(t, 5, got["r1"]+got["r2"]+got["r3"])
	})
}

// TestRank_LimitedScanStillFindsRoom: ranking a bounded number of nodes never hides the one
// node with room, however far into the cluster it is.
func TestRank_LimitedScanStillFindsRoom(t *testing.T) {
	other := sized(1, 100, 3900)
	other.ID = "other"
	var nodes []*structs.Node
	onNodes := map[string][]*structs.Allocation{}
	for i := range 500 {
		n := resNode(fmt.Sprintf("n%03d", i), 4000, 4000)
		nodes = append(nodes, n)
		if i != 437 {
			onNodes[n.ID] = []*structs.Allocation{alloc(other, i, n.ID, structs.AllocClientStatusRunning)}
		}
	}
	p := Compute(Input{Job: sized(4, 100, 1200), Nodes: nodes, NodeAllocs: onNodes})
	must.Eq(t, map[string]int{"n437": 3}, placedOn(p))
	must.Eq(t, 1, p.Queued["web"])
	must.Eq(t, 500, p.Failed["web"].NodesExhausted)
}

// TestRank_SpreadAtScale is the benchmark's shape: 300 allocations over 1,000 nodes in 50
// racks land 6 per rack.
// TestRank_SpreadAtScale: the benchmark's shapes place every allocation and meet the spread
// exactly (50 racks, an even share each), also now that a rack ranks only a few of its nodes.
func TestRank_SpreadAtScale(t *testing.T) {
	cases := []struct{ nodes, allocs, perRack int }{
		{nodes: 1000, allocs: 300, perRack: 6},
		{nodes: 1000, allocs: 1200, perRack: 24},
		{nodes: 5000, allocs: 300, perRack: 6},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%d nodes %d allocs", tc.nodes, tc.allocs), func(t *testing.T) {
			nodes := benchNodes(tc.nodes)
			job := sized(tc.allocs, 100, 256)
			job.Datacenters = []string{"dc-1", "dc-2"}
			job.Spreads = []*api.Spread{{Attribute: "${meta.rack}"}}
			p := Compute(Input{Job: job, Nodes: nodes})
			must.Len(t, tc.allocs, p.Place)
			racks := perMeta(p, nodes, "rack")
			must.MapLen(t, 50, racks)
			for rack, n := range racks {
				must.Eq(t, tc.perRack, n, must.Sprintf("rack %s", rack))
			}
		})
	}
}

// TestRank_FailedNodePenalty: the replacement of a failed allocation avoids the node it
// failed on when another fits, and says so in its scores; with no other node it goes back.
func TestRank_FailedNodePenalty(t *testing.T) {
	job := sized(1, 100, 100)
	failed := alloc(job, 0, "n1", structs.AllocClientStatusFailed)
	other := sized(1, 1000, 2000)
	other.ID = "other"
	busy := alloc(other, 0, "n1", structs.AllocClientStatusRunning)
	nodes := []*structs.Node{resNode("n1", 4000, 4000), resNode("n2", 4000, 4000)}
	onNodes := map[string][]*structs.Allocation{"n1": {busy}}

	p := Compute(Input{Job: job, Nodes: nodes, Allocs: []*structs.Allocation{failed}, NodeAllocs: onNodes})
	must.Eq(t, map[string]int{"n2": 1}, placedOn(p), must.Sprint("bin packing alone would pick the busier n1"))
	var penalised bool
	for _, m := range p.Place[0].Metrics.ScoreMetaData {
		if m.NodeID == "n1" {
			penalised = m.Scores["node-reschedule-penalty"] == -1
		}
	}
	must.True(t, penalised)

	p = Compute(Input{Job: job, Nodes: nodes[:1], Allocs: []*structs.Allocation{failed}, NodeAllocs: onNodes})
	must.Eq(t, map[string]int{"n1": 1}, placedOn(p))
}
