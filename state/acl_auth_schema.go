package state

import "github.com/nomadfork/nomad/structs"

const (
	tableACLAuthMethods  = "acl_auth_methods"
	tableACLBindingRules = "acl_binding_rules"
	indexAuthMethod      = "auth_method"
)

func init() {
	registerTable(tableACLAuthMethods, &structs.ACLAuthMethod{}, idIndex(field("Name")))
	registerTable(tableACLBindingRules, &structs.ACLBindingRule{},
		idIndex(field("ID")), lookupIndex(indexAuthMethod, field("AuthMethod")))
}

var (
	aclAuthMethodRows = rowKind[*structs.ACLAuthMethod]{
		table: tableACLAuthMethods, what: "auth method", noun: "ACL auth-method",
		key:  func(m *structs.ACLAuthMethod) string { return m.Name },
		raft: func(m *structs.ACLAuthMethod) (*uint64, *uint64) { return &m.CreateIndex, &m.ModifyIndex },
	}
	aclBindingRuleRows = rowKind[*structs.ACLBindingRule]{
		table: tableACLBindingRules, what: "binding rule", noun: "ACL binding rule",
		key:  func(r *structs.ACLBindingRule) string { return r.ID },
		raft: func(r *structs.ACLBindingRule) (*uint64, *uint64) { return &r.CreateIndex, &r.ModifyIndex },
	}
)
