package nomad

import (
	"fmt"
	"testing"
	"time"

	"github.com/nomadfork/nomad/structs"
)

// BenchmarkScheduleEndToEnd registers a 5,000-allocation job on 1,000 nodes registered
// through the Node endpoint and measures the time until every allocation is placed: the
// worker's batches of worker.MaxPlacementsPerPlan, each through Raft (raft-wal on disk).
func BenchmarkScheduleEndToEnd(b *testing.B) {
	const nodes, count = 1000, 5000
	for b.Loop() {
		b.StopTimer()
		srv := testServer(b, func(c *Config) {
			c.DataDir = b.TempDir()
			c.NumSchedulers = 1
			c.MinHeartbeatTTL = 10 * time.Minute // the nodes stay up without heartbeats
		})
		for i := range nodes {
			n := sizedNode(fmt.Sprintf("node-%04d", i), 32000)
			n.SecretID = fmt.Sprintf("secret-%d", i)
			var reply structs.NodeUpdateResponse
			if err := srv.Endpoints.Node.Register(&structs.NodeRegisterRequest{Node: n}, &reply); err != nil {
				b.Fatal(err)
			}
		}
		job := memJob("big", count, 64)
		b.StartTimer()
		registerJobB(b, srv, job)
		deadline := time.Now().Add(5 * time.Minute)
		for {
			all, err := srv.State().AllocsByJob(nil, "default", "big")
			if err != nil {
				b.Fatal(err)
			}
			if len(all) == count {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("placed %d of %d", len(all), count)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	b.ReportMetric(float64(count*b.N)/b.Elapsed().Seconds(), "placements/s")
}
