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
