package state

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

const tableSchedulerConfig = "scheduler_config"

// schedulerConfigRow wraps the one stored configuration under a fixed key.
type schedulerConfigRow struct {
	ID     string
	Config *structs.SchedulerConfiguration
}

const schedulerConfigKey = "scheduler_config"

func init() {
	registerTable(&memdb.TableSchema{
		Name: tableSchedulerConfig,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: {Name: indexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
		},
	}, &schedulerConfigRow{})
}
