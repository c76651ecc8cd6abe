package state

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

const (
	tableACLPolicies = "acl_policy"
	tableACLTokens   = "acl_token"
	tableACLRoles    = "acl_roles"
	indexSecret      = "secret"
	indexName        = "name"
	// aclBootstrapKey in the index table holds the index of the last bootstrap.
	aclBootstrapKey = "acl_token_bootstrap"
)

func init() {
	registerTable(&memdb.TableSchema{
		Name: tableACLPolicies,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: {Name: indexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Name"}},
		},
	}, &structs.ACLPolicy{})
	registerTable(&memdb.TableSchema{
		Name: tableACLTokens,
		Indexes: map[string]*memdb.IndexSchema{
			indexID:     {Name: indexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "AccessorID"}},
			indexSecret: {Name: indexSecret, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "SecretID"}},
		},
	}, &structs.ACLToken{})
	registerTable(&memdb.TableSchema{
		Name: tableACLRoles,
		Indexes: map[string]*memdb.IndexSchema{
			indexID:   {Name: indexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
			indexName: {Name: indexName, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Name"}},
		},
	}, &structs.ACLRole{})
}
