package state

import "github.com/nomadfork/nomad/structs"

const (
	tableDeployments = "deployment"
	indexDeployment  = "deployment"
)

func init() {
	registerTable(tableDeployments, &structs.Deployment{},
		idIndex(field("ID")), lookupIndex(indexJob, namespaced(field("JobID"))))
}
