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

var (
	aclPolicyRows = rowKind[*structs.ACLPolicy]{
		table: tableACLPolicies, what: "policy", noun: "ACL policy",
		key:  func(p *structs.ACLPolicy) string { return p.Name },
		raft: func(p *structs.ACLPolicy) (*uint64, *uint64) { return &p.CreateIndex, &p.ModifyIndex },
	}
	aclTokenRows = rowKind[*structs.ACLToken]{
		table: tableACLTokens, what: "token", noun: "ACL token",
		key:  func(t *structs.ACLToken) string { return t.AccessorID },
		raft: func(t *structs.ACLToken) (*uint64, *uint64) { return &t.CreateIndex, &t.ModifyIndex },
	}
	aclRoleRows = rowKind[*structs.ACLRole]{
		table: tableACLRoles, what: "role", noun: "ACL role",
		key:  func(r *structs.ACLRole) string { return r.ID },
		raft: func(r *structs.ACLRole) (*uint64, *uint64) { return &r.CreateIndex, &r.ModifyIndex },
	}
)
