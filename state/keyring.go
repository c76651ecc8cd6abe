package state

import (
	"cmp"
	"fmt"
	"slices"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

// UpsertRootKeyTxn stores a root key. A key's material never changes once stored: an upsert
// of an existing KeyID may change its state only.
func (s *StateStore) UpsertRootKeyTxn(txn *Txn, key *structs.RootKey) error {
	if key == nil || key.KeyID == "" {
		return structs.BadRequest("root key: KeyID must be set")
	}
	raw, err := txn.First(tableRootKeys, indexID, key.KeyID)
	if err != nil {
		return fmt.Errorf("state: root key lookup: %w", err)
	}
	stored := *key
	stored.CreateIndex, stored.ModifyIndex = txn.Index, txn.Index
	if raw != nil {
		existing := raw.(*structs.RootKey)
		if !slices.Equal(existing.PublicKey, key.PublicKey) || !slices.Equal(existing.PrivateKey, key.PrivateKey) {
			return structs.BadRequest("root key %q: key material cannot change", key.KeyID)
		}
		stored.CreateIndex = existing.CreateIndex
	}
	if err := txn.Insert(tableRootKeys, &stored); err != nil {
		return fmt.Errorf("state: root key insert: %w", err)
	}
	return txn.bumpIndex(tableRootKeys)
}

// RootKeys lists every root key, oldest first. The rows carry private key material: callers
// inside the server only; APIs answer from RootKey.Meta and RootKey.Public.
func (s *StateStore) RootKeys(ws memdb.WatchSet) ([]*structs.RootKey, error) {
	keys, err := list[*structs.RootKey](s.db.Txn(false), ws, "root key list", tableRootKeys, indexID)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(keys, func(a, b *structs.RootKey) int {
		return cmp.Compare(a.CreateIndex, b.CreateIndex)
	})
	return keys, nil
}

// RotateRootKeyTxn stores key as the one active root key: every other active key becomes
// inactive (it still verifies what it signed; it signs nothing new).
func (s *StateStore) RotateRootKeyTxn(txn *Txn, key *structs.RootKey) error {
	if key == nil || key.State != structs.RootKeyStateActive {
		return structs.BadRequest("root key rotation: the new key must be active")
	}
	iter, err := txn.Get(tableRootKeys, indexID)
	if err != nil {
		return fmt.Errorf("state: root key list: %w", err)
	}
	for _, old := range collect[*structs.RootKey](iter) {
		if old.State != structs.RootKeyStateActive || old.KeyID == key.KeyID {
			continue
		}
		retired := *old
		retired.State = structs.RootKeyStateInactive
		retired.ModifyIndex = txn.Index
		if err := txn.Insert(tableRootKeys, &retired); err != nil {
			return fmt.Errorf("state: root key insert: %w", err)
		}
	}
	return s.UpsertRootKeyTxn(txn, key)
}

// DeleteRootKeyTxn removes an inactive root key. The active key is refused: the cluster would
// have none to sign with.
func (s *StateStore) DeleteRootKeyTxn(txn *Txn, keyID string) error {
	raw, err := txn.First(tableRootKeys, indexID, keyID)
	if err != nil {
		return fmt.Errorf("state: root key lookup: %w", err)
	}
	if raw == nil {
		return structs.NotFound(structs.ErrRootKeyNotFound)
	}
	if raw.(*structs.RootKey).State == structs.RootKeyStateActive {
		return structs.BadRequest("active root key %s cannot be deleted: rotate first", keyID)
	}
	// Variables sealed with the key would never open again: acknowledged data lost.
	iter, err := txn.Get(tableVariables, indexID)
	if err != nil {
		return fmt.Errorf("state: variable scan: %w", err)
	}
	sealed := 0
	for obj := iter.Next(); obj != nil; obj = iter.Next() {
		if obj.(*structs.VariableEncrypted).KeyID == keyID {
			sealed++
		}
	}
	if sealed > 0 {
		return structs.BadRequest("root key %s still encrypts %d variables: write them again (they are sealed with the active key) before deleting it", keyID, sealed)
	}
	if err := txn.Delete(tableRootKeys, raw); err != nil {
		return fmt.Errorf("state: root key delete: %w", err)
	}
	return txn.bumpIndex(tableRootKeys)
}
