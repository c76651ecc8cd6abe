package state

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

const (
	tableServiceRegistrations = "service_registrations"
	indexServiceName          = "service_name"
	indexAllocID              = "alloc_id"
	indexNodeID               = "node_id"
)

func init() {
	// IDs embed the allocation ID, so they are unique across namespaces.
	registerTable(&memdb.TableSchema{
		Name: tableServiceRegistrations,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: {Name: indexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
			indexServiceName: {Name: indexServiceName, Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
				&memdb.StringFieldIndex{Field: "Namespace"},
				&memdb.StringFieldIndex{Field: "ServiceName"},
			}}},
			indexJob:     {Name: indexJob, Indexer: namespacedIDIndex("JobID")},
			indexAllocID: {Name: indexAllocID, Indexer: &memdb.StringFieldIndex{Field: "AllocID"}},
			indexNodeID:  {Name: indexNodeID, Indexer: &memdb.StringFieldIndex{Field: "NodeID"}},
		},
	}, &structs.ServiceRegistration{})
}
