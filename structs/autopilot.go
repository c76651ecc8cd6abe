package structs

import "time"

// AutopilotConfig is the operator's autopilot configuration, stored through Raft. Field names
// are upstream's wire names (api.AutopilotConfiguration).
type AutopilotConfig struct {
	// CleanupDeadServers removes servers that gossip reports failed from the Raft
	// configuration.
	CleanupDeadServers bool
	// LastContactThreshold is how long a server may go without hearing from the leader and
	// still count as healthy.
	LastContactThreshold time.Duration
	// MaxTrailingLogs is how many entries a server may lag behind the leader and still count
	// as healthy.
	MaxTrailingLogs uint64
	// MinQuorum is the fewest voters cleanup leaves behind.
	MinQuorum uint
	// ServerStabilizationTime is how long a server must be healthy to count as stable.
	ServerStabilizationTime time.Duration

	// Enterprise features upstream; stored and echoed, never acted on.
	EnableRedundancyZones   bool
	DisableUpgradeMigration bool
	EnableCustomUpgrades    bool

	CreateIndex uint64
	ModifyIndex uint64
}

// DefaultAutopilotConfig is upstream's default autopilot block.
func DefaultAutopilotConfig() *AutopilotConfig {
	return &AutopilotConfig{
		CleanupDeadServers:      true,
		LastContactThreshold:    200 * time.Millisecond,
		MaxTrailingLogs:         250,
		ServerStabilizationTime: 10 * time.Second,
	}
}

// AutopilotSetConfigRequest stores an autopilot configuration. With CAS it is stored only
// if the stored configuration's ModifyIndex is Config.ModifyIndex (0: none stored yet).
type AutopilotSetConfigRequest struct {
	Config AutopilotConfig
	CAS    bool
	Actor  *Actor
	WriteRequest
}

// AutopilotSetConfigResponse says whether the configuration was stored (false: a CAS lost).
type AutopilotSetConfigResponse struct {
	Updated bool
	WriteMeta
}

// AutopilotConfigRequest reads the autopilot configuration.
type AutopilotConfigRequest struct {
	QueryOptions
}

// AutopilotConfigResponse carries the stored configuration, or the defaults.
type AutopilotConfigResponse struct {
	Config *AutopilotConfig
	QueryMeta
}
