package state

import (
	"testing"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestStateStore_ReconcileJobSummaries: a summary whose counts drifted from the allocations
// (or that is missing) is rebuilt; Queued is kept; an accurate summary is left untouched.
func TestStateStore_ReconcileJobSummaries(t *testing.T) {
	s := testStateStore(t)
	web, api := mockJob("web"), mockJob("api")
	upsertJob(t, s, 10, web)
	upsertJob(t, s, 11, api)
	applyPlan(t, s, 12, &structs.ApplyPlanResultsRequest{
		Job:          currentJob(t, s, "web"),
		AllocsPlaced: []*structs.Allocation{mockAlloc("a1", web, "node-1", 0), mockAlloc("a2", web, "node-1", 1)},
	})
	apiSummary, err := s.JobSummaryByID(nil, structs.DefaultNamespace, "api")
	must.NoError(t, err)

	// Damage: web's counts drift and Queued is set; api's summary is lost.
	mustApply(t, s, structs.JobRegisterRequestType, 13, nil, func(txn *Txn) error {
		bad := &structs.JobSummary{JobID: "web", Namespace: structs.DefaultNamespace, CreateIndex: 10, ModifyIndex: 13,
			Summary: map[string]structs.TaskGroupSummary{"web": {Running: 7, Failed: 3, Queued: 2}, "gone": {Running: 1}}}
		if err := txn.Insert(tableJobSummary, bad); err != nil {
			return err
		}
		_, err := txn.DeleteAll(tableJobSummary, indexID, structs.DefaultNamespace, "api")
		return err
	})

	mustApply(t, s, structs.ReconcileJobSummariesRequestType, 14, nil, func(txn *Txn) error {
		return s.ReconcileJobSummariesTxn(txn)
	})
	got, err := s.JobSummaryByID(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	must.Eq(t, map[string]structs.TaskGroupSummary{"web": {Starting: 2, Queued: 2}}, got.Summary)
	must.Eq(t, uint64(14), got.ModifyIndex)
	restored, err := s.JobSummaryByID(nil, structs.DefaultNamespace, "api")
	must.NoError(t, err)
	must.NotNil(t, restored)
	must.Eq(t, apiSummary.Summary, restored.Summary)

	// Nothing to repair: no write.
	mustApply(t, s, structs.ReconcileJobSummariesRequestType, 15, nil, func(txn *Txn) error {
		return s.ReconcileJobSummariesTxn(txn)
	})
	again, err := s.JobSummaryByID(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	must.Eq(t, uint64(14), again.ModifyIndex)
}
