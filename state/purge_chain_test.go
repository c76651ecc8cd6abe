package state

import (
	"bytes"
	"io"
	"reflect"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// purgeChainFixture purges five jobs, one record each, chained in order.
func purgeChainFixture(t *testing.T) *StateStore {
	t.Helper()
	s := testStateStore(t)
	for i, id := range []string{"a", "b", "c", "d", "e"} {
		upsertJob(t, s, uint64(10+i), mockJob(id))
		must.NoError(t, applyPurge(s, uint64(20+i), actorBob, structs.DefaultNamespace, id, "rec-"+id, nil))
	}
	return s
}

// rewriteSnapshot persists s, passes every row through edit (which may drop one by answering
// false) and restores the result into a new store, as an attacker editing a snapshot file would.
func rewriteSnapshot(t *testing.T, s *StateStore, edit func(table string, row any) bool) *StateStore {
	t.Helper()
	var in, out bytes.Buffer
	must.NoError(t, s.Snapshot().Persist(&in))
	dec := codec.NewDecoder(&in, structs.MsgpackHandle)
	enc := codec.NewEncoder(&out, structs.MsgpackHandle)
	for {
		var hdr snapshotHeader
		if err := dec.Decode(&hdr); err == io.EOF {
			break
		} else {
			must.NoError(t, err)
		}
		if hdr.Table == schemaRecord {
			must.NoError(t, enc.Encode(&hdr))
			continue
		}
		row := reflect.New(tables[hdr.Table].rowType.Elem()).Interface()
		must.NoError(t, dec.Decode(row))
		if !edit(hdr.Table, row) {
			continue
		}
		must.NoError(t, enc.Encode(&hdr))
		must.NoError(t, enc.Encode(row))
	}
	restored, err := Restore(s.Config(), &out)
	must.NoError(t, err)
	return restored
}

func TestPurgeChain_VerifiesAndSurvivesSnapshots(t *testing.T) {
	s := purgeChainFixture(t)
	got, _, err := s.VerifyPurgeChain()
	must.NoError(t, err)
	must.True(t, got.Valid)
	must.Eq(t, 5, got.Records)
	rec, err := s.PurgeRecordByID(nil, "rec-e")
	must.NoError(t, err)
	must.Eq(t, rec.Hash, got.Head)
	prev, err := s.PurgeRecordByID(nil, "rec-d")
	must.NoError(t, err)
	must.Eq(t, prev.Hash, rec.PrevHash)
	must.Eq(t, uint64(5), rec.ChainSeq)

	// An untouched snapshot restores to a chain that verifies.
	restored := rewriteSnapshot(t, s, func(string, any) bool { return true })
	got, _, err = restored.VerifyPurgeChain()
	must.NoError(t, err)
	must.True(t, got.Valid, must.Sprintf("%+v", got.Broken))
	must.Eq(t, 5, got.Records)
}

// TestPurgeChain_TamperedSnapshotIsCaught edits, removes and re-links records in a snapshot:
// verify names the first record that breaks the chain each time.
func TestPurgeChain_TamperedSnapshotIsCaught(t *testing.T) {
	s := purgeChainFixture(t)
	cases := []struct {
		name     string
		edit     func(rec *structs.PurgeRecord) bool
		wantSeq  uint64
		wantWhy  string
		wantRecs int
	}{
		{
			name: "actor rewritten",
			edit: func(r *structs.PurgeRecord) bool {
				if r.ID == "rec-c" {
					r.Actor = &structs.Actor{Name: "nobody", Type: structs.ACLClientToken}
				}
				return true
			},
			wantSeq: 3, wantWhy: "the record was changed", wantRecs: 2,
		},
		{
			name: "spec rewritten",
			edit: func(r *structs.PurgeRecord) bool {
				if r.ID == "rec-b" {
					r.Job.Meta = map[string]string{"planted": "yes"}
				}
				return true
			},
			wantSeq: 2, wantWhy: "the record was changed", wantRecs: 1,
		},
		{
			name:    "record removed",
			edit:    func(r *structs.PurgeRecord) bool { return r.ID != "rec-c" },
			wantSeq: 4, wantWhy: "records are missing", wantRecs: 2,
		},
		{
			name:    "newest record removed",
			edit:    func(r *structs.PurgeRecord) bool { return r.ID != "rec-e" },
			wantSeq: 4, wantWhy: "records after it are missing", wantRecs: 4,
		},
		{
			name: "edited and re-hashed, but not re-linked",
			edit: func(r *structs.PurgeRecord) bool {
				if r.ID == "rec-c" {
					r.JobID = "other"
					r.Hash, _ = r.ComputeHash()
				}
				return true
			},
			wantSeq: 4, wantWhy: "PrevHash does not match", wantRecs: 3,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			restored := rewriteSnapshot(t, s, func(table string, row any) bool {
				if table != tablePurgeHistory {
					return true
				}
				return tc.edit(row.(*structs.PurgeRecord))
			})
			got, _, err := restored.VerifyPurgeChain()
			must.NoError(t, err)
			must.False(t, got.Valid)
			must.NotNil(t, got.Broken)
			must.Eq(t, tc.wantSeq, got.Broken.ChainSeq)
			must.StrContains(t, got.Broken.Reason, tc.wantWhy)
			must.Eq(t, tc.wantRecs, got.Records)
		})
	}
}

// TestPurgeChain_RetentionLeavesACheckpoint: after retention removes the oldest records, the
// rest verifies against the checkpoint, and a forged oldest record does not.
func TestPurgeChain_RetentionLeavesACheckpoint(t *testing.T) {
	s := purgeChainFixture(t)
	b, err := s.PurgeRecordByID(nil, "rec-b")
	must.NoError(t, err)
	mustApply(t, s, structs.PurgeRecordDeleteRequestType, 40, nil, func(txn *Txn) error {
		return s.DeletePurgeRecordsTxn(txn, []string{"rec-a", "rec-b"})
	})
	got, _, err := s.VerifyPurgeChain()
	must.NoError(t, err)
	must.True(t, got.Valid, must.Sprintf("%+v", got.Broken))
	must.Eq(t, 3, got.Records)
	must.Eq(t, b.Hash, got.Checkpoint)

	restored := rewriteSnapshot(t, s, func(table string, row any) bool {
		if r, ok := row.(*structs.PurgeRecord); ok && r.ID == "rec-c" {
			r.Reason = structs.PurgeReasonGC
		}
		return true
	})
	got, _, err = restored.VerifyPurgeChain()
	must.NoError(t, err)
	must.False(t, got.Valid)
	must.Eq(t, uint64(3), got.Broken.ChainSeq)
}
