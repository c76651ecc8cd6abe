package nomad

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// operatorSchedulerGetConfiguration answers the stored scheduler configuration, or, while
// none was set, the server's default_scheduler_config at index 0.
var operatorSchedulerGetConfiguration = read("Operator.SchedulerGetConfiguration", spec[structs.QueryOptions, structs.SchedulerConfigurationResponse]{
	Authorize: opsOperatorRead[structs.QueryOptions]("operator read required"),
	Serve: func(c *rpcCall, req *structs.QueryOptions, reply *structs.SchedulerConfigurationResponse) error {
		return c.srv.blockingRPC(req, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			config, err := store.SchedulerConfig(ws)
			if err != nil {
				return 0, err
			}
			if config == nil {
				config = c.srv.defaultSchedulerConfig()
			}
			reply.SchedulerConfig = config
			return max(store.Index(tableSchedulerConfigName), 1), nil
		})
	},
})

// tableSchedulerConfigName is the state table whose index answers configuration reads.
const tableSchedulerConfigName = "scheduler_config"

// operatorSchedulerSetConfiguration stores a scheduler configuration (check-and-set with CAS).
var operatorSchedulerSetConfiguration = write("Operator.SchedulerSetConfiguration", spec[structs.SchedulerSetConfigRequest, structs.SchedulerSetConfigurationResponse]{
	Authorize: opsOperatorWrite[structs.SchedulerSetConfigRequest]("operator write required"),
	Validate:  func(req *structs.SchedulerSetConfigRequest) error { return req.Config.Validate() },
	Serve: func(c *rpcCall, req *structs.SchedulerSetConfigRequest, reply *structs.SchedulerSetConfigurationResponse) error {
		req.Actor = c.actor
		index, resp, err := c.srv.raftApplyResponse(structs.SchedulerConfigRequestType, req)
		if err != nil {
			return err
		}
		reply.Updated, _ = resp.(bool)
		reply.Index = index
		conf := req.Config
		// Stored and answered as given, but these change nothing yet: say so where an operator
		// looks (README "Not yet built" lists them too).
		// (PauseEvalBroker is acted on: the leader disables its evaluation broker while it is set.)
		if conf.MemoryOversubscriptionEnabled || conf.NodeLimitForFeasibilityChecks != 0 ||
			conf.PreemptionConfig != (structs.PreemptionConfig{}) {
			c.srv.logger.Warn("scheduler configuration stored with settings this version does not act on",
				"memory_oversubscription", conf.MemoryOversubscriptionEnabled,
				"preemption", conf.PreemptionConfig != (structs.PreemptionConfig{}), "node_limit", conf.NodeLimitForFeasibilityChecks)
		}
		return nil
	},
})

// SchedulerGetConfiguration answers the scheduler configuration in force.
func (o *Operator) SchedulerGetConfiguration(args *structs.QueryOptions, reply *structs.SchedulerConfigurationResponse) error {
	return operatorSchedulerGetConfiguration.Call(o.srv, args, reply)
}

// SchedulerSetConfiguration stores a scheduler configuration.
func (o *Operator) SchedulerSetConfiguration(args *structs.SchedulerSetConfigRequest, reply *structs.SchedulerSetConfigurationResponse) error {
	return operatorSchedulerSetConfiguration.Call(o.srv, args, reply)
}

// defaultSchedulerConfig is the server's default_scheduler_config.
func (s *Server) defaultSchedulerConfig() *structs.SchedulerConfiguration {
	algorithm := s.config.SchedulerAlgorithm
	if algorithm == "" {
		algorithm = structs.SchedulerAlgorithmBinpack
	}
	return &structs.SchedulerConfiguration{SchedulerAlgorithm: algorithm, PreemptionConfig: s.config.PreemptionConfig}
}

// schedulerConfig is the configuration in force: the stored one, else the default.
func (s *Server) schedulerConfig() *structs.SchedulerConfiguration {
	return s.schedulerConfigIn(s.State())
}

// schedulerConfigIn is schedulerConfig as store (a point-in-time view, say) holds it.
func (s *Server) schedulerConfigIn(store *state.StateStore) *structs.SchedulerConfiguration {
	config, err := store.SchedulerConfig(nil)
	if err != nil || config == nil {
		return s.defaultSchedulerConfig()
	}
	return config
}

// schedulerAlgorithm is how the scheduler ranks nodes for a job of pool, as store (the
// evaluation's point-in-time view) holds it: the pool's own scheduler_algorithm when it
// sets one, else the cluster's configuration.
func (s *Server) schedulerAlgorithm(store *state.StateStore, pool string) string {
	if p, err := store.NodePoolByName(nil, pool); err == nil && p != nil &&
		p.SchedulerConfiguration != nil && p.SchedulerConfiguration.SchedulerAlgorithm != "" {
		return p.SchedulerConfiguration.SchedulerAlgorithm
	}
	return s.schedulerConfigIn(store).SchedulerAlgorithm
}

// registrationRejected refuses job registration and scaling to every token but a management
// one while the scheduler configuration's RejectJobRegistration is set.
func (s *Server) registrationRejected(aclObj *acl.ACL) error {
	if aclObj.IsManagement() || !s.schedulerConfig().RejectJobRegistration {
		return nil
	}
	return structs.PermissionDenied("job registration, dispatch, and scale are disabled by the scheduler configuration")
}
