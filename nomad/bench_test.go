package nomad

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/nomad/stream"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// benchServer is a server whose Raft log is raft-wal on disk, as in production.
func benchServer(b *testing.B) *Server {
	return testServer(b, func(c *Config) {
		c.DataDir = b.TempDir()
		c.EventBufferSize = 100
	})
}

// subscribeAll attaches n subscribers to the Job topic that drain their streams, each noting
// the newest index it read (the cheapest consumer there is, so what is measured is the
// broker), and returns a function that waits until each has seen index.
func subscribeAll(b *testing.B, srv *Server, n int) func(index uint64) {
	seen := make([]atomic.Uint64, n)
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	for i := range seen {
		sub, err := srv.Endpoints.Event.Subscribe(&EventStreamRequest{
			Topics: map[structs.Topic][]string{structs.TopicJob: {"*"}}, Namespace: "default",
			Index: srv.State().LatestIndex() + 1,
		})
		must.NoError(b, err)
		b.Cleanup(sub.Unsubscribe)
		go func(sub *stream.Subscription, last *atomic.Uint64) {
			for {
				batch, err := sub.Next(ctx)
				if err != nil {
					return
				}
				last.Store(batch.Index)
			}
		}(sub, &seen[i])
	}
	return func(index uint64) {
		for i := range seen {
			for seen[i].Load() < index {
				time.Sleep(100 * time.Microsecond)
			}
		}
	}
}

// BenchmarkEventFanout measures events per second from the Raft apply to every subscriber.
func BenchmarkEventFanout(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			srv := benchServer(b)
			waitAll := subscribeAll(b, srv, n)
			job := mock.Job()
			b.ReportAllocs()
			b.ResetTimer()
			var last uint64
			for i := 0; i < b.N; i++ {
				j := job.Copy()
				j.Meta = map[string]string{"i": fmt.Sprint(i)}
				last = registerJobB(b, srv, j)
			}
			waitAll(last)
			b.StopTimer()
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "deliveries/s")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkRegisterWithSubscribers measures register throughput with and without 1,000
// subscribers attached: the difference is what the event stream costs the write path.
func BenchmarkRegisterWithSubscribers(b *testing.B) {
	for _, n := range []int{0, 1000} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			srv := benchServer(b)
			if n > 0 {
				subscribeAll(b, srv, n)
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpuBefore := processCPU()
			for i := 0; i < b.N; i++ {
				j := mock.JobWithID(fmt.Sprintf("job-%d", i))
				registerJobB(b, srv, j)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "registers/s")
			// CPU time of the whole process per register: what the subscribers cost the
			// machine, less disturbed than wall time by other work on it.
			b.ReportMetric(float64((processCPU()-cpuBefore).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// BenchmarkRegisterPurgeConcurrent registers and purges jobs from 1 and 8 concurrent callers
// through the RPC endpoints, Raft (raft-wal on disk), the FSM and memdb.
func BenchmarkRegisterPurgeConcurrent(b *testing.B) {
	for _, workers := range []int{1, 8} {
		b.Run(fmt.Sprintf("clients=%d", workers), func(b *testing.B) {
			registerPurgeFrom(b, benchServer(b), workers)
		})
	}
}

// registerPurgeFrom registers and purges b.N jobs (or a few more) through srv's endpoints
// from workers concurrent callers, and reports the writes per second.
func registerPurgeFrom(b *testing.B, srv *Server, workers int) {
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	per := b.N/workers + 1
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				id := fmt.Sprintf("job-%d-%d", w, i)
				registerJobB(b, srv, mock.JobWithID(id))
				var reply structs.JobDeregisterResponse
				if err := srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{JobID: id, Purge: true,
					WriteRequest: structs.WriteRequest{Namespace: "default"}}, &reply); err != nil {
					b.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	b.ReportMetric(float64(per*workers*2)/b.Elapsed().Seconds(), "writes/s")
}

func registerJobB(b *testing.B, srv *Server, job *structs.Job) uint64 {
	var reply structs.JobRegisterResponse
	if err := srv.Endpoints.Job.Register(&structs.JobRegisterRequest{Job: job,
		WriteRequest: structs.WriteRequest{Namespace: job.Namespace}}, &reply); err != nil {
		b.Fatal(err)
	}
	return reply.Index
}

// processCPU is the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkReplicatedWrites registers and purges jobs through the leader of a 3-server
// cluster (raft-wal on disk), from 1 and 8 concurrent callers: every write is stored by a
// majority before it is applied. pipelined=true measures Raft's pipelined replication, which
// the servers turn off (hashicorp/raft issue 612, see unpipelinedTransport).
func BenchmarkReplicatedWrites(b *testing.B) {
	for _, pipelined := range []bool{false, true} {
		for _, workers := range []int{1, 8} {
			b.Run(fmt.Sprintf("pipelined=%v/clients=%d", pipelined, workers), func(b *testing.B) {
				servers := testCluster(b, 3, func(c *Config) {
					c.DataDir = b.TempDir()
					c.EventBufferSize = 100
					c.raftPipelining = pipelined
				})
				leader := leaderOf(servers)
				registerPurgeFrom(b, leader, workers)
			})
		}
	}
}
