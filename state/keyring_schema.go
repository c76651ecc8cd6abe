package state

import "github.com/nomadfork/nomad/structs"

const tableRootKeys = "root_keys"

func init() {
	registerTable(tableRootKeys, &structs.RootKey{}, idIndex(field("KeyID")))
}
