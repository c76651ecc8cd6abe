package state

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

const (
	tableScalingPolicies = "scaling_policy"
	indexTarget          = "target"
)

func init() {
	registerTable(&memdb.TableSchema{
		Name: tableScalingPolicies,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: {Name: indexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
			indexTarget: {Name: indexTarget, Unique: true, Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
				&memdb.StringFieldIndex{Field: "Namespace"},
				&memdb.StringFieldIndex{Field: "JobID"},
				&memdb.StringFieldIndex{Field: "Group"},
			}}},
		},
	}, &structs.ScalingPolicy{})
}
