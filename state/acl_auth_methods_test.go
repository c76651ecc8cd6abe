package state

import (
	"testing"
	"time"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func mockAuthMethod(name, typ string, def bool) *structs.ACLAuthMethod {
	return &structs.ACLAuthMethod{
		Name: name, Type: typ, TokenLocality: structs.ACLAuthMethodTokenLocalityLocal, MaxTokenTTL: time.Hour, Default: def,
		Config: &structs.ACLAuthMethodConfig{OIDCDiscoveryURL: "https://example.com", OIDCClientID: "c", OIDCClientSecret: "s3cret"},
	}
}

func upsertMethods(s *StateStore, index uint64, methods ...*structs.ACLAuthMethod) error {
	return applyTxn(s, structs.ACLAuthMethodUpsertRequestType, index, nil, func(txn *Txn) error {
		return s.UpsertACLAuthMethodsTxn(txn, methods)
	})
}

func upsertRules(s *StateStore, index uint64, rules ...*structs.ACLBindingRule) error {
	return applyTxn(s, structs.ACLBindingRuleUpsertRequestType, index, nil, func(txn *Txn) error {
		return s.UpsertACLBindingRulesTxn(txn, rules)
	})
}

func TestStateStore_ACLAuthMethods_DefaultPerType(t *testing.T) {
	s := testStateStore(t)
	must.NoError(t, upsertMethods(s, 10, mockAuthMethod("a", structs.ACLAuthMethodTypeOIDC, true)))

	cases := []struct {
		name    string
		method  *structs.ACLAuthMethod
		wantErr string
	}{
		{name: "second default of a type refused", method: mockAuthMethod("b", structs.ACLAuthMethodTypeOIDC, true), wantErr: "invalid Default"},
		{name: "default of another type allowed", method: mockAuthMethod("c", structs.ACLAuthMethodTypeJWT, true)},
		{name: "the default itself may be rewritten", method: mockAuthMethod("a", structs.ACLAuthMethodTypeOIDC, true)},
		{name: "a non-default of the type allowed", method: mockAuthMethod("d", structs.ACLAuthMethodTypeOIDC, false)},
	}
	index := uint64(11)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := s.Index(tableACLAuthMethods)
			err := upsertMethods(s, index, tc.method)
			if tc.wantErr != "" {
				must.ErrorContains(t, err, tc.wantErr)
				must.Eq(t, before, s.Index(tableACLAuthMethods))
				return
			}
			must.NoError(t, err)
			must.Eq(t, index, s.Index(tableACLAuthMethods))
		})
		index++
	}
	a, err := s.ACLAuthMethodByName(nil, "a")
	must.NoError(t, err)
	must.Eq(t, uint64(10), a.CreateIndex)
	must.Greater(t, uint64(10), a.ModifyIndex)
}

func TestStateStore_DeleteACLAuthMethod_DeletesItsBindingRules(t *testing.T) {
	s := testStateStore(t)
	must.NoError(t, upsertMethods(s, 10, mockAuthMethod("a", structs.ACLAuthMethodTypeOIDC, false), mockAuthMethod("b", structs.ACLAuthMethodTypeOIDC, false)))
	must.NoError(t, upsertRules(s, 11,
		&structs.ACLBindingRule{ID: "r1", AuthMethod: "a", BindType: "management"},
		&structs.ACLBindingRule{ID: "r2", AuthMethod: "a", BindType: "policy", BindName: "p"},
		&structs.ACLBindingRule{ID: "r3", AuthMethod: "b", BindType: "policy", BindName: "p"},
	))

	err := upsertRules(s, 12, &structs.ACLBindingRule{ID: "r4", AuthMethod: "missing", BindType: "management"})
	must.ErrorContains(t, err, "invalid AuthMethod")
	must.Eq(t, uint64(11), s.Index(tableACLBindingRules))

	must.NoError(t, applyTxn(s, structs.ACLAuthMethodDeleteRequestType, 13, nil, func(txn *Txn) error {
		return s.DeleteACLAuthMethodsTxn(txn, []string{"a"})
	}))
	rules, err := s.ACLBindingRules(nil)
	must.NoError(t, err)
	must.Len(t, 1, rules)
	must.Eq(t, "r3", rules[0].ID)
	must.Eq(t, uint64(13), s.Index(tableACLBindingRules))
	must.Eq(t, uint64(13), s.Index(tableACLAuthMethods))

	err = applyTxn(s, structs.ACLAuthMethodDeleteRequestType, 14, nil, func(txn *Txn) error {
		return s.DeleteACLAuthMethodsTxn(txn, []string{"a"})
	})
	must.ErrorContains(t, err, "not found")
	must.Eq(t, uint64(13), s.Index(tableACLAuthMethods))
}

func TestStateStore_ACLAuthMethods_PublishNoEvents(t *testing.T) {
	s := testStateStore(t)
	var published []*structs.Events
	txn := s.WriteTxn(structs.ACLAuthMethodUpsertRequestType, 10, nil)
	must.NoError(t, s.UpsertACLAuthMethodsTxn(txn, []*structs.ACLAuthMethod{mockAuthMethod("a", structs.ACLAuthMethodTypeOIDC, false)}))
	if ev := EventsFromChanges(txn, txn.Changes()); ev != nil {
		published = append(published, ev)
	}
	txn.Abort()
	must.SliceEmpty(t, published)
}
