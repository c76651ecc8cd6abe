package state

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

const (
	tableACLAuthMethods  = "acl_auth_methods"
	tableACLBindingRules = "acl_binding_rules"
	indexAuthMethod      = "auth_method"
)

func init() {
	registerTable(&memdb.TableSchema{
		Name: tableACLAuthMethods,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: {Name: indexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Name"}},
		},
	}, &structs.ACLAuthMethod{})
	registerTable(&memdb.TableSchema{
		Name: tableACLBindingRules,
		Indexes: map[string]*memdb.IndexSchema{
			indexID:         {Name: indexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
			indexAuthMethod: {Name: indexAuthMethod, Indexer: &memdb.StringFieldIndex{Field: "AuthMethod"}},
		},
	}, &structs.ACLBindingRule{})
}
