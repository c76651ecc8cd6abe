package state

import (
	"testing"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func TestRootKeys_UpsertAndList(t *testing.T) {
	cases := []struct {
		name    string
		second  *structs.RootKey
		wantErr string
		want    []string // key IDs, oldest first
	}{
		{
			name:   "second key",
			second: &structs.RootKey{KeyID: "b", PublicKey: []byte("pb"), PrivateKey: []byte("sb"), State: structs.RootKeyStateActive},
			want:   []string{"a", "b"},
		},
		{
			name:   "state change of the same key",
			second: &structs.RootKey{KeyID: "a", PublicKey: []byte("pa"), PrivateKey: []byte("sa"), State: structs.RootKeyStateInactive},
			want:   []string{"a"},
		},
		{
			name:    "material cannot change",
			second:  &structs.RootKey{KeyID: "a", PublicKey: []byte("other"), PrivateKey: []byte("sa")},
			wantErr: "key material cannot change",
			want:    []string{"a"},
		},
		{name: "no ID", second: &structs.RootKey{}, wantErr: "KeyID", want: []string{"a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStateStore(t)
			upsert := func(index uint64, key *structs.RootKey) error {
				return applyTxn(s, structs.KeyringUpsertRootKeyRequestType, index, &TxnMeta{},
					func(txn *Txn) error { return s.UpsertRootKeyTxn(txn, key) })
			}
			must.NoError(t, upsert(10, &structs.RootKey{KeyID: "a", PublicKey: []byte("pa"), PrivateKey: []byte("sa"), State: structs.RootKeyStateActive}))
			err := upsert(11, tc.second)
			if tc.wantErr != "" {
				must.ErrorContains(t, err, tc.wantErr)
			} else {
				must.NoError(t, err)
			}
			keys, err := s.RootKeys(nil)
			must.NoError(t, err)
			var ids []string
			for _, k := range keys {
				ids = append(ids, k.KeyID)
			}
			must.Eq(t, tc.want, ids)
			must.Eq(t, uint64(10), keys[0].CreateIndex)
			if tc.wantErr == "" {
				must.Eq(t, uint64(11), s.Index(tableRootKeys))
			} else {
				must.Eq(t, uint64(10), s.Index(tableRootKeys))
			}
		})
	}
}

// TestRootKeys_RotateAndDelete: a rotation leaves exactly one active key; the active key
// cannot be deleted, an inactive one can, an unknown one is not found.
func TestRootKeys_RotateAndDelete(t *testing.T) {
	s := testStateStore(t)
	key := func(id string) *structs.RootKey {
		return &structs.RootKey{KeyID: id, Algorithm: structs.RootKeyAlgorithm, State: structs.RootKeyStateActive,
			PublicKey: []byte("pub-" + id), PrivateKey: []byte("priv-" + id)}
	}
	mustApply(t, s, structs.KeyringUpsertRootKeyRequestType, 10, nil, func(txn *Txn) error { return s.UpsertRootKeyTxn(txn, key("a")) })
	mustApply(t, s, structs.KeyringRotateRootKeyRequestType, 11, nil, func(txn *Txn) error { return s.RotateRootKeyTxn(txn, key("b")) })
	keys, err := s.RootKeys(nil)
	must.NoError(t, err)
	must.Len(t, 2, keys)
	must.Eq(t, structs.RootKeyStateInactive, keys[0].State)
	must.Eq(t, uint64(11), keys[0].ModifyIndex)
	must.Eq(t, structs.RootKeyStateActive, keys[1].State)

	// A variable sealed with "a" holds it back until it is written again under "b".
	sealed := encVar("app/db", 0, "sealed")
	sealed.KeyID = "a"
	mustApply(t, s, structs.VarApplyStateRequestType, 12, nil, func(txn *Txn) error {
		_, err := s.ApplyVariableTxn(txn, structs.VarOpSet, sealed)
		return err
	})
	cases := []struct {
		name    string
		id      string
		before  func()
		wantErr string
	}{
		{name: "active", id: "b", wantErr: "cannot be deleted"},
		{name: "unknown", id: "zz", wantErr: "root key not found"},
		{name: "inactive but sealing a variable", id: "a", wantErr: "still encrypts 1 variables"},
		{name: "inactive", id: "a", before: func() {
			resealed := encVar("app/db", 12, "sealed again")
			resealed.KeyID = "b"
			mustApply(t, s, structs.VarApplyStateRequestType, 19, nil, func(txn *Txn) error {
				_, err := s.ApplyVariableTxn(txn, structs.VarOpSet, resealed)
				return err
			})
		}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.before != nil {
				tc.before()
			}
			err := applyTxn(s, structs.KeyringDeleteRootKeyRequestType, uint64(20+i), nil, func(txn *Txn) error {
				return s.DeleteRootKeyTxn(txn, tc.id)
			})
			if tc.wantErr != "" {
				must.ErrorContains(t, err, tc.wantErr)
				return
			}
			must.NoError(t, err)
		})
	}
	keys, err = s.RootKeys(nil)
	must.NoError(t, err)
	must.Len(t, 1, keys)
	must.Eq(t, "b", keys[0].KeyID)
}
