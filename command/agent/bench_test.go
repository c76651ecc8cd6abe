package agent

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/nomad/api"
)

func benchJob(id string) *api.Job {
	job := api.NewServiceJob(id, id, "global", 50)
	job.Datacenters = []string{"dc1"}
	task := api.NewTask("server", "raw_exec")
	task.Config = map[string]any{"command": "/bin/sleep", "args": []string{"600"}}
	job.AddTaskGroup(api.NewTaskGroup("web", 1).AddTask(task))
	return job
}

// BenchmarkHTTPJobWrites measures register and purge through the whole server: the official
// client over HTTP, the RPC endpoint, Raft with raft-wal on disk, the FSM and memdb. ops/s
// counts completed requests across all clients.
func BenchmarkHTTPJobWrites(b *testing.B) {
	for _, op := range []string{"register", "purge"} {
		for _, clients := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/clients=%d", op, clients), func(b *testing.B) {
				ta := NewTestAgent(b, func(c *Config) {
					c.DataDir = b.TempDir()
					c.LogLevel = "ERROR"
				})
				c := ta.Client("")
				ids := make([]string, b.N)
				for i := range ids {
					ids[i] = fmt.Sprintf("bench-%d", i)
				}
				if op == "purge" {
					for _, id := range ids {
						if _, _, err := c.Jobs().Register(benchJob(id), nil); err != nil {
							b.Fatal(err)
						}
					}
				}
				var next atomic.Int64
				var wg sync.WaitGroup
				b.ReportAllocs()
				b.ResetTimer()
				for w := 0; w < clients; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							i := int(next.Add(1)) - 1
							if i >= b.N {
								return
							}
							var err error
							if op == "register" {
								_, _, err = c.Jobs().Register(benchJob(ids[i]), nil)
							} else {
								_, _, err = c.Jobs().Deregister(ids[i], true, nil)
							}
							if err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
			})
		}
	}
}
