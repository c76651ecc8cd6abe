package scheduler

import (
	"fmt"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// benchNodes is a cluster of n nodes over 50 racks (meta.rack) in dc-1 and dc-2, the shape
// of upstream's own scheduler benchmark.
func benchNodes(n int) []*structs.Node {
	nodes := make([]*structs.Node, n)
	for i := range nodes {
		nd := resNode(fmt.Sprintf("node-%05d", i), 16000, 32000)
		nd.Datacenter = fmt.Sprintf("dc-%d", i%2+1)
		nd.Meta = map[string]string{"rack": fmt.Sprintf("r%02d", i%50)}
		nodes[i] = nd
	}
	return nodes
}

// BenchmarkCompute is one evaluation of a service job processed end to end in memory,
// without submitting the plan.
func BenchmarkCompute(b *testing.B) {
	for _, tc := range []struct{ nodes, allocs int }{{1000, 300}, {1000, 1200}, {5000, 300}} {
		for _, spread := range []bool{true, false} {
			name := fmt.Sprintf("nodes=%d/allocs=%d/spread=%t", tc.nodes, tc.allocs, spread)
			b.Run(name, func(b *testing.B) {
				nodes := benchNodes(tc.nodes)
				job := sized(tc.allocs, 100, 256)
				job.Datacenters = []string{"dc-1", "dc-2"}
				if spread {
					job.Spreads = []*api.Spread{{Attribute: "${meta.rack}"}}
				}
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					p := Compute(Input{Job: job, Nodes: nodes})
					if len(p.Place) != tc.allocs {
						b.Fatalf("placed %d of %d", len(p.Place), tc.allocs)
					}
				}
				b.ReportMetric(float64(tc.allocs*b.N)/b.Elapsed().Seconds(), "placements/s")
			})
		}
	}
}
