package state

import "github.com/nomadfork/nomad/structs"

const tableVariables = "variables"

func init() {
	// Rows are structs.VariableEncrypted: the items are ciphertext, so a snapshot holds no
	// variable in clear.
	registerTable(tableVariables, &structs.VariableEncrypted{}, idIndex(namespaced(field("Path"))))
}
