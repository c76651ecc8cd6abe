package state

import (
	"testing"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestPurgedAllocations_EndStatesSurviveThePurge: a job purged while its allocations run
// keeps them in its purge record; the clients' reports of how they ended are still taken
// (from their own node only) and published as AllocationUpdated events with the job gone.
func TestPurgedAllocations_EndStatesSurviveThePurge(t *testing.T) {
	s := testStateStore(t)
	upsertJob(t, s, 10, mockJob("web"))
	web := currentJob(t, s, "web")
	applyPlan(t, s, 11, &structs.ApplyPlanResultsRequest{Job: web, AllocsPlaced: []*structs.Allocation{
		mockAlloc("a1", web, "n1", 0), mockAlloc("a2", web, "n2", 1)}})
	applyClientUpdate(t, s, 12, clientStatus("a1", structs.AllocClientStatusRunning))
	applyClientUpdate(t, s, 13, clientStatus("a2", structs.AllocClientStatusRunning))
	must.NoError(t, applyPurge(s, 14, nil, structs.DefaultNamespace, "web", "rec-1", nil))

	rec, err := s.PurgeRecordByID(nil, "rec-1")
	must.NoError(t, err)
	must.Len(t, 2, rec.Allocations)
	for _, a := range rec.Allocations {
		must.Eq(t, structs.AllocClientStatusRunning, a.ClientStatus, must.Sprintf("allocation %s", a.ID))
	}

	events := captureEvents(s)
	// a1 ends on its node: the record takes it and an AllocationUpdated event reports it.
	ended := clientStatus("a1", structs.AllocClientStatusComplete)
	ended.ClientDescription = "All tasks have completed"
	applyClientUpdateFrom(t, s, 15, "n1", ended)
	// A report about a2 from another node changes nothing and publishes nothing.
	applyClientUpdateFrom(t, s, 16, "n1", clientStatus("a2", structs.AllocClientStatusFailed))

	rec, err = s.PurgeRecordByID(nil, "rec-1")
	must.NoError(t, err)
	byID := map[string]*structs.PurgedAllocation{}
	for _, a := range rec.Allocations {
		byID[a.ID] = a
	}
	must.Eq(t, structs.AllocClientStatusComplete, byID["a1"].ClientStatus)
	must.Eq(t, "All tasks have completed", byID["a1"].ClientDescription)
	must.Eq(t, uint64(15), byID["a1"].ModifyIndex)
	must.Eq(t, structs.AllocClientStatusRunning, byID["a2"].ClientStatus)
	must.Eq(t, uint64(15), rec.ModifyIndex)
	must.Eq(t, uint64(14), rec.CreateIndex)
	must.Eq(t, uint64(15), s.Index(tablePurgeHistory))
	// The report changes how the work ended, not who removed the job: the chain still holds.
	verify, _, err := s.VerifyPurgeChain()
	must.NoError(t, err)
	must.True(t, verify.Valid, must.Sprintf("%+v", verify.Broken))

	must.Len(t, 1, *events, must.Sprint("one batch: the report from the wrong node publishes nothing"))
	batch := (*events)[0]
	must.Len(t, 1, batch.Events)
	e := batch.Events[0]
	must.Eq(t, structs.TopicAllocation, e.Topic)
	must.Eq(t, "AllocationUpdated", e.Type)
	must.Eq(t, "a1", e.Key)
	alloc := e.Payload.(*structs.AllocationEvent).Allocation
	must.Eq(t, "web", alloc.JobID)
	must.Nil(t, alloc.Job)
	must.Eq(t, structs.AllocClientStatusComplete, alloc.ClientStatus)
	must.Eq(t, "n1", alloc.NodeID)

	// The job stays gone: the report revives nothing.
	job, err := s.JobByID(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	must.Nil(t, job)
	gone, err := s.AllocByID(nil, "a1")
	must.NoError(t, err)
	must.Nil(t, gone)
}

// TestPurgedAllocations_GCKeepsThemToo: the job GC's removal records the allocations as a
// purge does.
func TestPurgedAllocations_GCKeepsThemToo(t *testing.T) {
	s := testStateStore(t)
	upsertJob(t, s, 10, mockJob("batch"))
	job := currentJob(t, s, "batch")
	applyPlan(t, s, 11, &structs.ApplyPlanResultsRequest{Job: job, AllocsPlaced: []*structs.Allocation{mockAlloc("b1", job, "n1", 0)}})
	applyClientUpdate(t, s, 12, clientStatus("b1", structs.AllocClientStatusComplete))
	must.NoError(t, applyBatchDeregister(s, 13, []structs.NamespacedID{{Namespace: structs.DefaultNamespace, ID: "batch"}}))
	rec, err := s.PurgeRecordByAllocID("b1")
	must.NoError(t, err)
	must.NotNil(t, rec)
	must.Eq(t, structs.PurgeReasonGC, rec.Reason)
	must.Eq(t, structs.AllocClientStatusComplete, rec.Allocations[0].ClientStatus)
}
