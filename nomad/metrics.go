package nomad

import (
	"context"
	"strings"
	"time"
	"unicode"

	metrics "github.com/hashicorp/go-metrics"

	"github.com/nomadfork/nomad/structs"
)

// Metric names follow upstream's. go-metrics prefixes every key with the service name
// ("nomad"), and upstream's server keys start with "nomad" again, so the key
// {"nomad", "rpc", "request"} is published as nomad.nomad.rpc.request, as dashboards built
// for upstream expect.

// fsmMetricNames maps a Raft message type to the name of its apply timer,
// nomad.nomad.fsm.<name>. Where upstream has a timer for the same write, the name is
// upstream's; other types use their table name in snake case (fsmMetricName).
var fsmMetricNames = map[structs.MessageType]string{
	structs.JobRegisterRequestType:                  "register_job",
	structs.JobDeregisterRequestType:                "deregister_job",
	structs.JobBatchDeregisterRequestType:           "batch_deregister_job",
	structs.EvalUpdateRequestType:                   "update_eval",
	structs.EvalDeleteRequestType:                   "delete_eval",
	structs.NodeRegisterRequestType:                 "register_node",
	structs.NodeDeregisterRequestType:               "deregister_node",
	structs.NodeUpdateStatusRequestType:             "node_status_update",
	structs.NodeUpdateDrainRequestType:              "node_drain_update",
	structs.BatchNodeUpdateDrainRequestType:         "batch_node_drain_update",
	structs.NodeUpdateEligibilityRequestType:        "node_eligibility_update",
	structs.ApplyPlanResultsRequestType:             "apply_plan_results",
	structs.AllocClientUpdateRequestType:            "alloc_client_update",
	structs.AllocUpdateDesiredTransitionRequestType: "alloc_update_desired_transition",
	structs.DeploymentStatusUpdateRequestType:       "deployment_status_update",
	structs.DeploymentPromoteRequestType:            "deployment_promotion",
	structs.DeploymentAllocHealthRequestType:        "deployment_alloc_health",
	structs.JobStabilityRequestType:                 "job_stability",
	structs.ACLPolicyUpsertRequestType:              "upsert_acl_policy",
	structs.ACLPolicyDeleteRequestType:              "delete_acl_policy",
	structs.ACLTokenUpsertRequestType:               "upsert_acl_token",
	structs.ACLTokenDeleteRequestType:               "delete_acl_token",
	structs.ACLTokenBootstrapRequestType:            "acl_token_bootstrap",
	structs.NamespaceUpsertRequestType:              "upsert_namespaces",
	structs.NamespaceDeleteRequestType:              "delete_namespaces",
	structs.SchedulerConfigRequestType:              "apply_scheduler_config",
	structs.AutopilotRequestType:                    "autopilot",
	structs.VarApplyStateRequestType:                "apply_variable_state",
	structs.NodePoolUpsertRequestType:               "apply_node_pool_upsert",
	structs.NodePoolDeleteRequestType:               "apply_node_pool_delete",
}

// fsmMetricName is the apply timer's name for t.
func fsmMetricName(t structs.MessageType) string {
	if name, ok := fsmMetricNames[t]; ok {
		return name
	}
	return snakeCase(t.String())
}

// snakeCase turns "PurgeRecordDelete" into "purge_record_delete".
func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// timedCommand wraps an FSM handler with its apply timer. The clock read here only feeds the
// metric; it never reaches state.
func timedCommand(t structs.MessageType, h commandHandler) commandHandler {
	key := []string{"nomad", "fsm", fsmMetricName(t)}
	return func(buf []byte, index uint64) any {
		defer metrics.MeasureSince(key, time.Now())
		return h(buf, index)
	}
}

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
