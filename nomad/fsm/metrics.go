package fsm

import (
	"strings"
	"time"
	"unicode"

	metrics "github.com/hashicorp/go-metrics"

	"github.com/nomadfork/nomad/structs"
)

// Metric names follow upstream's (see nomad/metrics.go for why keys start with "nomad").

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
