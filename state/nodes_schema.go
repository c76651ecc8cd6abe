package state

import "github.com/nomadfork/nomad/structs"

const (
	tableNodes    = "nodes"
	indexSecretID = "secret_id"
)

func init() {
	registerTable(tableNodes, &structs.Node{}, idIndex(field("ID")), uniqueIndex(indexSecretID, field("SecretID")))
}
