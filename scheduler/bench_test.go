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

// BenchmarkCompute_Ports is BenchmarkCompute's 1000-node case with two dynamic ports per
// allocation, one on the default network and one on a host network every node has: the
// per-address port counting of every candidate node.
func BenchmarkCompute_Ports(b *testing.B) {
	nodes := benchNodes(1000)
	for i, n := range nodes {
		last := fmt.Sprint(i%250 + 1)
		n.NodeResources.NodeNetworks = []*structs.NodeNetworkResource{{Mode: "host", Device: "eth0", Addresses: []structs.NodeNetworkAddress{
			{Family: "ipv4", Alias: "default", Address: "10.0.0." + last},
			{Family: "ipv4", Alias: "public", Address: "192.168.0." + last, ReservedPorts: "20000-20010"}}}}
	}
	job := withPorts(sized(1200, 100, 256), nil, []api.Port{{Label: "http"}, {Label: "pub", HostNetwork: "public"}})
	job.Datacenters = []string{"dc-1", "dc-2"}
	b.ReportAllocs()
	for b.Loop() {
		p := Compute(Input{Job: job, Nodes: nodes})
		if len(p.Place) != 1200 {
			b.Fatalf("placed %d of 1200", len(p.Place))
		}
	}
	b.ReportMetric(float64(1200*b.N)/b.Elapsed().Seconds(), "placements/s")
}
