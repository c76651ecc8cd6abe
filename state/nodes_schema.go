package state

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

const (
	tableNodes    = "nodes"
	indexSecretID = "secret_id"
)

func init() {
	registerTable(&memdb.TableSchema{
		Name: tableNodes,
		Indexes: map[string]*memdb.IndexSchema{
			indexID:       {Name: indexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
			indexSecretID: {Name: indexSecretID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "SecretID"}},
		},
	}, &structs.Node{})
}
