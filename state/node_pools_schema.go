package state

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

const tableNodePools = "node_pools"

func init() {
	// Only pools users create are rows; the built-in "all" and "default" are answered by
	// the read functions (state/node_pools.go).
	registerTable(&memdb.TableSchema{
		Name: tableNodePools,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: {Name: indexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Name"}},
		},
	}, &structs.NodePool{})
}
