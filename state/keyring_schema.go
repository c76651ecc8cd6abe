package state

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

const tableRootKeys = "root_keys"

func init() {
	registerTable(&memdb.TableSchema{
		Name: tableRootKeys,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: {Name: indexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "KeyID"}},
		},
	}, &structs.RootKey{})
}
