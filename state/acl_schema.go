package state

import "github.com/nomadfork/nomad/structs"

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
	registerTable(tableACLPolicies, &structs.ACLPolicy{}, idIndex(field("Name")))
	registerTable(tableACLTokens, &structs.ACLToken{},
		idIndex(field("AccessorID")), uniqueIndex(indexSecret, field("SecretID")))
	registerTable(tableACLRoles, &structs.ACLRole{}, idIndex(field("ID")), uniqueIndex(indexName, field("Name")))
}
