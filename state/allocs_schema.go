package state

import "github.com/nomadfork/nomad/structs"

const (
	tableAllocs = "allocs"
	indexNode   = "node"
	indexEval   = "eval"
)

func init() {
	registerTable(tableAllocs, &structs.Allocation{},
		idIndex(field("ID")),
		lookupIndex(indexJob, namespaced(field("JobID"))),
		optionalIndex(indexNode, field("NodeID")),
		optionalIndex(indexEval, field("EvalID")),
		// Allocations outside a deployment have no entry.
		optionalIndex(indexDeployment, field("DeploymentID")),
	)
}
