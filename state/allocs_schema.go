package state

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

const (
	tableAllocs = "allocs"
	indexNode   = "node"
	indexEval   = "eval"
)

func init() {
	registerTable(&memdb.TableSchema{
		Name: tableAllocs,
		Indexes: map[string]*memdb.IndexSchema{
			indexID:   {Name: indexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
			indexJob:  {Name: indexJob, Indexer: namespacedIDIndex("JobID")},
			indexNode: {Name: indexNode, AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "NodeID"}},
			indexEval: {Name: indexEval, AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "EvalID"}},
			// Allocations outside a deployment have no entry.
			indexDeployment: {Name: indexDeployment, AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "DeploymentID"}},
		},
	}, &structs.Allocation{})
}
