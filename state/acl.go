package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

// UpsertACLPoliciesTxn writes policies.
func (s *StateStore) UpsertACLPoliciesTxn(txn *Txn, policies []*structs.ACLPolicy) error {
	return aclPolicyRows.upsertAll(txn, policies, nil)
}

// DeleteACLPoliciesTxn deletes policies; an unknown name is an error so a typo is noticed.
func (s *StateStore) DeleteACLPoliciesTxn(txn *Txn, names []string) error {
	return aclPolicyRows.deleteAll(txn, names)
}

// ACLPolicyByName reads one policy; nil when unknown.
func (s *StateStore) ACLPolicyByName(ws memdb.WatchSet, name string) (*structs.ACLPolicy, error) {
	return first[*structs.ACLPolicy](s.db.Txn(false), ws, "policy lookup", tableACLPolicies, indexID, name)
}

// ACLPolicies lists policies by name.
func (s *StateStore) ACLPolicies(ws memdb.WatchSet, prefix string) ([]*structs.ACLPolicy, error) {
	return list[*structs.ACLPolicy](s.db.Txn(false), ws, "policy list", tableACLPolicies, indexID+"_prefix", prefix)
}

// UpsertACLTokensTxn writes tokens, keeping CreateIndex of existing ones.
func (s *StateStore) UpsertACLTokensTxn(txn *Txn, tokens []*structs.ACLToken) error {
	return aclTokenRows.upsertAll(txn, tokens, nil)
}

// DeleteACLTokensTxn deletes tokens by AccessorID; unknown ones are an error.
func (s *StateStore) DeleteACLTokensTxn(txn *Txn, accessorIDs []string) error {
	return aclTokenRows.deleteAll(txn, accessorIDs)
}

// BootstrapACLTokenTxn stores the bootstrap token if bootstrap is allowed at resetIndex: when
// no bootstrap happened (resetIndex 0), or the operator reset exactly the last bootstrap.
func (s *StateStore) BootstrapACLTokenTxn(txn *Txn, resetIndex uint64, token *structs.ACLToken) error {
	last := indexOf(txn.Txn, aclBootstrapKey)
	if last != 0 && last != resetIndex {
		return structs.BadRequest("ACL bootstrap already done (reset index: %d)", last)
	}
	if err := s.UpsertACLTokensTxn(txn, []*structs.ACLToken{token}); err != nil {
		return err
	}
	return txn.bumpIndex(aclBootstrapKey)
}

// ACLBootstrapIndex is the index of the last bootstrap, 0 when never bootstrapped.
func (s *StateStore) ACLBootstrapIndex() uint64 { return s.Index(aclBootstrapKey) }

// ACLTokenBySecretID resolves a secret; nil when unknown.
func (s *StateStore) ACLTokenBySecretID(ws memdb.WatchSet, secret string) (*structs.ACLToken, error) {
	return first[*structs.ACLToken](s.db.Txn(false), ws, "token lookup", tableACLTokens, indexSecret, secret)
}

// ACLTokenByAccessorID reads one token; nil when unknown.
func (s *StateStore) ACLTokenByAccessorID(ws memdb.WatchSet, id string) (*structs.ACLToken, error) {
	return first[*structs.ACLToken](s.db.Txn(false), ws, "token lookup", tableACLTokens, indexID, id)
}

// ACLTokens lists tokens by AccessorID prefix.
func (s *StateStore) ACLTokens(ws memdb.WatchSet, prefix string) ([]*structs.ACLToken, error) {
	return list[*structs.ACLToken](s.db.Txn(false), ws, "token list", tableACLTokens, indexID+"_prefix", prefix)
}

// UpsertACLRolesTxn writes roles. Role names are unique; every linked policy must exist.
func (s *StateStore) UpsertACLRolesTxn(txn *Txn, roles []*structs.ACLRole) error {
	for _, r := range roles {
		for _, link := range r.Policies {
			p, err := txn.First(tableACLPolicies, indexID, link.Name)
			if err != nil {
				return fmt.Errorf("state: policy lookup: %w", err)
			}
			if p == nil {
				return structs.BadRequest("cannot find policy %s", link.Name)
			}
		}
		byName, err := txn.First(tableACLRoles, indexName, r.Name)
		if err != nil {
			return fmt.Errorf("state: role lookup: %w", err)
		}
		if byName != nil && byName.(*structs.ACLRole).ID != r.ID {
			return structs.BadRequest("ACL role with name %s already exists", r.Name)
		}
		if err := aclRoleRows.upsert(txn, r, nil); err != nil {
			return err
		}
	}
	return txn.bumpIndex(tableACLRoles)
}

// DeleteACLRolesTxn deletes roles by ID.
func (s *StateStore) DeleteACLRolesTxn(txn *Txn, ids []string) error {
	return aclRoleRows.deleteAll(txn, ids)
}

// ACLRoleByID reads a role; nil when unknown.
func (s *StateStore) ACLRoleByID(ws memdb.WatchSet, id string) (*structs.ACLRole, error) {
	return s.aclRoleBy(ws, indexID, id)
}

// ACLRoleByName reads a role by name; nil when unknown.
func (s *StateStore) ACLRoleByName(ws memdb.WatchSet, name string) (*structs.ACLRole, error) {
	return s.aclRoleBy(ws, indexName, name)
}

func (s *StateStore) aclRoleBy(ws memdb.WatchSet, index, value string) (*structs.ACLRole, error) {
	return first[*structs.ACLRole](s.db.Txn(false), ws, "role lookup", tableACLRoles, index, value)
}

// ACLRoles lists roles by name.
func (s *StateStore) ACLRoles(ws memdb.WatchSet) ([]*structs.ACLRole, error) {
	return list[*structs.ACLRole](s.db.Txn(false), ws, "role list", tableACLRoles, indexName)
}
