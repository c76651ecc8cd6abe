package state

import (
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestStateStore_PlanPreemptsAllocations: a plan's preemptions evict their allocations, naming
// the placement that took their room, only when that placement is applied too.
func TestStateStore_PlanPreemptsAllocations(t *testing.T) {
	s := testStateStore(t)
	mustApply(t, s, structs.NodeRegisterRequestType, 5, nil, func(txn *Txn) error { return s.UpsertNodeTxn(txn, mockNode("n1")) })
	upsertJob(t, s, 10, mockJob("low"))
	sys := mockJob("sys")
	sys.Type, sys.Priority = structs.JobTypeSystem, 80
	upsertJob(t, s, 11, sys)
	low := currentJob(t, s, "low")
	applyPlan(t, s, 12, &structs.ApplyPlanResultsRequest{Job: low, AllocsPlaced: []*structs.Allocation{
		mockAlloc("victim", low, "n1", 0), mockAlloc("spared", low, "n1", 1),
	}})
	sys = currentJob(t, s, "sys")
	placed := mockAlloc("preemptor", sys, "n1", 0)
	placed.PreemptedAllocations = []string{"victim"}
	applyPlan(t, s, 13, &structs.ApplyPlanResultsRequest{Job: sys, UpdatedAt: 77, AllocsPlaced: []*structs.Allocation{placed},
		AllocsPreempted: []*structs.AllocPreemption{
			{AllocID: "victim", PreemptedByAllocation: "preemptor"},
			// A preemption whose placement is not in the entry evicts nothing.
			{AllocID: "spared", PreemptedByAllocation: "not-placed"},
		}})

	victim, err := s.AllocByID(nil, "victim")
	must.NoError(t, err)
	must.Eq(t, structs.AllocDesiredStatusEvict, victim.DesiredStatus)
	must.Eq(t, "Preempted by alloc ID preemptor", victim.DesiredDescription)
	must.Eq(t, "preemptor", victim.PreemptedByAllocation)
	must.Eq(t, uint64(13), victim.ModifyIndex)
	must.Eq(t, int64(77), victim.ModifyTime)
	spared, err := s.AllocByID(nil, "spared")
	must.NoError(t, err)
	must.Eq(t, structs.AllocDesiredStatusRun, spared.DesiredStatus)
	got, err := s.AllocByID(nil, "preemptor")
	must.NoError(t, err)
	must.Eq(t, []string{"victim"}, got.PreemptedAllocations)
}

// TestStateStore_NodeDisconnectedMakesAllocationsUnknown: a disconnected node's allocations of
// groups with a lost_after become unknown, recording when; the others are lost as on a down
// node. A plan then marks an unknown one lost, unless its client reported meanwhile.
func TestStateStore_NodeDisconnectedMakesAllocationsUnknown(t *testing.T) {
	s := testStateStore(t)
	mustApply(t, s, structs.NodeRegisterRequestType, 5, nil, func(txn *Txn) error { return s.UpsertNodeTxn(txn, mockNode("n1")) })
	waits := mockJob("waits")
	waits.TaskGroups[0].Disconnect = &api.DisconnectStrategy{LostAfter: ptrOf(time.Hour)}
	upsertJob(t, s, 10, waits)
	older := mockJob("older")
	older.TaskGroups[0].MaxClientDisconnect = ptrOf(time.Hour)
	upsertJob(t, s, 11, older)
	upsertJob(t, s, 12, mockJob("plain"))
	idx := uint64(13)
	for _, id := range []string{"waits", "older", "plain"} {
		job := currentJob(t, s, id)
		applyPlan(t, s, idx, &structs.ApplyPlanResultsRequest{Job: job, AllocsPlaced: []*structs.Allocation{mockAlloc("a-"+id, job, "n1", 0)}})
		idx++
	}
	at := int64(42_000_000_000)
	mustApply(t, s, structs.NodeUpdateStatusRequestType, 20, nil, func(txn *Txn) error {
		return s.UpdateNodeStatusTxn(txn, "n1", structs.NodeStatusDisconnected, at)
	})
	for id, want := range map[string]string{"a-waits": structs.AllocClientStatusUnknown, "a-older": structs.AllocClientStatusUnknown, "a-plain": structs.AllocClientStatusLost} {
		a, err := s.AllocByID(nil, id)
		must.NoError(t, err)
		must.Eq(t, want, a.ClientStatus, must.Sprintf("alloc %s", id))
		if want == structs.AllocClientStatusUnknown {
			must.Eq(t, time.Unix(42, 0).UTC(), a.UnknownSince())
			must.Eq(t, structs.AllocDesiredStatusRun, a.DesiredStatus)
		}
	}
	must.Eq(t, structs.TaskGroupSummary{Unknown: 1}, summaryOf(t, s, "waits"))

	// The client of a-older reports before the plan applies: that one is left alone.
	applyClientUpdate(t, s, 21, clientStatus("a-older", structs.AllocClientStatusRunning))
	applyPlan(t, s, 22, &structs.ApplyPlanResultsRequest{UpdatedAt: 99, AllocsLost: []*structs.AllocStopUpdate{
		{AllocID: "a-waits", DesiredDescription: "lost"}, {AllocID: "a-older", DesiredDescription: "lost"},
	}})
	a, err := s.AllocByID(nil, "a-waits")
	must.NoError(t, err)
	must.Eq(t, structs.AllocClientStatusLost, a.ClientStatus)
	must.Eq(t, structs.AllocDesiredStatusStop, a.DesiredStatus)
	must.Eq(t, "lost", a.DesiredDescription)
	must.Len(t, 2, a.AllocStates)
	must.Eq(t, structs.TaskGroupSummary{Lost: 1}, summaryOf(t, s, "waits"))
	o, err := s.AllocByID(nil, "a-older")
	must.NoError(t, err)
	must.Eq(t, structs.AllocClientStatusRunning, o.ClientStatus)
	must.Eq(t, structs.AllocDesiredStatusRun, o.DesiredStatus)
	must.True(t, o.Reconnected())
}
