package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

// UpsertACLBindingRulesTxn writes binding rules; each rule's auth method must exist.
func (s *StateStore) UpsertACLBindingRulesTxn(txn *Txn, rules []*structs.ACLBindingRule) error {
	for _, r := range rules {
		method, err := txn.First(tableACLAuthMethods, indexID, r.AuthMethod)
		if err != nil {
			return fmt.Errorf("state: auth method lookup: %w", err)
		}
		if method == nil {
			return structs.BadRequest("invalid AuthMethod: ACL auth-method %q not found", r.AuthMethod)
		}
		existing, err := txn.First(tableACLBindingRules, indexID, r.ID)
		if err != nil {
			return fmt.Errorf("state: binding rule lookup: %w", err)
		}
		r.CreateIndex, r.ModifyIndex = txn.Index, txn.Index
		if existing != nil {
			old := existing.(*structs.ACLBindingRule)
			r.CreateIndex, r.CreateTime = old.CreateIndex, old.CreateTime
		}
		if err := txn.Insert(tableACLBindingRules, r); err != nil {
			return fmt.Errorf("state: binding rule insert: %w", err)
		}
	}
	return txn.bumpIndex(tableACLBindingRules)
}

// DeleteACLBindingRulesTxn deletes binding rules by ID; an unknown ID is a 404.
func (s *StateStore) DeleteACLBindingRulesTxn(txn *Txn, ids []string) error {
	for _, id := range ids {
		existing, err := txn.First(tableACLBindingRules, indexID, id)
		if err != nil {
			return fmt.Errorf("state: binding rule lookup: %w", err)
		}
		if existing == nil {
			return structs.NewErrCode(404, "ACL binding rule %q not found", id)
		}
		if err := txn.Delete(tableACLBindingRules, existing); err != nil {
			return fmt.Errorf("state: binding rule delete: %w", err)
		}
	}
	return txn.bumpIndex(tableACLBindingRules)
}

// ACLBindingRuleByID reads one binding rule; nil when unknown.
func (s *StateStore) ACLBindingRuleByID(ws memdb.WatchSet, id string) (*structs.ACLBindingRule, error) {
	return first[*structs.ACLBindingRule](s.db.Txn(false), ws, "binding rule lookup", tableACLBindingRules, indexID, id)
}

// ACLBindingRulesByAuthMethod lists the rules of one auth method.
func (s *StateStore) ACLBindingRulesByAuthMethod(ws memdb.WatchSet, method string) ([]*structs.ACLBindingRule, error) {
	iter, err := s.db.Txn(false).Get(tableACLBindingRules, indexAuthMethod, method)
	if err != nil {
		return nil, fmt.Errorf("state: binding rule list: %w", err)
	}
	ws.Add(iter.WatchCh())
	return collect[*structs.ACLBindingRule](iter), nil
}

// ACLBindingRules lists binding rules by ID.
func (s *StateStore) ACLBindingRules(ws memdb.WatchSet) ([]*structs.ACLBindingRule, error) {
	iter, err := s.db.Txn(false).Get(tableACLBindingRules, indexID)
	if err != nil {
		return nil, fmt.Errorf("state: binding rule list: %w", err)
	}
	ws.Add(iter.WatchCh())
	return collect[*structs.ACLBindingRule](iter), nil
}
