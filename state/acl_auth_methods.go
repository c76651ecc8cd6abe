package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

// UpsertACLAuthMethodsTxn writes auth methods, keeping CreateIndex and CreateTime of
// existing ones. At most one method of each type may be the default.
func (s *StateStore) UpsertACLAuthMethodsTxn(txn *Txn, methods []*structs.ACLAuthMethod) error {
	keepCreateTime := func(m, prev *structs.ACLAuthMethod) { m.CreateTime = prev.CreateTime }
	for _, m := range methods {
		if m.Default {
			other, err := defaultAuthMethodTxn(txn.Txn, m.Type)
			if err != nil {
				return err
			}
			if other != nil && other.Name != m.Name {
				return structs.BadRequest("invalid Default: auth method %q is already the default of type %s", other.Name, m.Type)
			}
		}
		if err := aclAuthMethodRows.upsert(txn, m, keepCreateTime); err != nil {
			return err
		}
	}
	return txn.bumpIndex(tableACLAuthMethods)
}

// DeleteACLAuthMethodsTxn deletes auth methods by name and, in the same transaction, every
// binding rule that names them: a rule never outlives its method.
func (s *StateStore) DeleteACLAuthMethodsTxn(txn *Txn, names []string) error {
	rulesDeleted := false
	for _, name := range names {
		if err := aclAuthMethodRows.delete(txn, name); err != nil {
			return err
		}
		n, err := txn.DeleteAll(tableACLBindingRules, indexAuthMethod, name)
		if err != nil {
			return fmt.Errorf("state: binding rule delete: %w", err)
		}
		rulesDeleted = rulesDeleted || n > 0
	}
	if rulesDeleted {
		if err := txn.bumpIndex(tableACLBindingRules); err != nil {
			return err
		}
	}
	return txn.bumpIndex(tableACLAuthMethods)
}

func defaultAuthMethodTxn(txn *memdb.Txn, typ string) (*structs.ACLAuthMethod, error) {
	methods, err := list[*structs.ACLAuthMethod](txn, nil, "auth method list", tableACLAuthMethods, indexID)
	if err != nil {
		return nil, err
	}
	for _, m := range methods {
		if m.Default && m.Type == typ {
			return m, nil
		}
	}
	return nil, nil
}

// ACLAuthMethodByName reads one auth method, secrets included; nil when unknown.
func (s *StateStore) ACLAuthMethodByName(ws memdb.WatchSet, name string) (*structs.ACLAuthMethod, error) {
	return first[*structs.ACLAuthMethod](s.db.Txn(false), ws, "auth method lookup", tableACLAuthMethods, indexID, name)
}

// ACLDefaultAuthMethod reads the default method of a type; nil when there is none.
func (s *StateStore) ACLDefaultAuthMethod(typ string) (*structs.ACLAuthMethod, error) {
	return defaultAuthMethodTxn(s.db.Txn(false), typ)
}

// ACLAuthMethods lists auth methods by name.
func (s *StateStore) ACLAuthMethods(ws memdb.WatchSet) ([]*structs.ACLAuthMethod, error) {
	return list[*structs.ACLAuthMethod](s.db.Txn(false), ws, "auth method list", tableACLAuthMethods, indexID)
}
