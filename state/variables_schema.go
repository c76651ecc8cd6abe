package state

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

const tableVariables = "variables"

func init() {
	// Rows are structs.VariableEncrypted: the items are ciphertext, so a snapshot holds no
	// variable in clear.
	registerTable(&memdb.TableSchema{
		Name: tableVariables,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: {Name: indexID, Unique: true, Indexer: namespacedIDIndex("Path")},
		},
	}, &structs.VariableEncrypted{})
}
