package agent

import (
	"net/http"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

func (s *HTTPServer) schedulerConfigRead(w http.ResponseWriter, r *http.Request) (any, error) {
	args := queryOptions(r)
	return read(s, w, "Operator.SchedulerGetConfiguration", &args, func(reply *structs.SchedulerConfigurationResponse) (any, error) {
		c := reply.SchedulerConfig
		// Upstream's wire shape: the configuration beside the read's metadata.
		return &struct {
			SchedulerConfig *api.SchedulerConfiguration
			structs.QueryMeta
		}{
			SchedulerConfig: &api.SchedulerConfiguration{
				SchedulerAlgorithm:            api.SchedulerAlgorithm(c.SchedulerAlgorithm),
				PreemptionConfig:              api.PreemptionConfig(c.PreemptionConfig),
				MemoryOversubscriptionEnabled: c.MemoryOversubscriptionEnabled,
				RejectJobRegistration:         c.RejectJobRegistration,
				PauseEvalBroker:               c.PauseEvalBroker,
				NodeLimitForFeasibilityChecks: c.NodeLimitForFeasibilityChecks,
				CreateIndex:                   c.CreateIndex,
				ModifyIndex:                   c.ModifyIndex,
			},
			QueryMeta: reply.QueryMeta,
		}, nil
	})
}

func (s *HTTPServer) schedulerConfigWrite(w http.ResponseWriter, r *http.Request) (any, error) {
	var body api.SchedulerConfiguration
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	check, hasCAS, err := casQuery(r)
	if err != nil {
		return nil, err
	}
	args := structs.SchedulerSetConfigRequest{
		Config: structs.SchedulerConfiguration{
			SchedulerAlgorithm:            string(body.SchedulerAlgorithm),
			PreemptionConfig:              structs.PreemptionConfig(body.PreemptionConfig),
			MemoryOversubscriptionEnabled: body.MemoryOversubscriptionEnabled,
			RejectJobRegistration:         body.RejectJobRegistration,
			PauseEvalBroker:               body.PauseEvalBroker,
			NodeLimitForFeasibilityChecks: body.NodeLimitForFeasibilityChecks,
			ModifyIndex:                   check,
		},
		CAS:          hasCAS,
		WriteRequest: writeRequest(r),
	}
	if args.Config.SchedulerAlgorithm == "" {
		args.Config.SchedulerAlgorithm = structs.SchedulerAlgorithmBinpack
	}
	return write(s, w, "Operator.SchedulerSetConfiguration", &args, wholeReply[structs.SchedulerSetConfigurationResponse])
}
