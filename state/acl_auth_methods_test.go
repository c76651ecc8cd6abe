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

func TestACLAuthEvents(t *testing.T) {
	type view struct {
		Topic      structs.Topic
		Type, Key  string
		FilterKeys []string
		Secret     string // the method's client secret as published
	}
	cases := []struct {
		name   string
		setup  func(s *StateStore) error
		mutate func(s *StateStore) error
		want   []view
	}{
		{
			name: "method upsert is published redacted",
			mutate: func(s *StateStore) error {
				return upsertMethods(s, 10, mockAuthMethod("a", structs.ACLAuthMethodTypeOIDC, false))
			},
			want: []view{{Topic: structs.TopicACLAuthMethod, Type: "ACLAuthMethodUpserted", Key: "a", Secret: structs.RedactedSecret}},
		},
		{
			name: "rule upsert is published with its method as filter key",
			setup: func(s *StateStore) error {
				return upsertMethods(s, 10, mockAuthMethod("a", structs.ACLAuthMethodTypeOIDC, false))
			},
			mutate: func(s *StateStore) error {
				return upsertRules(s, 11, &structs.ACLBindingRule{ID: "r1", AuthMethod: "a", BindType: "management"})
			},
			want: []view{{Topic: structs.TopicACLBindingRule, Type: "ACLBindingRuleUpserted", Key: "r1", FilterKeys: []string{"a"}}},
		},
		{
			name: "method delete publishes its rules' deletion in the same batch",
			setup: func(s *StateStore) error {
				if err := upsertMethods(s, 10, mockAuthMethod("a", structs.ACLAuthMethodTypeOIDC, false)); err != nil {
					return err
				}
				return upsertRules(s, 11, &structs.ACLBindingRule{ID: "r1", AuthMethod: "a", BindType: "management"})
			},
			mutate: func(s *StateStore) error {
				return applyTxn(s, structs.ACLAuthMethodDeleteRequestType, 12, nil, func(txn *Txn) error {
					return s.DeleteACLAuthMethodsTxn(txn, []string{"a"})
				})
			},
			want: []view{
				{Topic: structs.TopicACLAuthMethod, Type: "ACLAuthMethodDeleted", Key: "a", Secret: structs.RedactedSecret},
				{Topic: structs.TopicACLBindingRule, Type: "ACLAuthMethodDeleted", Key: "r1", FilterKeys: []string{"a"}},
			},
		},
		{
			name: "a refused write publishes nothing",
			setup: func(s *StateStore) error {
				return upsertMethods(s, 10, mockAuthMethod("a", structs.ACLAuthMethodTypeOIDC, true))
			},
			mutate: func(s *StateStore) error {
				_ = upsertMethods(s, 11, mockAuthMethod("b", structs.ACLAuthMethodTypeOIDC, true))
				return nil
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStateStore(t)
			if tc.setup != nil {
				must.NoError(t, tc.setup(s))
			}
			got := captureEvents(s)
			must.NoError(t, tc.mutate(s))
			var views []view
			for _, batch := range *got {
				for _, e := range batch.Events {
					v := view{Topic: e.Topic, Type: e.Type, Key: e.Key, FilterKeys: e.FilterKeys}
					if p, ok := e.Payload.(*structs.ACLAuthMethodEvent); ok {
						v.Secret = p.AuthMethod.Config.OIDCClientSecret
					}
					views = append(views, v)
				}
			}
			must.Eq(t, tc.want, views)
		})
	}
	// The stored method keeps its secret: only the published copy is redacted.
	s := testStateStore(t)
	must.NoError(t, upsertMethods(s, 10, mockAuthMethod("a", structs.ACLAuthMethodTypeOIDC, false)))
	m, err := s.ACLAuthMethodByName(nil, "a")
	must.NoError(t, err)
	must.Eq(t, "s3cret", m.Config.OIDCClientSecret)
}
