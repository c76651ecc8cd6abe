package state

import (
	"errors"
	"testing"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestStateStore_PurgeRecord_SameTxn checks the record and the removal it describes are one
// transaction: neither exists without the other.
func TestStateStore_PurgeRecord_SameTxn(t *testing.T) {
	errAbort := errors.New("abort")
	cases := []struct {
		name string
		// record builds the record written after the deletion; nil writes none.
		record    func(job *structs.Job) *structs.PurgeRecord
		abort     bool
		wantErr   bool
		wantGone  bool
		wantCount int
	}{
		{
			name: "commit writes both",
			record: func(job *structs.Job) *structs.PurgeRecord {
				return mockPurgeRecord("rec-1", job, structs.PurgeReasonPurge, actorAlice, 20)
			},
			wantGone:  true,
			wantCount: 1,
		},
		{
			name: "abort writes neither",
			record: func(job *structs.Job) *structs.PurgeRecord {
				return mockPurgeRecord("rec-1", job, structs.PurgeReasonPurge, actorAlice, 20)
			},
			abort: true,
		},
		{
			name: "record without ID refuses the removal",
			record: func(job *structs.Job) *structs.PurgeRecord {
				return mockPurgeRecord("", job, structs.PurgeReasonPurge, actorAlice, 20)
			},
			wantErr: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStateStore(t)
			upsertJob(t, s, 10, mockJob("web"))

			err := applyTxn(s, structs.JobDeregisterRequestType, 20, &TxnMeta{Purge: true, Actor: actorAlice}, func(txn *Txn) error {
				job, err := s.JobByIDTxn(txn, structs.DefaultNamespace, "web")
				must.NoError(t, err)
				if err := s.DeleteJobTxn(txn, structs.DefaultNamespace, "web"); err != nil {
					return err
				}
				if err := s.InsertPurgeRecordTxn(txn, tc.record(job)); err != nil {
					return err
				}
				if tc.abort {
					return errAbort
				}
				return nil
			})
			switch {
			case tc.abort:
				must.ErrorIs(t, err, errAbort)
			case tc.wantErr:
				must.Error(t, err)
				must.StrContains(t, err.Error(), "has no ID")
			default:
				must.NoError(t, err)
			}

			job, err := s.JobByID(nil, structs.DefaultNamespace, "web")
			must.NoError(t, err)
			must.Eq(t, tc.wantGone, job == nil)
			versions := jobVersions(t, s, structs.DefaultNamespace, "web")
			must.Eq(t, tc.wantGone, len(versions) == 0)
			records, err := s.PurgeRecords(nil)
			must.NoError(t, err)
			must.Len(t, tc.wantCount, records)
			if tc.wantCount == 0 {
				must.Eq(t, uint64(0), s.Index(tablePurgeHistory))
				return
			}
			rec := records[0]
			must.Eq(t, uint64(20), rec.CreateIndex)
			must.Eq(t, uint64(20), s.Index(tablePurgeHistory))
			must.Eq(t, "web", rec.JobID)
			must.Eq(t, actorAlice, rec.Actor)
			must.NotNil(t, rec.Job)
			must.Eq(t, uint64(10), rec.Job.ModifyIndex)
			byID, err := s.PurgeRecordByID(nil, "rec-1")
			must.NoError(t, err)
			must.Eq(t, rec, byID)
		})
	}
}

func TestStateStore_PurgeRecords_ListAndDelete(t *testing.T) {
	s := testStateStore(t)
	// Two records at index 20 (a GC batch) and one at 21.
	for i, id := range []string{"web", "api", "db"} {
		upsertJob(t, s, uint64(10+i), mockJob(id))
	}
	must.NoError(t, applyBatchDeregister(s, 20, []structs.NamespacedID{
		{Namespace: structs.DefaultNamespace, ID: "web"},
		{Namespace: structs.DefaultNamespace, ID: "api"},
	}))
	must.NoError(t, applyPurge(s, 21, actorBob, structs.DefaultNamespace, "db", "zz-db", nil))

	ids := func() []string {
		records, err := s.PurgeRecords(nil)
		must.NoError(t, err)
		var out []string
		for _, r := range records {
			out = append(out, r.ID)
		}
		return out
	}
	// Newest first; one index's records by ID.
	must.Eq(t, []string{"zz-db", "gc-default/api", "gc-default/web"}, ids())

	gc, err := s.PurgeRecordByID(nil, "gc-default/web")
	must.NoError(t, err)
	must.Eq(t, structs.PurgeReasonGC, gc.Reason)
	must.Eq(t, structs.ActorJobGC, gc.Actor)

	cases := []struct {
		name  string
		index uint64
		ids   []string
		want  []string
	}{
		{name: "unknown ignored", index: 30, ids: []string{"nope"}, want: []string{"zz-db", "gc-default/api", "gc-default/web"}},
		// Retention removes the oldest part of the chain only: a record newer than one that
		// stays is kept (it goes once the older one does), so the rest still verifies.
		{name: "newer than a kept record stays", index: 31, ids: []string{"gc-default/api"}, want: []string{"zz-db", "gc-default/api", "gc-default/web"}},
		{name: "delete some", index: 32, ids: []string{"gc-default/api", "gc-default/web"}, want: []string{"zz-db"}},
		{name: "delete last", index: 33, ids: []string{"zz-db"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mustApply(t, s, structs.PurgeRecordDeleteRequestType, tc.index, nil, func(txn *Txn) error {
				return s.DeletePurgeRecordsTxn(txn, tc.ids)
			})
			must.Eq(t, tc.want, ids())
			must.Eq(t, tc.index, s.Index(tablePurgeHistory))
			verify, _, err := s.VerifyPurgeChain()
			must.NoError(t, err)
			must.True(t, verify.Valid, must.Sprintf("%+v", verify.Broken))
			must.Eq(t, len(tc.want), verify.Records)
		})
	}
	missing, err := s.PurgeRecordByID(nil, "zz-db")
	must.NoError(t, err)
	must.Nil(t, missing)
}
