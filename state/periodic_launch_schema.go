package state

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

const tablePeriodicLaunch = "periodic_launch"

func init() {
	// One row per periodic job that has launched (or been forced): its last launch time.
	registerTable(&memdb.TableSchema{
		Name: tablePeriodicLaunch,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: {Name: indexID, Unique: true, Indexer: namespacedIDIndex("ID")},
		},
	}, &structs.PeriodicLaunch{})
}
