package state

import "github.com/nomadfork/nomad/structs"

const (
	tableServiceRegistrations = "service_registrations"
	indexServiceName          = "service_name"
	indexAllocID              = "alloc_id"
	indexNodeID               = "node_id"
)

func init() {
	// IDs embed the allocation ID, so they are unique across namespaces.
	registerTable(tableServiceRegistrations, &structs.ServiceRegistration{},
		idIndex(field("ID")),
		lookupIndex(indexServiceName, namespaced(field("ServiceName"))),
		lookupIndex(indexJob, namespaced(field("JobID"))),
		lookupIndex(indexAllocID, field("AllocID")),
		lookupIndex(indexNodeID, field("NodeID")),
	)
}
