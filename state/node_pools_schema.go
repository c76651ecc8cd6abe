package state

import "github.com/nomadfork/nomad/structs"

const tableNodePools = "node_pools"

func init() {
	// Only pools users create are rows; the built-in "all" and "default" are answered by
	// the read functions (state/node_pools.go).
	registerTable(tableNodePools, &structs.NodePool{}, idIndex(field("Name")))
}
