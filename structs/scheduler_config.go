package structs

// SchedulerConfiguration is the cluster's scheduler settings, set through
// /v1/operator/scheduler/configuration and stored through Raft. Until one is set, the
// server's default_scheduler_config answers (nothing is written at start).
type SchedulerConfiguration struct {
	SchedulerAlgorithm            string
	PreemptionConfig              PreemptionConfig
	MemoryOversubscriptionEnabled bool
	RejectJobRegistration         bool
	PauseEvalBroker               bool
	NodeLimitForFeasibilityChecks uint
	CreateIndex                   uint64
	ModifyIndex                   uint64
}

// PreemptionConfig says which schedulers may preempt lower-priority allocations.
type PreemptionConfig struct {
	SystemSchedulerEnabled   bool
	SysBatchSchedulerEnabled bool
	BatchSchedulerEnabled    bool
	ServiceSchedulerEnabled  bool
}

// Scheduler algorithms.
const (
	SchedulerAlgorithmBinpack = "binpack"
	SchedulerAlgorithmSpread  = "spread"
)

// Validate checks a configuration a caller wants stored.
func (c *SchedulerConfiguration) Validate() error {
	switch c.SchedulerAlgorithm {
	case SchedulerAlgorithmBinpack, SchedulerAlgorithmSpread:
	default:
		return BadRequest("invalid SchedulerAlgorithm %q: must be %q or %q", c.SchedulerAlgorithm, SchedulerAlgorithmBinpack, SchedulerAlgorithmSpread)
	}
	return nil
}

// SchedulerSetConfigRequest stores a scheduler configuration; with CAS only while the stored
// one's ModifyIndex is still Config.ModifyIndex (0: none stored yet).
type SchedulerSetConfigRequest struct {
	Config SchedulerConfiguration
	CAS    bool
	Actor  *Actor
	WriteRequest
}

// SchedulerSetConfigurationResponse answers SchedulerSetConfigRequest; Updated is false when
// the check-and-set failed.
type SchedulerSetConfigurationResponse struct {
	Updated bool
	WriteMeta
}

// SchedulerConfigurationResponse answers a read.
type SchedulerConfigurationResponse struct {
	SchedulerConfig *SchedulerConfiguration
	QueryMeta
}
