package state

import (
	"testing"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// serviceFixture is job web with alloc-1 on node-1 and alloc-2 on node-2 (index 12).
func serviceFixture(t *testing.T) *StateStore {
	t.Helper()
	s := testStateStore(t)
	upsertJob(t, s, 10, mockJob("web"))
	for i, id := range []string{"node-1", "node-2"} {
		mustApply(t, s, structs.NodeRegisterRequestType, uint64(11+i), nil, func(txn *Txn) error {
			return s.UpsertNodeTxn(txn, mockNode(id))
		})
	}
	web := currentJob(t, s, "web")
	applyPlan(t, s, 13, &structs.ApplyPlanResultsRequest{Job: web, AllocsPlaced: []*structs.Allocation{
		mockAlloc("alloc-1", web, "node-1", 0), mockAlloc("alloc-2", web, "node-2", 1),
	}})
	return s
}

func mockService(allocID, nodeID, name string, port int) *structs.ServiceRegistration {
	return &structs.ServiceRegistration{
		ID:          "_nomad-task-" + allocID + "-server-" + name + "-http",
		ServiceName: name, Namespace: structs.DefaultNamespace, NodeID: nodeID, Datacenter: "dc1",
		JobID: "web", AllocID: allocID, Tags: []string{"v1"}, Address: "10.0.0.1", Port: port,
	}
}

func upsertServices(t *testing.T, s *StateStore, index uint64, svcs ...*structs.ServiceRegistration) {
	t.Helper()
	mustApply(t, s, structs.ServiceRegistrationUpsertRequestType, index, nil, func(txn *Txn) error {
		return s.UpsertServiceRegistrationsTxn(txn, svcs)
	})
}

// serviceIDs returns a function of a read's results that fails the test on an error and
// returns the registrations' IDs.
func serviceIDs(t *testing.T) func([]*structs.ServiceRegistration, error) []string {
	return func(svcs []*structs.ServiceRegistration, err error) []string {
		t.Helper()
		must.NoError(t, err)
		ids := []string{}
		for _, s := range svcs {
			ids = append(ids, s.ID)
		}
		return ids
	}
}

func TestServiceRegistrations_UpsertAndRead(t *testing.T) {
	s := serviceFixture(t)
	a1 := mockService("alloc-1", "node-1", "api", 20001)
	a2 := mockService("alloc-2", "node-2", "api", 20002)
	db := mockService("alloc-1", "node-1", "db", 20003)
	upsertServices(t, s, 20, a1, a2, db)

	must.Eq(t, uint64(20), s.Index(tableServiceRegistrations))
	must.Eq(t, []string{a1.ID, a2.ID}, serviceIDs(t)(s.ServiceRegistrationsByName(nil, structs.DefaultNamespace, "api")))
	must.Eq(t, []string{a1.ID, db.ID}, serviceIDs(t)(s.ServiceRegistrationsByAlloc(nil, "alloc-1")))
	must.Eq(t, []string{a2.ID}, serviceIDs(t)(s.ServiceRegistrationsByNode(nil, "node-2")))
	must.Eq(t, []string{a1.ID, a2.ID, db.ID}, serviceIDs(t)(s.ServiceRegistrationsByJob(nil, structs.DefaultNamespace, "web")))
	must.Eq(t, []string{a1.ID, a2.ID, db.ID}, serviceIDs(t)(s.ServiceRegistrations(nil, "*")))
	must.Eq(t, []string{}, serviceIDs(t)(s.ServiceRegistrations(nil, "other")))

	// The same registration again writes nothing; a changed one keeps its CreateIndex.
	upsertServices(t, s, 21, mockService("alloc-1", "node-1", "api", 20001))
	must.Eq(t, uint64(20), s.Index(tableServiceRegistrations))
	moved := mockService("alloc-1", "node-1", "api", 20009)
	upsertServices(t, s, 22, moved)
	got, err := s.ServiceRegistrationByID(nil, moved.ID)
	must.NoError(t, err)
	must.Eq(t, 20009, got.Port)
	must.Eq(t, uint64(20), got.CreateIndex)
	must.Eq(t, uint64(22), got.ModifyIndex)
}

func TestServiceRegistrations_UpsertSkipsWhatNoAllocationBacks(t *testing.T) {
	cases := []struct {
		name string
		svc  *structs.ServiceRegistration
	}{
		{name: "unknown allocation", svc: mockService("alloc-9", "node-1", "api", 1)},
		{name: "allocation of another node", svc: mockService("alloc-2", "node-1", "api", 1)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := serviceFixture(t)
			upsertServices(t, s, 20, tc.svc)
			must.Eq(t, []string{}, serviceIDs(t)(s.ServiceRegistrations(nil, "*")))
			must.Eq(t, uint64(0), s.Index(tableServiceRegistrations))
		})
	}
	t.Run("finished allocation", func(t *testing.T) {
		s := serviceFixture(t)
		applyClientUpdate(t, s, 14, clientStatus("alloc-1", structs.AllocClientStatusComplete))
		upsertServices(t, s, 20, mockService("alloc-1", "node-1", "api", 1))
		must.Eq(t, []string{}, serviceIDs(t)(s.ServiceRegistrations(nil, "*")))
	})
}

func TestServiceRegistrations_DeleteByID(t *testing.T) {
	s := serviceFixture(t)
	a1 := mockService("alloc-1", "node-1", "api", 1)
	upsertServices(t, s, 20, a1)
	// Another namespace's delete does not find it.
	err := applyTxn(s, structs.ServiceRegistrationDeleteRequestType, 21, nil, func(txn *Txn) error {
		return s.DeleteServiceRegistrationByIDTxn(txn, "other", a1.ID)
	})
	mustCode(t, 404, err)
	mustApply(t, s, structs.ServiceRegistrationDeleteRequestType, 22, nil, func(txn *Txn) error {
		return s.DeleteServiceRegistrationByIDTxn(txn, structs.DefaultNamespace, a1.ID)
	})
	must.Eq(t, []string{}, serviceIDs(t)(s.ServiceRegistrations(nil, "*")))
	must.Eq(t, uint64(22), s.Index(tableServiceRegistrations))
}

// Registrations never outlive what backs them: each write that ends an allocation or removes
// its node removes its services in the same transaction.
func TestServiceRegistrations_RemovedWithTheirAllocation(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(t *testing.T, s *StateStore)
		// left are the registrations that remain of alloc-1's api and alloc-2's api.
		left []string
	}{
		{
			name: "allocation completes",
			mutate: func(t *testing.T, s *StateStore) {
				applyClientUpdate(t, s, 30, clientStatus("alloc-1", structs.AllocClientStatusComplete))
			},
			left: []string{"alloc-2"},
		},
		{
			name: "allocation fails",
			mutate: func(t *testing.T, s *StateStore) {
				applyClientUpdate(t, s, 30, clientStatus("alloc-2", structs.AllocClientStatusFailed))
			},
			left: []string{"alloc-1"},
		},
		{
			name: "allocation still running",
			mutate: func(t *testing.T, s *StateStore) {
				applyClientUpdate(t, s, 30, clientStatus("alloc-1", structs.AllocClientStatusRunning))
			},
			left: []string{"alloc-1", "alloc-2"},
		},
		{
			name: "job purged",
			mutate: func(t *testing.T, s *StateStore) {
				must.NoError(t, applyPurge(s, 30, nil, structs.DefaultNamespace, "web", "rec-1", nil))
			},
			left: []string{},
		},
		{
			name: "job collected",
			mutate: func(t *testing.T, s *StateStore) {
				must.NoError(t, applyBatchDeregister(s, 30, []structs.NamespacedID{{Namespace: structs.DefaultNamespace, ID: "web"}}))
			},
			left: []string{},
		},
		{
			name: "node purged",
			mutate: func(t *testing.T, s *StateStore) {
				mustApply(t, s, structs.NodeDeregisterRequestType, 30, nil, func(txn *Txn) error {
					return s.DeleteNodesTxn(txn, []string{"node-1"}, 30)
				})
			},
			left: []string{"alloc-2"},
		},
		{
			name: "node down",
			mutate: func(t *testing.T, s *StateStore) {
				mustApply(t, s, structs.NodeUpdateStatusRequestType, 30, nil, func(txn *Txn) error {
					return s.UpdateNodeStatusTxn(txn, "node-2", structs.NodeStatusDown, 30)
				})
			},
			left: []string{"alloc-1"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := serviceFixture(t)
			upsertServices(t, s, 20, mockService("alloc-1", "node-1", "api", 1), mockService("alloc-2", "node-2", "api", 2))
			tc.mutate(t, s)
			all, err := s.ServiceRegistrations(nil, "*")
			must.NoError(t, err)
			left := []string{}
			for _, svc := range all {
				left = append(left, svc.AllocID)
			}
			must.Eq(t, tc.left, left)
			if len(tc.left) < 2 {
				must.Eq(t, uint64(30), s.Index(tableServiceRegistrations))
			}
		})
	}
}

func TestServiceRegistrationEvents(t *testing.T) {
	wantEvent := func(typ string, index uint64, allocID, nodeID string, modify uint64) structs.Event {
		svc := mockService(allocID, nodeID, "api", 1)
		svc.CreateIndex, svc.ModifyIndex = 20, modify
		return structs.Event{
			Topic: structs.TopicService, Type: typ, Key: svc.ID, Namespace: structs.DefaultNamespace,
			FilterKeys: []string{"web", "api"}, Index: index,
			Payload: &structs.ServiceRegistrationStreamEvent{Service: svc},
		}
	}
	cases := []struct {
		Name       string
		Mutate     func(t *testing.T, s *StateStore)
		WantEvents []structs.Event
	}{
		{
			Name: "register",
			Mutate: func(t *testing.T, s *StateStore) {
				upsertServices(t, s, 20, mockService("alloc-1", "node-1", "api", 1))
			},
			WantEvents: []structs.Event{wantEvent(structs.TypeServiceRegistration, 20, "alloc-1", "node-1", 20)},
		},
		{
			Name: "deregister",
			Mutate: func(t *testing.T, s *StateStore) {
				upsertServices(t, s, 20, mockService("alloc-1", "node-1", "api", 1))
				mustApply(t, s, structs.ServiceRegistrationDeleteRequestType, 21, nil, func(txn *Txn) error {
					return s.DeleteServiceRegistrationByIDTxn(txn, structs.DefaultNamespace, mockService("alloc-1", "node-1", "api", 1).ID)
				})
			},
			WantEvents: []structs.Event{
				wantEvent(structs.TypeServiceRegistration, 20, "alloc-1", "node-1", 20),
				wantEvent(structs.TypeServiceDeregistration, 21, "alloc-1", "node-1", 20),
			},
		},
		{
			Name: "allocation stop removes",
			Mutate: func(t *testing.T, s *StateStore) {
				upsertServices(t, s, 20, mockService("alloc-1", "node-1", "api", 1))
				applyClientUpdate(t, s, 21, clientStatus("alloc-1", structs.AllocClientStatusComplete))
			},
			WantEvents: []structs.Event{
				wantEvent(structs.TypeServiceRegistration, 20, "alloc-1", "node-1", 20),
				wantEvent(structs.TypeServiceDeregistration, 21, "alloc-1", "node-1", 20),
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			s := serviceFixture(t)
			var got []*structs.Events
			s.SetCommitHook(func(txn *Txn, changes memdb.Changes) {
				if events := EventsFromChanges(txn, changes); events != nil {
					got = append(got, onlyTopic(events, structs.TopicService))
				}
			})
			tc.Mutate(t, s)
			var batches []*structs.Events
			for _, b := range got {
				if len(b.Events) > 0 {
					batches = append(batches, b)
				}
			}
			assertEvents(t, tc.WantEvents, batches)
		})
	}
}

// onlyTopic keeps the events of one topic (an allocation update also publishes the
// allocation and its job).
func onlyTopic(batch *structs.Events, topic structs.Topic) *structs.Events {
	out := &structs.Events{Index: batch.Index}
	for _, e := range batch.Events {
		if e.Topic == topic {
			out.Events = append(out.Events, e)
		}
	}
	return out
}
