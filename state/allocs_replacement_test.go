package state

import (
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func mustAlloc(t *testing.T, s *StateStore, id string) *structs.Allocation {
	t.Helper()
	a, err := s.AllocByID(nil, id)
	must.NoError(t, err)
	must.NotNil(t, a, must.Sprintf("alloc %s", id))
	return a
}

// TestStateStore_PlanLinksReplacedAllocation: a placement naming a PreviousAllocation makes
// that allocation name it back (NextAllocation) in the same write, moving its ModifyIndex and
// ModifyTime but not AllocModifyIndex (nothing its client runs changed) nor any count. An
// unknown previous allocation, or one of another job, is left alone; readers of an older
// view keep the row they had; a later replacement wins.
func TestStateStore_PlanLinksReplacedAllocation(t *testing.T) {
	s := testStateStore(t)
	mustApply(t, s, structs.NodeRegisterRequestType, 5, nil, func(txn *Txn) error { return s.UpsertNodeTxn(txn, mockNode("n1")) })
	upsertJob(t, s, 10, mockJob("web"))
	upsertJob(t, s, 11, mockJob("other"))
	web, other := currentJob(t, s, "web"), currentJob(t, s, "other")
	applyPlan(t, s, 12, &structs.ApplyPlanResultsRequest{Job: web, UpdatedAt: 50, AllocsPlaced: []*structs.Allocation{
		mockAlloc("failed", web, "n1", 0), mockAlloc("updated", web, "n1", 1),
	}})
	applyPlan(t, s, 13, &structs.ApplyPlanResultsRequest{Job: other, AllocsPlaced: []*structs.Allocation{mockAlloc("foreign", other, "n1", 0)}})
	applyClientUpdate(t, s, 14, clientStatus("failed", structs.AllocClientStatusFailed), clientStatus("updated", structs.AllocClientStatusRunning))
	before := mustAlloc(t, s, "failed")
	view := s.PointInTime()
	summaryBefore := summaryOf(t, s, "web")

	resched := mockAlloc("resched", web, "n1", 0)
	resched.PreviousAllocation = "failed"
	destructive := mockAlloc("destructive", web, "n1", 1)
	destructive.PreviousAllocation = "updated"
	ghost := mockAlloc("ghost-repl", web, "n1", 2)
	ghost.PreviousAllocation = "collected-since"
	stranger := mockAlloc("stranger", web, "n1", 3)
	stranger.PreviousAllocation = "foreign"
	applyPlan(t, s, 20, &structs.ApplyPlanResultsRequest{Job: web, UpdatedAt: 77,
		AllocsPlaced: []*structs.Allocation{resched, destructive, ghost, stranger},
		// A destructive update stops the old allocation in the entry that places its successor.
		AllocsStopped: []*structs.AllocStopUpdate{{AllocID: "updated", DesiredDescription: "alloc is being updated"}},
	})

	failed := mustAlloc(t, s, "failed")
	must.Eq(t, "resched", failed.NextAllocation)
	must.Eq(t, uint64(20), failed.ModifyIndex)
	must.Eq(t, int64(77), failed.ModifyTime)
	must.Eq(t, before.AllocModifyIndex, failed.AllocModifyIndex, must.Sprint("its client has nothing new to run"))
	must.Eq(t, structs.AllocClientStatusFailed, failed.ClientStatus)
	must.Eq(t, structs.AllocDesiredStatusRun, failed.DesiredStatus)

	updated := mustAlloc(t, s, "updated")
	must.Eq(t, "destructive", updated.NextAllocation, must.Sprint("the stop in the same entry keeps the link"))
	must.Eq(t, structs.AllocDesiredStatusStop, updated.DesiredStatus)
	must.Eq(t, uint64(20), updated.ModifyIndex)

	foreign := mustAlloc(t, s, "foreign")
	must.Eq(t, "", foreign.NextAllocation, must.Sprint("another job's allocation is not linked"))
	must.Eq(t, uint64(13), foreign.ModifyIndex)
	got, err := s.AllocByID(nil, "collected-since")
	must.NoError(t, err)
	must.Nil(t, got, must.Sprint("an unknown previous allocation is not created"))
	must.Eq(t, "collected-since", mustAlloc(t, s, "ghost-repl").PreviousAllocation)

	// The stored row was copied, not changed under its readers.
	must.Eq(t, "", before.NextAllocation)
	must.Eq(t, uint64(14), before.ModifyIndex)
	old, err := view.AllocByID(nil, "failed")
	must.NoError(t, err)
	must.Eq(t, "", old.NextAllocation)

	// Only the new placements count; the linked ones are counted as they were.
	summary := summaryOf(t, s, "web")
	must.Eq(t, summaryBefore.Failed, summary.Failed)
	must.Eq(t, summaryBefore.Running, summary.Running)
	must.Eq(t, summaryBefore.Starting+4, summary.Starting)

	must.Eq(t, uint64(20), s.Index(tableAllocs))

	// Replaced again (its replacement failed to be placed for good, say): the latest names it.
	again := mockAlloc("again", web, "n1", 0)
	again.PreviousAllocation = "failed"
	applyPlan(t, s, 21, &structs.ApplyPlanResultsRequest{Job: web, UpdatedAt: 88, AllocsPlaced: []*structs.Allocation{again}})
	failed = mustAlloc(t, s, "failed")
	must.Eq(t, "again", failed.NextAllocation)
	must.Eq(t, uint64(21), failed.ModifyIndex)
	must.Eq(t, int64(88), failed.ModifyTime)
}

// TestStateStore_DroppedPlacementLinksNothing: a placement the apply drops (its job was
// stopped since the plan was computed) replaces nothing, so nothing names it.
func TestStateStore_DroppedPlacementLinksNothing(t *testing.T) {
	s := testStateStore(t)
	mustApply(t, s, structs.NodeRegisterRequestType, 5, nil, func(txn *Txn) error { return s.UpsertNodeTxn(txn, mockNode("n1")) })
	upsertJob(t, s, 10, mockJob("web"))
	web := currentJob(t, s, "web")
	applyPlan(t, s, 11, &structs.ApplyPlanResultsRequest{Job: web, AllocsPlaced: []*structs.Allocation{mockAlloc("first", web, "n1", 0)}})
	must.NoError(t, applyStop(s, 12, nil, structs.DefaultNamespace, "web", nil))

	repl := mockAlloc("repl", web, "n1", 0)
	repl.PreviousAllocation = "first"
	applyPlan(t, s, 13, &structs.ApplyPlanResultsRequest{Job: web, UpdatedAt: 77, AllocsPlaced: []*structs.Allocation{repl}})

	first := mustAlloc(t, s, "first")
	must.Eq(t, "", first.NextAllocation)
	must.Eq(t, uint64(11), first.ModifyIndex)
}

// TestStateStore_ReplacementLinkEvents: the plan's entry publishes the previous allocation's
// new version once, as a PlanResult on the Allocation topic like every allocation the entry
// changes (as upstream derives them), even when the same entry also stops it.
func TestStateStore_ReplacementLinkEvents(t *testing.T) {
	s := testStateStore(t)
	mustApply(t, s, structs.NodeRegisterRequestType, 5, nil, func(txn *Txn) error { return s.UpsertNodeTxn(txn, mockNode("n1")) })
	upsertJob(t, s, 10, mockJob("web"))
	web := currentJob(t, s, "web")
	applyPlan(t, s, 11, &structs.ApplyPlanResultsRequest{Job: web, AllocsPlaced: []*structs.Allocation{mockAlloc("old", web, "n1", 0)}})
	got := captureEvents(s)

	repl := mockAlloc("new", web, "n1", 0)
	repl.PreviousAllocation = "old"
	applyPlan(t, s, 12, &structs.ApplyPlanResultsRequest{Job: web, UpdatedAt: 77, AllocsPlaced: []*structs.Allocation{repl},
		AllocsStopped: []*structs.AllocStopUpdate{{AllocID: "old", DesiredDescription: "alloc is being updated"}}})

	must.Len(t, 1, *got)
	allocs := map[string]*structs.Allocation{}
	for _, e := range (*got)[0].Events {
		must.Eq(t, "PlanResult", e.Type)
		must.Eq(t, uint64(12), e.Index)
		if e.Topic != structs.TopicAllocation {
			continue
		}
		_, seen := allocs[e.Key]
		must.False(t, seen, must.Sprintf("one event per allocation, %s twice", e.Key))
		allocs[e.Key] = e.Payload.(*structs.AllocationEvent).Allocation
	}
	must.MapLen(t, 2, allocs)
	must.Eq(t, "new", allocs["old"].NextAllocation)
	must.Eq(t, structs.AllocDesiredStatusStop, allocs["old"].DesiredStatus)
	must.Nil(t, allocs["old"].Job)
	must.Eq(t, "old", allocs["new"].PreviousAllocation)
}

// TestStateStore_LostAllocationLinksItsReplacement: the entry that stops a lost allocation
// (its node down) or makes an unknown one lost (its node disconnected past lost_after) and
// places its replacement links the two: the lost one keeps NextAllocation through its own
// stop or loss in the same write, and its client status stays lost.
func TestStateStore_LostAllocationLinksItsReplacement(t *testing.T) {
	s := testStateStore(t)
	for i, id := range []string{"down", "gone", "n2"} {
		mustApply(t, s, structs.NodeRegisterRequestType, uint64(5+i), nil, func(txn *Txn) error { return s.UpsertNodeTxn(txn, mockNode(id)) })
	}
	web := mockJob("web")
	web.TaskGroups[0].Disconnect = &api.DisconnectStrategy{LostAfter: ptrOf(time.Hour)}
	upsertJob(t, s, 10, web)
	web = currentJob(t, s, "web")
	applyPlan(t, s, 11, &structs.ApplyPlanResultsRequest{Job: web, AllocsPlaced: []*structs.Allocation{
		mockAlloc("on-down", web, "down", 0), mockAlloc("on-gone", web, "gone", 1),
	}})
	mustApply(t, s, structs.NodeUpdateStatusRequestType, 12, nil, func(txn *Txn) error {
		return s.UpdateNodeStatusTxn(txn, "down", structs.NodeStatusDown, 42_000_000_000)
	})
	mustApply(t, s, structs.NodeUpdateStatusRequestType, 13, nil, func(txn *Txn) error {
		return s.UpdateNodeStatusTxn(txn, "gone", structs.NodeStatusDisconnected, 42_000_000_000)
	})
	must.Eq(t, structs.AllocClientStatusLost, mustAlloc(t, s, "on-down").ClientStatus)
	must.Eq(t, structs.AllocClientStatusUnknown, mustAlloc(t, s, "on-gone").ClientStatus)

	r0 := mockAlloc("r0", web, "n2", 0)
	r0.PreviousAllocation = "on-down"
	r1 := mockAlloc("r1", web, "n2", 1)
	r1.PreviousAllocation = "on-gone"
	applyPlan(t, s, 20, &structs.ApplyPlanResultsRequest{Job: web, UpdatedAt: 77,
		AllocsPlaced:  []*structs.Allocation{r0, r1},
		AllocsStopped: []*structs.AllocStopUpdate{{AllocID: "on-down", DesiredDescription: "alloc lost: its node is down"}},
		AllocsLost:    []*structs.AllocStopUpdate{{AllocID: "on-gone", DesiredDescription: "alloc lost: past lost_after"}},
	})
	for id, repl := range map[string]string{"on-down": "r0", "on-gone": "r1"} {
		a := mustAlloc(t, s, id)
		must.Eq(t, repl, a.NextAllocation, must.Sprintf("alloc %s", id))
		must.Eq(t, structs.AllocClientStatusLost, a.ClientStatus, must.Sprintf("alloc %s", id))
		must.Eq(t, structs.AllocDesiredStatusStop, a.DesiredStatus, must.Sprintf("alloc %s", id))
		must.Eq(t, uint64(20), a.ModifyIndex)
	}
	must.Eq(t, structs.TaskGroupSummary{Lost: 2, Starting: 2}, summaryOf(t, s, "web"))
}
