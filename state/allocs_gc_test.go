package state

import (
	"bytes"
	"testing"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// gcFixture is a service job "web" with one allocation in each client status the GC collects
// (c1 complete, f1 failed, l1 lost) and one still running (r1), all placed at 11 and
// reported at 12.
func gcFixture(t *testing.T) *StateStore {
	t.Helper()
	s := testStateStore(t)
	upsertJob(t, s, 10, mockJob("web"))
	web := currentJob(t, s, "web")
	applyPlan(t, s, 11, &structs.ApplyPlanResultsRequest{Job: web, AllocsPlaced: []*structs.Allocation{
		mockAlloc("c1", web, "n1", 0), mockAlloc("f1", web, "n1", 1), mockAlloc("l1", web, "n1", 2), mockAlloc("r1", web, "n1", 3)}})
	applyClientUpdate(t, s, 12, clientStatus("c1", structs.AllocClientStatusComplete), clientStatus("f1", structs.AllocClientStatusFailed),
		clientStatus("l1", structs.AllocClientStatusLost), clientStatus("r1", structs.AllocClientStatusRunning))
	return s
}

func allocIDsOf(t *testing.T, s *StateStore, job string) []string {
	t.Helper()
	allocs, err := s.AllocsByJob(nil, structs.DefaultNamespace, job)
	must.NoError(t, err)
	ids := []string{}
	for _, a := range allocs {
		ids = append(ids, a.ID)
	}
	return ids
}

// Applying the allocation GC's entry deletes exactly the finished allocations it names (a
// running one named by mistake, or an unknown ID, is skipped), with their service
// registrations, in one transaction that publishes no event; the job's summary keeps every
// count, through later recounts and a snapshot, and the tally goes with the job.
func TestDeleteAllocs_KeepsTheSummaryCounts(t *testing.T) {
	s := gcFixture(t)
	want := structs.TaskGroupSummary{Complete: 1, Failed: 1, Lost: 1, Running: 1}
	must.Eq(t, want, summaryOf(t, s, "web"))
	// A registration left behind by a finished allocation goes with it.
	mustApply(t, s, structs.ServiceRegistrationUpsertRequestType, 13, nil, func(txn *Txn) error {
		return txn.Insert(tableServiceRegistrations, &structs.ServiceRegistration{ID: "svc-c1", ServiceName: "web",
			Namespace: structs.DefaultNamespace, NodeID: "n1", JobID: "web", AllocID: "c1"})
	})
	summaryIndex := s.Index(tableJobSummary)

	events := captureEvents(s)
	must.NoError(t, s.ApplyAllocDelete(20, &structs.AllocDeleteRequest{Allocs: []string{"c1", "f1", "l1", "r1", "nope"}}))

	must.Eq(t, []string{"r1"}, allocIDsOf(t, s, "web"))
	must.Eq(t, uint64(20), s.Index(tableAllocs))
	svc, err := s.ServiceRegistrationByID(nil, "svc-c1")
	must.NoError(t, err)
	must.Nil(t, svc)
	must.Eq(t, want, summaryOf(t, s, "web"), must.Sprint("collecting allocations keeps what ran in the summary"))
	must.Eq(t, summaryIndex, s.Index(tableJobSummary), must.Sprint("the counts did not change: the summary is not rewritten"))
	must.Len(t, 0, *events, must.Sprint("a deleted allocation is not an AllocationUpdated (nor any other) event"))
	tally, err := s.JobCollectedAllocs(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	must.NotNil(t, tally)
	must.Eq(t, map[string]structs.CollectedAllocCounts{"web": {Complete: 1, Failed: 1, Lost: 1}}, tally.Groups)
	job := currentJob(t, s, "web")
	must.Eq(t, structs.JobStatusRunning, job.Status)

	// A later recount (a new allocation placed, a client's report) adds the tally back.
	applyPlan(t, s, 21, &structs.ApplyPlanResultsRequest{Job: job, AllocsPlaced: []*structs.Allocation{mockAlloc("n1", job, "n1", 4)}})
	applyClientUpdate(t, s, 22, clientStatus("r1", structs.AllocClientStatusComplete))
	want = structs.TaskGroupSummary{Complete: 2, Failed: 1, Lost: 1, Starting: 1}
	must.Eq(t, want, summaryOf(t, s, "web"))
	// A second collection adds to the tally.
	must.NoError(t, s.ApplyAllocDelete(23, &structs.AllocDeleteRequest{Allocs: []string{"r1"}}))
	must.Eq(t, want, summaryOf(t, s, "web"))
	// So does the operator's full recount.
	mustApply(t, s, structs.ReconcileJobSummariesRequestType, 24, nil, s.ReconcileJobSummariesTxn)
	must.Eq(t, want, summaryOf(t, s, "web"))

	// A snapshot carries the tally: the restored store counts the same.
	var buf bytes.Buffer
	must.NoError(t, s.Snapshot().Persist(&buf))
	restored, err := Restore(s.Config(), &buf)
	must.NoError(t, err)
	restoredTally, err := restored.JobCollectedAllocs(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	must.Eq(t, map[string]structs.CollectedAllocCounts{"web": {Complete: 2, Failed: 1, Lost: 1}}, restoredTally.Groups)
	mustApply(t, restored, structs.ReconcileJobSummariesRequestType, 25, nil, restored.ReconcileJobSummariesTxn)
	must.Eq(t, want, summaryOf(t, restored, "web"))

	// A purge takes the tally with the job: a job registered again under the ID starts at zero.
	must.NoError(t, applyPurge(s, 26, nil, structs.DefaultNamespace, "web", "rec-1", nil))
	tally, err = s.JobCollectedAllocs(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	must.Nil(t, tally)
	must.Eq(t, uint64(26), s.Index(tableJobCollectedAllocs))
	upsertJob(t, s, 27, mockJob("web"))
	must.Eq(t, structs.TaskGroupSummary{}, summaryOf(t, s, "web"))
}

// A job whose allocations and evaluations were all collected ran: it is dead, not pending
// as a job that never ran.
func TestDeleteAllocs_JobThatRanStaysDead(t *testing.T) {
	s := testStateStore(t)
	upsertJob(t, s, 10, mockJob("web"))
	web := currentJob(t, s, "web")
	eval := mockEval("e1", web, structs.EvalTriggerJobRegister)
	eval.Status = structs.EvalStatusComplete
	applyPlan(t, s, 11, &structs.ApplyPlanResultsRequest{Job: web, AllocsPlaced: []*structs.Allocation{mockAlloc("c1", web, "n1", 0)},
		Evals: []*structs.Evaluation{eval}})
	applyClientUpdate(t, s, 12, clientStatus("c1", structs.AllocClientStatusComplete))
	must.Eq(t, structs.JobStatusDead, currentJob(t, s, "web").Status)

	must.NoError(t, s.ApplyAllocDelete(13, &structs.AllocDeleteRequest{Allocs: []string{"c1"}}))
	mustApply(t, s, structs.EvalDeleteRequestType, 14, nil, func(txn *Txn) error { return s.DeleteEvalsTxn(txn, []string{"e1"}) })
	must.Eq(t, structs.JobStatusDead, currentJob(t, s, "web").Status)
	must.Eq(t, structs.TaskGroupSummary{Complete: 1}, summaryOf(t, s, "web"))
}
