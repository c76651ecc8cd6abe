package state

import (
	"testing"
	"time"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func mockToken(accessor, secret, name, typ string) *structs.ACLToken {
	t := &structs.ACLToken{
		AccessorID: accessor,
		SecretID:   secret,
		Name:       name,
		Type:       typ,
		CreateTime: time.Unix(1_700_000_000, 0).UTC(),
	}
	if typ == structs.ACLClientToken {
		t.Policies = []string{"readonly"}
	}
	t.SetHash()
	return t
}

func mockPolicy(name string) *structs.ACLPolicy {
	p := &structs.ACLPolicy{Name: name, Description: name + " policy", Rules: `namespace "default" { policy = "read" }`}
	p.SetHash()
	return p
}

func mockRole(id, name string, policies ...string) *structs.ACLRole {
	r := &structs.ACLRole{ID: id, Name: name, Description: name + " role"}
	for _, p := range policies {
		r.Policies = append(r.Policies, &structs.ACLRolePolicyLink{Name: p})
	}
	r.SetHash()
	return r
}

func TestStateStore_BootstrapACLToken(t *testing.T) {
	s := testStateStore(t)
	must.Eq(t, uint64(0), s.ACLBootstrapIndex())

	// Each step runs on the store as the previous steps left it.
	steps := []struct {
		name       string
		index      uint64
		resetIndex uint64
		wantErr    string
		wantIndex  uint64 // bootstrap index after the step
	}{
		{name: "first bootstrap", index: 10, resetIndex: 0, wantIndex: 10},
		{name: "second refused", index: 11, resetIndex: 0, wantErr: "ACL bootstrap already done (reset index: 10)", wantIndex: 10},
		{name: "wrong reset index refused", index: 12, resetIndex: 9, wantErr: "(reset index: 10)", wantIndex: 10},
		{name: "reset index allows again", index: 13, resetIndex: 10, wantIndex: 13},
		{name: "old reset index refused", index: 14, resetIndex: 10, wantErr: "(reset index: 13)", wantIndex: 13},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			accessor := "boot-" + string(rune('a'+step.index-10))
			token := mockToken(accessor, "secret-"+accessor, "Bootstrap Token", structs.ACLManagementToken)
			err := applyTxn(s, structs.ACLTokenBootstrapRequestType, step.index, nil, func(txn *Txn) error {
				return s.BootstrapACLTokenTxn(txn, step.resetIndex, token)
			})
			got, lookupErr := s.ACLTokenByAccessorID(nil, accessor)
			must.NoError(t, lookupErr)
			if step.wantErr != "" {
				mustCode(t, 400, err)
				must.StrContains(t, err.Error(), step.wantErr)
				must.Nil(t, got)
			} else {
				must.NoError(t, err)
				must.NotNil(t, got)
				must.Eq(t, step.index, got.CreateIndex)
			}
			must.Eq(t, step.wantIndex, s.ACLBootstrapIndex())
		})
	}
}

func TestStateStore_ACLTokens(t *testing.T) {
	s := testStateStore(t)
	alice := mockToken("aa-alice", "secret-alice", "alice", structs.ACLClientToken)
	bob := mockToken("bb-bob", "secret-bob", "bob", structs.ACLManagementToken)
	mustApply(t, s, structs.ACLTokenUpsertRequestType, 10, nil, func(txn *Txn) error {
		return s.UpsertACLTokensTxn(txn, []*structs.ACLToken{alice, bob})
	})

	cases := []struct {
		name         string
		lookup       func() (*structs.ACLToken, error)
		wantAccessor string // "" = not found
	}{
		{name: "by secret", lookup: func() (*structs.ACLToken, error) { return s.ACLTokenBySecretID(nil, "secret-alice") }, wantAccessor: "aa-alice"},
		{name: "by accessor", lookup: func() (*structs.ACLToken, error) { return s.ACLTokenByAccessorID(nil, "bb-bob") }, wantAccessor: "bb-bob"},
		{name: "unknown secret", lookup: func() (*structs.ACLToken, error) { return s.ACLTokenBySecretID(nil, "aa-alice") }},
		{name: "unknown accessor", lookup: func() (*structs.ACLToken, error) { return s.ACLTokenByAccessorID(nil, "secret-bob") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.lookup()
			must.NoError(t, err)
			if tc.wantAccessor == "" {
				must.Nil(t, got)
				return
			}
			must.NotNil(t, got)
			must.Eq(t, tc.wantAccessor, got.AccessorID)
		})
	}

	list, err := s.ACLTokens(nil, "aa")
	must.NoError(t, err)
	must.Len(t, 1, list)
	must.Eq(t, "aa-alice", list[0].AccessorID)

	// Update keeps CreateIndex.
	renamed := mockToken("aa-alice", "secret-alice", "alice2", structs.ACLClientToken)
	mustApply(t, s, structs.ACLTokenUpsertRequestType, 20, nil, func(txn *Txn) error {
		return s.UpsertACLTokensTxn(txn, []*structs.ACLToken{renamed})
	})
	got, err := s.ACLTokenBySecretID(nil, "secret-alice")
	must.NoError(t, err)
	must.Eq(t, "alice2", got.Name)
	must.Eq(t, uint64(10), got.CreateIndex)
	must.Eq(t, uint64(20), got.ModifyIndex)

	err = applyTxn(s, structs.ACLTokenDeleteRequestType, 30, nil, func(txn *Txn) error {
		return s.DeleteACLTokensTxn(txn, []string{"bb-bob", "nope"})
	})
	mustCode(t, 404, err)
	mustApply(t, s, structs.ACLTokenDeleteRequestType, 31, nil, func(txn *Txn) error {
		return s.DeleteACLTokensTxn(txn, []string{"bb-bob"})
	})
	gone, err := s.ACLTokenBySecretID(nil, "secret-bob")
	must.NoError(t, err)
	must.Nil(t, gone)
	must.Eq(t, uint64(31), s.Index(tableACLTokens))
}

func TestStateStore_ACLPolicies(t *testing.T) {
	s := testStateStore(t)
	mustApply(t, s, structs.ACLPolicyUpsertRequestType, 10, nil, func(txn *Txn) error {
		return s.UpsertACLPoliciesTxn(txn, []*structs.ACLPolicy{mockPolicy("readonly"), mockPolicy("ops"), mockPolicy("read-write")})
	})
	updated := mockPolicy("ops")
	updated.Description = "changed"
	mustApply(t, s, structs.ACLPolicyUpsertRequestType, 20, nil, func(txn *Txn) error {
		return s.UpsertACLPoliciesTxn(txn, []*structs.ACLPolicy{updated})
	})
	ops, err := s.ACLPolicyByName(nil, "ops")
	must.NoError(t, err)
	must.Eq(t, "changed", ops.Description)
	must.Eq(t, uint64(10), ops.CreateIndex)
	must.Eq(t, uint64(20), ops.ModifyIndex)

	cases := []struct {
		name   string
		prefix string
		want   []string
	}{
		{name: "all", want: []string{"ops", "read-write", "readonly"}},
		{name: "prefix", prefix: "read", want: []string{"read-write", "readonly"}},
		{name: "none", prefix: "x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			list, err := s.ACLPolicies(nil, tc.prefix)
			must.NoError(t, err)
			var names []string
			for _, p := range list {
				names = append(names, p.Name)
			}
			must.Eq(t, tc.want, names)
		})
	}

	err = applyTxn(s, structs.ACLPolicyDeleteRequestType, 30, nil, func(txn *Txn) error {
		return s.DeleteACLPoliciesTxn(txn, []string{"nope"})
	})
	mustCode(t, 404, err)
	mustApply(t, s, structs.ACLPolicyDeleteRequestType, 31, nil, func(txn *Txn) error {
		return s.DeleteACLPoliciesTxn(txn, []string{"ops"})
	})
	gone, err := s.ACLPolicyByName(nil, "ops")
	must.NoError(t, err)
	must.Nil(t, gone)
}

func TestStateStore_ACLRoles(t *testing.T) {
	cases := []struct {
		name     string
		roles    []*structs.ACLRole
		wantCode int // 0: success
		wantMsg  string
		wantName map[string]string // role ID → name after the write
	}{
		{name: "new role", roles: []*structs.ACLRole{mockRole("r2", "ops", "readonly")}, wantName: map[string]string{"r1": "dev", "r2": "ops"}},
		{name: "policy must exist", roles: []*structs.ACLRole{mockRole("r2", "ops", "missing")}, wantCode: 400, wantMsg: "cannot find policy missing"},
		{name: "names are unique", roles: []*structs.ACLRole{mockRole("r2", "dev", "readonly")}, wantCode: 400, wantMsg: "ACL role with name dev already exists"},
		{name: "update same role", roles: []*structs.ACLRole{mockRole("r1", "dev", "readonly", "ops")}, wantName: map[string]string{"r1": "dev"}},
		{name: "rename", roles: []*structs.ACLRole{mockRole("r1", "developers", "readonly")}, wantName: map[string]string{"r1": "developers"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStateStore(t)
			mustApply(t, s, structs.ACLPolicyUpsertRequestType, 10, nil, func(txn *Txn) error {
				return s.UpsertACLPoliciesTxn(txn, []*structs.ACLPolicy{mockPolicy("readonly"), mockPolicy("ops")})
			})
			mustApply(t, s, structs.ACLRoleUpsertRequestType, 11, nil, func(txn *Txn) error {
				return s.UpsertACLRolesTxn(txn, []*structs.ACLRole{mockRole("r1", "dev", "readonly")})
			})

			err := applyTxn(s, structs.ACLRoleUpsertRequestType, 20, nil, func(txn *Txn) error {
				return s.UpsertACLRolesTxn(txn, tc.roles)
			})
			if tc.wantCode != 0 {
				mustCode(t, tc.wantCode, err)
				must.StrContains(t, err.Error(), tc.wantMsg)
				roles, err := s.ACLRoles(nil)
				must.NoError(t, err)
				must.Len(t, 1, roles)
				must.Eq(t, uint64(11), s.Index(tableACLRoles))
				return
			}
			must.NoError(t, err)
			for id, name := range tc.wantName {
				byID, err := s.ACLRoleByID(nil, id)
				must.NoError(t, err)
				must.NotNil(t, byID)
				must.Eq(t, name, byID.Name)
				byName, err := s.ACLRoleByName(nil, name)
				must.NoError(t, err)
				must.Eq(t, byID, byName)
			}
			r1, err := s.ACLRoleByID(nil, "r1")
			must.NoError(t, err)
			must.Eq(t, uint64(11), r1.CreateIndex)
		})
	}
}

func TestStateStore_DeleteACLRoles(t *testing.T) {
	s := testStateStore(t)
	mustApply(t, s, structs.ACLPolicyUpsertRequestType, 10, nil, func(txn *Txn) error {
		return s.UpsertACLPoliciesTxn(txn, []*structs.ACLPolicy{mockPolicy("readonly")})
	})
	mustApply(t, s, structs.ACLRoleUpsertRequestType, 11, nil, func(txn *Txn) error {
		return s.UpsertACLRolesTxn(txn, []*structs.ACLRole{mockRole("r1", "dev", "readonly")})
	})
	err := applyTxn(s, structs.ACLRoleDeleteRequestType, 12, nil, func(txn *Txn) error {
		return s.DeleteACLRolesTxn(txn, []string{"nope"})
	})
	mustCode(t, 404, err)
	mustApply(t, s, structs.ACLRoleDeleteRequestType, 13, nil, func(txn *Txn) error {
		return s.DeleteACLRolesTxn(txn, []string{"r1"})
	})
	roles, err := s.ACLRoles(nil)
	must.NoError(t, err)
	must.SliceEmpty(t, roles)
	byName, err := s.ACLRoleByName(nil, "dev")
	must.NoError(t, err)
	must.Nil(t, byName)
}
