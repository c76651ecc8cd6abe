package nomad

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// SchedulerGetConfiguration answers the stored scheduler configuration, or, while none was
// set, the server's default_scheduler_config at index 0.
func (o *Operator) SchedulerGetConfiguration(args *structs.QueryOptions, reply *structs.SchedulerConfigurationResponse) error {
	if done, err := o.srv.forwardRead("Operator.SchedulerGetConfiguration", args, args, reply); done {
		return err
	}
	aclObj, _, err := o.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	if !aclObj.AllowOperatorRead() {
		return structs.PermissionDenied("operator read required")
	}
	return o.srv.blockingRPC(args, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		config, err := store.SchedulerConfig(ws)
		if err != nil {
			return 0, err
		}
		if config == nil {
			config = o.srv.defaultSchedulerConfig()
		}
		reply.SchedulerConfig = config
		return max(store.Index(tableSchedulerConfigName), 1), nil
	})
}

// tableSchedulerConfigName is the state table whose index answers configuration reads.
const tableSchedulerConfigName = "scheduler_config"

// SchedulerSetConfiguration stores a scheduler configuration (check-and-set with CAS).
func (o *Operator) SchedulerSetConfiguration(args *structs.SchedulerSetConfigRequest, reply *structs.SchedulerSetConfigurationResponse) error {
	if done, err := o.srv.forward("Operator.SchedulerSetConfiguration", args, reply); done {
		return err
	}
	aclObj, actor, err := o.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	if !aclObj.AllowOperatorWrite() {
		return structs.PermissionDenied("operator write required")
	}
	if err := args.Config.Validate(); err != nil {
		return err
	}
	if err := o.srv.checkLeader(); err != nil {
		return err
	}
	args.Actor = actor
	index, resp, err := o.srv.raftApplyResponse(structs.SchedulerConfigRequestType, args)
	if err != nil {
		return err
	}
	reply.Updated, _ = resp.(bool)
	reply.Index = index
	c := args.Config
	// Stored and answered as given, but these change nothing yet: say so where an operator
	// looks (README "Not yet built" lists them too).
	// (PauseEvalBroker is acted on: the leader disables its evaluation broker while it is set.)
	if c.MemoryOversubscriptionEnabled || c.NodeLimitForFeasibilityChecks != 0 ||
		c.PreemptionConfig != (structs.PreemptionConfig{}) {
		o.srv.logger.Warn("scheduler configuration stored with settings this version does not act on",
			"memory_oversubscription", c.MemoryOversubscriptionEnabled,
			"preemption", c.PreemptionConfig != (structs.PreemptionConfig{}), "node_limit", c.NodeLimitForFeasibilityChecks)
	}
	return nil
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
