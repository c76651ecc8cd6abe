package state

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

const (
	tableDeployments = "deployment"
	indexDeployment  = "deployment"
)

func init() {
	registerTable(&memdb.TableSchema{
		Name: tableDeployments,
		Indexes: map[string]*memdb.IndexSchema{
			indexID:  {Name: indexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
			indexJob: {Name: indexJob, Indexer: namespacedIDIndex("JobID")},
		},
	}, &structs.Deployment{})
}
