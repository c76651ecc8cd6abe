package state

import (
	"testing"
	"time"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestOneTimeTokens_ExchangedOnce: the exchange's delete fails when the token is already
// gone, so two exchanges of one secret cannot both succeed; expiry lists only expired ones.
func TestOneTimeTokens_ExchangedOnce(t *testing.T) {
	s := testStateStore(t)
	at := time.Unix(1_800_000_000, 0)
	mustApply(t, s, structs.OneTimeTokenUpsertRequestType, 10, nil, func(txn *Txn) error {
		return s.UpsertOneTimeTokenTxn(txn, &structs.OneTimeToken{OneTimeSecretID: "s1", AccessorID: "a1", ExpiresAt: at})
	})
	mustApply(t, s, structs.OneTimeTokenUpsertRequestType, 11, nil, func(txn *Txn) error {
		return s.UpsertOneTimeTokenTxn(txn, &structs.OneTimeToken{OneTimeSecretID: "s2", AccessorID: "a1", ExpiresAt: at.Add(time.Hour)})
	})
	expired, err := s.ExpiredOneTimeTokens(at, 10)
	must.NoError(t, err)
	must.Eq(t, []string{"s1"}, expired)

	mustApply(t, s, structs.OneTimeTokenDeleteRequestType, 12, nil, func(txn *Txn) error {
		return s.DeleteOneTimeTokensTxn(txn, []string{"s2"}, true)
	})
	err = applyTxn(s, structs.OneTimeTokenDeleteRequestType, 13, nil, func(txn *Txn) error {
		return s.DeleteOneTimeTokensTxn(txn, []string{"s2"}, true)
	})
	mustCode(t, 403, err)
	must.Eq(t, uint64(12), s.Index(tableOneTimeTokens))
	got, err := s.OneTimeTokenBySecret("s2")
	must.NoError(t, err)
	must.Nil(t, got)
}
