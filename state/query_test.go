package state

import (
	"errors"
	"testing"
	"time"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestRowKind_UpdateKeepsCreation checks the generic upsert on the kinds that keep more than
// CreateIndex across an update.
func TestRowKind_UpdateKeepsCreation(t *testing.T) {
	created, later := time.Unix(1_700_000_000, 0).UTC(), time.Unix(1_800_000_000, 0).UTC()
	cases := []struct {
		name  string
		write func(s *StateStore, index uint64, createTime time.Time) error
		read  func(s *StateStore) (createIndex, modifyIndex uint64, createTime time.Time)
	}{
		{
			name: "auth method",
			write: func(s *StateStore, index uint64, ct time.Time) error {
				m := mockAuthMethod("a", structs.ACLAuthMethodTypeOIDC, false)
				m.CreateTime = ct
				return upsertMethods(s, index, m)
			},
			read: func(s *StateStore) (uint64, uint64, time.Time) {
				m, err := s.ACLAuthMethodByName(nil, "a")
				must.NoError(t, err)
				return m.CreateIndex, m.ModifyIndex, m.CreateTime
			},
		},
		{
			name: "binding rule",
			write: func(s *StateStore, index uint64, ct time.Time) error {
				if err := upsertMethods(s, index, mockAuthMethod("a", structs.ACLAuthMethodTypeOIDC, false)); err != nil {
					return err
				}
				return upsertRules(s, index, &structs.ACLBindingRule{ID: "r", AuthMethod: "a", BindType: "management", CreateTime: ct})
			},
			read: func(s *StateStore) (uint64, uint64, time.Time) {
				r, err := s.ACLBindingRuleByID(nil, "r")
				must.NoError(t, err)
				return r.CreateIndex, r.ModifyIndex, r.CreateTime
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStateStore(t)
			must.NoError(t, tc.write(s, 10, created))
			must.NoError(t, tc.write(s, 11, later))
			createIndex, modifyIndex, createTime := tc.read(s)
			must.Eq(t, uint64(10), createIndex)
			must.Eq(t, uint64(11), modifyIndex)
			must.Eq(t, created, createTime)
		})
	}
}

// TestRowKind_DeleteUnknownIsNotFound checks every delete built on rowKind answers an unknown
// id with a 404 naming the kind as users know it, and leaves the table's index alone.
func TestRowKind_DeleteUnknownIsNotFound(t *testing.T) {
	s := testStateStore(t)
	cases := []struct {
		name    string
		table   string
		del     func(txn *Txn, ids []string) error
		wantMsg string
	}{
		{"policy", tableACLPolicies, s.DeleteACLPoliciesTxn, `ACL policy "x" not found`},
		{"token", tableACLTokens, s.DeleteACLTokensTxn, `ACL token "x" not found`},
		{"role", tableACLRoles, s.DeleteACLRolesTxn, `ACL role "x" not found`},
		{"auth method", tableACLAuthMethods, s.DeleteACLAuthMethodsTxn, `ACL auth-method "x" not found`},
		{"binding rule", tableACLBindingRules, s.DeleteACLBindingRulesTxn, `ACL binding rule "x" not found`},
		{"namespace", tableNamespaces, s.DeleteNamespacesTxn, `namespace "x" not found`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := s.Index(tc.table)
			err := applyTxn(s, structs.ACLPolicyDeleteRequestType, 50, nil, func(txn *Txn) error {
				return tc.del(txn, []string{"x"})
			})
			var coded *structs.CodedError
			must.True(t, errors.As(err, &coded))
			must.Eq(t, 404, coded.Code)
			must.EqOp(t, tc.wantMsg, coded.Msg)
			must.Eq(t, before, s.Index(tc.table))
		})
	}
}
