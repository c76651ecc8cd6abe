package state

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

// tableAutopilot holds at most one row: the operator's autopilot configuration.
const tableAutopilot = "autopilot-config"

func init() {
	registerTable(tableAutopilot, &structs.AutopilotConfig{}, &memdb.IndexSchema{
		Name: indexID, Unique: true, AllowMissing: true, Indexer: &memdb.ConditionalIndex{
			Conditional: func(any) (bool, error) { return true, nil },
		},
	})
}
