package state

import "github.com/nomadfork/nomad/structs"

const tableSchedulerConfig = "scheduler_config"

// schedulerConfigRow wraps the one stored configuration under a fixed key.
type schedulerConfigRow struct {
	ID     string
	Config *structs.SchedulerConfiguration
}

const schedulerConfigKey = "scheduler_config"

func init() {
	registerTable(tableSchedulerConfig, &schedulerConfigRow{}, idIndex(field("ID")))
}
