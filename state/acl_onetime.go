package state

import (
	"fmt"
	"time"

	"github.com/nomadfork/nomad/structs"
)

const tableOneTimeTokens = "one_time_token"

func init() {
	registerTable(tableOneTimeTokens, &structs.OneTimeToken{}, idIndex(field("OneTimeSecretID")))
}

// UpsertOneTimeTokenTxn stores a one-time token made by the leader.
func (s *StateStore) UpsertOneTimeTokenTxn(txn *Txn, ott *structs.OneTimeToken) error {
	if ott == nil || ott.OneTimeSecretID == "" || ott.AccessorID == "" {
		return structs.BadRequest("one-time token missing its secret or accessor")
	}
	c := *ott
	c.CreateIndex, c.ModifyIndex = txn.Index, txn.Index
	if err := txn.Insert(tableOneTimeTokens, &c); err != nil {
		return fmt.Errorf("state: one-time token insert: %w", err)
	}
	return txn.bumpIndex(tableOneTimeTokens)
}

// DeleteOneTimeTokensTxn removes one-time tokens by secret. With mustExist (an exchange) a
// secret already gone fails the whole write: a one-time token is exchanged once.
func (s *StateStore) DeleteOneTimeTokensTxn(txn *Txn, secrets []string, mustExist bool) error {
	for _, secret := range secrets {
		existing, err := txn.First(tableOneTimeTokens, indexID, secret)
		if err != nil {
			return fmt.Errorf("state: one-time token lookup: %w", err)
		}
		if existing == nil {
			if mustExist {
				return structs.PermissionDenied("one-time token not found or already exchanged")
			}
			continue
		}
		if err := txn.Delete(tableOneTimeTokens, existing); err != nil {
			return fmt.Errorf("state: one-time token delete: %w", err)
		}
	}
	return txn.bumpIndex(tableOneTimeTokens)
}

// OneTimeTokenBySecret reads one one-time token; nil when unknown.
func (s *StateStore) OneTimeTokenBySecret(secret string) (*structs.OneTimeToken, error) {
	return first[*structs.OneTimeToken](s.db.Txn(false), nil, "one-time token lookup", tableOneTimeTokens, indexID, secret)
}

// ExpiredOneTimeTokens lists the secrets of one-time tokens expired at now, at most limit.
func (s *StateStore) ExpiredOneTimeTokens(now time.Time, limit int) ([]string, error) {
	iter, err := s.db.Txn(false).Get(tableOneTimeTokens, indexID)
	if err != nil {
		return nil, fmt.Errorf("state: one-time token list: %w", err)
	}
	var out []string
	for raw := iter.Next(); raw != nil && len(out) < limit; raw = iter.Next() {
		if ott := raw.(*structs.OneTimeToken); !now.Before(ott.ExpiresAt) {
			out = append(out, ott.OneTimeSecretID)
		}
	}
	return out, nil
}
