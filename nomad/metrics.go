package nomad

import (
	"context"
	"time"

	metrics "github.com/hashicorp/go-metrics"

	"github.com/nomadfork/nomad/structs"
)

// Metric names follow upstream's. go-metrics prefixes every key with the service name
// ("nomad"), and upstream's server keys start with "nomad" again, so the key
// {"nomad", "rpc", "request"} is published as nomad.nomad.rpc.request, as dashboards built
// for upstream expect.

// countRPC counts one RPC as upstream does: every call is a request, and a read is also a
// query.
func countRPC(read bool) {
	metrics.IncrCounter([]string{"nomad", "rpc", "request"}, 1)
	if read {
		metrics.IncrCounter([]string{"nomad", "rpc", "query"}, 1)
	}
}

// leaderMetricsInterval is how often the leader publishes its gauges: upstream's default
// collection interval.
const leaderMetricsInterval = time.Second

// runLeaderMetrics publishes the leader's gauges until ctx ends: heartbeats being tracked,
// blocked and pending evaluations, job statuses and each task group's summary.
func (s *Server) runLeaderMetrics(ctx context.Context) {
	tick := time.NewTicker(leaderMetricsInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			s.emitLeaderMetrics()
		}
	}
}

func (s *Server) emitLeaderMetrics() {
	s.heartbeats.mu.Lock()
	active := len(s.heartbeats.deadlines)
	s.heartbeats.mu.Unlock()
	metrics.SetGauge([]string{"nomad", "heartbeat", "active"}, float32(active))

	store := s.State()
	var blocked, pending int
	if evals, err := store.EvalsByStatus(nil, structs.EvalStatusBlocked); err == nil {
		blocked = len(evals)
	}
	if evals, err := store.EvalsByStatus(nil, structs.EvalStatusPending); err == nil {
		pending = len(evals)
	}
	metrics.SetGauge([]string{"nomad", "blocked_evals", "total_blocked"}, float32(blocked))
	metrics.SetGauge([]string{"nomad", "broker", "total_pending"}, float32(pending))

	jobs, err := store.Jobs(nil, structs.AllNamespacesSentinel, "")
	if err != nil {
		return
	}
	statuses := map[string]int{structs.JobStatusPending: 0, structs.JobStatusRunning: 0, structs.JobStatusDead: 0}
	for _, job := range jobs {
		statuses[job.Status]++
		summary, err := store.JobSummaryByID(nil, job.Namespace, job.ID)
		if err != nil || summary == nil {
			continue
		}
		for group, tg := range summary.Summary {
			labels := []metrics.Label{
				{Name: "job", Value: job.ID},
				{Name: "task_group", Value: group},
				{Name: "namespace", Value: job.Namespace},
			}
			if job.ParentID != "" {
				labels = append(labels, metrics.Label{Name: "parent_id", Value: job.ParentID})
			}
			for name, v := range map[string]int{
				"queued": tg.Queued, "complete": tg.Complete, "failed": tg.Failed, "running": tg.Running,
				"starting": tg.Starting, "lost": tg.Lost, "unknown": tg.Unknown,
			} {
				metrics.SetGaugeWithLabels([]string{"nomad", "job_summary", name}, float32(v), labels)
			}
		}
	}
	for status, n := range statuses {
		metrics.SetGauge([]string{"nomad", "job_status", status}, float32(n))
	}
}
