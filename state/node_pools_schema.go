package state

import "github.com/nomadfork/nomad/structs"

const tableNodePools = "node_pools"

func init() {
	// Only pools users create are rows; the built-in "all" and "default" are answered by
	// the read functions (state/node_pools.go).
	registerTable(tableNodePools, &structs.NodePool{}, idIndex(field("Name")))
}

var nodePoolRows = rowKind[*structs.NodePool]{
	table: tableNodePools, what: "node pool", noun: "node pool",
	key:  func(p *structs.NodePool) string { return p.Name },
	raft: func(p *structs.NodePool) (*uint64, *uint64) { return &p.CreateIndex, &p.ModifyIndex },
}
