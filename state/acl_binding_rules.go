package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

// UpsertACLBindingRulesTxn writes binding rules; each rule's auth method must exist.
func (s *StateStore) UpsertACLBindingRulesTxn(txn *Txn, rules []*structs.ACLBindingRule) error {
	keepCreateTime := func(r, prev *structs.ACLBindingRule) { r.CreateTime = prev.CreateTime }
	for _, r := range rules {
		method, err := txn.First(tableACLAuthMethods, indexID, r.AuthMethod)
		if err != nil {
			return fmt.Errorf("state: auth method lookup: %w", err)
		}
		if method == nil {
			return structs.BadRequest("invalid AuthMethod: ACL auth-method %q not found", r.AuthMethod)
		}
		if err := aclBindingRuleRows.upsert(txn, r, keepCreateTime); err != nil {
			return err
		}
	}
	return txn.bumpIndex(tableACLBindingRules)
}

// DeleteACLBindingRulesTxn deletes binding rules by ID; an unknown ID is a 404.
func (s *StateStore) DeleteACLBindingRulesTxn(txn *Txn, ids []string) error {
	return aclBindingRuleRows.deleteAll(txn, ids)
}

// ACLBindingRuleByID reads one binding rule; nil when unknown.
func (s *StateStore) ACLBindingRuleByID(ws memdb.WatchSet, id string) (*structs.ACLBindingRule, error) {
	return first[*structs.ACLBindingRule](s.db.Txn(false), ws, "binding rule lookup", tableACLBindingRules, indexID, id)
}

// ACLBindingRulesByAuthMethod lists the rules of one auth method.
func (s *StateStore) ACLBindingRulesByAuthMethod(ws memdb.WatchSet, method string) ([]*structs.ACLBindingRule, error) {
	return list[*structs.ACLBindingRule](s.db.Txn(false), ws, "binding rule list", tableACLBindingRules, indexAuthMethod, method)
}

// ACLBindingRules lists binding rules by ID.
func (s *StateStore) ACLBindingRules(ws memdb.WatchSet) ([]*structs.ACLBindingRule, error) {
	return list[*structs.ACLBindingRule](s.db.Txn(false), ws, "binding rule list", tableACLBindingRules, indexID)
}
