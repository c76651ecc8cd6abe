package state

import (
	"testing"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// mockNode returns a ready node with the raw_exec driver.
func mockNode(id string) *structs.Node {
	return &structs.Node{
		ID:                    id,
		SecretID:              "secret-" + id,
		Name:                  "node-" + id,
		Datacenter:            "dc1",
		NodePool:              structs.DefaultNodePool,
		Status:                structs.NodeStatusReady,
		SchedulingEligibility: structs.NodeSchedulingEligible,
		Drivers:               map[string]*structs.DriverInfo{"raw_exec": {Detected: true, Healthy: true}},
	}
}

// mockAlloc returns a pending allocation of job's first group on node.
func mockAlloc(id string, job *structs.Job, nodeID string, index int) *structs.Allocation {
	group := *job.TaskGroups[0].Name
	return &structs.Allocation{
		ID:            id,
		Namespace:     job.Namespace,
		EvalID:        "eval-1",
		Name:          structs.AllocName(job.ID, group, index),
		NodeID:        nodeID,
		JobID:         job.ID,
		TaskGroup:     group,
		DesiredStatus: structs.AllocDesiredStatusRun,
		ClientStatus:  structs.AllocClientStatusPending,
	}
}

func currentJob(t *testing.T, s *StateStore, id string) *structs.Job {
	t.Helper()
	job, err := s.JobByID(nil, structs.DefaultNamespace, id)
	must.NoError(t, err)
	must.NotNil(t, job)
	return job
}

func applyPlan(t *testing.T, s *StateStore, index uint64, req *structs.ApplyPlanResultsRequest) {
	t.Helper()
	mustApply(t, s, structs.ApplyPlanResultsRequestType, index, nil, func(txn *Txn) error {
		return s.ApplyPlanResultsTxn(txn, req)
	})
}

// applyClientUpdate applies a client's report from the node the first allocation is placed on.
func applyClientUpdate(t *testing.T, s *StateStore, index uint64, allocs ...*structs.Allocation) {
	t.Helper()
	applyClientUpdateFrom(t, s, index, nodeOfAlloc(t, s, allocs[0].ID), allocs...)
}

func applyClientUpdateFrom(t *testing.T, s *StateStore, index uint64, nodeID string, allocs ...*structs.Allocation) {
	t.Helper()
	mustApply(t, s, structs.AllocClientUpdateRequestType, index, nil, func(txn *Txn) error {
		return s.UpdateAllocsFromClientTxn(txn, nodeID, allocs, int64(index))
	})
}

// nodeOfAlloc is the node an allocation is placed on, also after its job was purged.
func nodeOfAlloc(t *testing.T, s *StateStore, id string) string {
	t.Helper()
	alloc, err := s.AllocByID(nil, id)
	must.NoError(t, err)
	if alloc != nil {
		return alloc.NodeID
	}
	rec, err := s.PurgeRecordByAllocID(id)
	must.NoError(t, err)
	if rec != nil {
		for _, a := range rec.Allocations {
			if a.ID == id {
				return a.NodeID
			}
		}
	}
	return ""
}

func clientStatus(id, status string) *structs.Allocation {
	return &structs.Allocation{ID: id, ClientStatus: status, TaskStates: map[string]*structs.TaskState{
		"server": {State: map[string]string{
			structs.AllocClientStatusPending:  structs.TaskStatePending,
			structs.AllocClientStatusRunning:  structs.TaskStateRunning,
			structs.AllocClientStatusComplete: structs.TaskStateDead,
			structs.AllocClientStatusFailed:   structs.TaskStateDead,
		}[status]},
	}}
}

func summaryOf(t *testing.T, s *StateStore, id string) structs.TaskGroupSummary {
	t.Helper()
	sum, err := s.JobSummaryByID(nil, structs.DefaultNamespace, id)
	must.NoError(t, err)
	must.NotNil(t, sum)
	return sum.Summary["web"]
}

// TestStateStore_JobStatusFollowsAllocations walks a service job through its life: pending
// while its evaluation waits, running once an allocation is placed, dead (but not stopped)
// once the allocations a scale to zero stopped have finished, running again, and dead after a
// stop once its client has stopped the allocation.
func TestStateStore_JobStatusFollowsAllocations(t *testing.T) {
	s := testStateStore(t)
	mustApply(t, s, structs.NodeRegisterRequestType, 5, nil, func(txn *Txn) error { return s.UpsertNodeTxn(txn, mockNode("n1")) })
	must.NoError(t, applyRegister(s, 10, nil, mockJob("web"), mockEval("eval-1", mockJob("web"), structs.EvalTriggerJobRegister)))
	must.Eq(t, structs.JobStatusPending, currentJob(t, s, "web").Status)

	status := func(want string, index uint64) {
		t.Helper()
		job := currentJob(t, s, "web")
		must.Eq(t, want, job.Status)
		must.Eq(t, index, job.ModifyIndex, must.Sprint("the status change is a write at its index"))
		v, err := s.JobByIDAndVersion(nil, structs.DefaultNamespace, "web", job.Version)
		must.NoError(t, err)
		must.Eq(t, want, v.Status, must.Sprint("the version row mirrors the job row"))
	}

	// The plan places one allocation and completes its evaluation.
	job := currentJob(t, s, "web")
	done := mockEval("eval-1", job, structs.EvalTriggerJobRegister)
	done.Status = structs.EvalStatusComplete
	done.QueuedAllocations = map[string]int{"web": 0}
	applyPlan(t, s, 11, &structs.ApplyPlanResultsRequest{
		Job: job, AllocsPlaced: []*structs.Allocation{mockAlloc("a1", job, "n1", 0)}, Evals: []*structs.Evaluation{done},
	})
	status(structs.JobStatusRunning, 11)
	must.Eq(t, structs.TaskGroupSummary{Starting: 1}, summaryOf(t, s, "web"))
	alloc, err := s.AllocByID(nil, "a1")
	must.NoError(t, err)
	must.Eq(t, job, alloc.Job)
	must.Eq(t, uint64(11), alloc.CreateIndex)

	applyClientUpdate(t, s, 12, clientStatus("a1", structs.AllocClientStatusRunning))
	must.Eq(t, structs.TaskGroupSummary{Running: 1}, summaryOf(t, s, "web"))
	status(structs.JobStatusRunning, 11)

	// Scale to zero: the plan stops the allocation; the job runs until the client says so.
	scaled := mockJob("web")
	scaled.TaskGroups[0].Count = ptrOf(0)
	must.NoError(t, applyRegister(s, 13, nil, scaled, mockEval("eval-2", scaled, structs.EvalTriggerScaling)))
	done2 := mockEval("eval-2", scaled, structs.EvalTriggerScaling)
	done2.Status = structs.EvalStatusComplete
	applyPlan(t, s, 14, &structs.ApplyPlanResultsRequest{
		AllocsStopped: []*structs.AllocStopUpdate{{AllocID: "a1", DesiredDescription: "count reduced"}},
		Evals:         []*structs.Evaluation{done2},
	})
	status(structs.JobStatusRunning, 13)
	applyClientUpdate(t, s, 15, clientStatus("a1", structs.AllocClientStatusComplete))
	status(structs.JobStatusDead, 15)
	must.False(t, currentJob(t, s, "web").Stop)
	must.Eq(t, structs.TaskGroupSummary{Complete: 1}, summaryOf(t, s, "web"))

	// Back to one: pending while the evaluation waits, running once placed.
	must.NoError(t, applyRegister(s, 16, nil, mockJob("web"), mockEval("eval-3", mockJob("web"), structs.EvalTriggerScaling)))
	status(structs.JobStatusPending, 16)
	job = currentJob(t, s, "web")
	applyPlan(t, s, 17, &structs.ApplyPlanResultsRequest{Job: job, AllocsPlaced: []*structs.Allocation{mockAlloc("a2", job, "n1", 0)}})
	status(structs.JobStatusRunning, 17)

	// Stop: running while the client still runs the allocation, dead once it finished.
	must.NoError(t, applyStop(s, 18, nil, structs.DefaultNamespace, "web", mockEval("eval-4", job, structs.EvalTriggerJobDeregister)))
	status(structs.JobStatusRunning, 18)
	applyPlan(t, s, 19, &structs.ApplyPlanResultsRequest{AllocsStopped: []*structs.AllocStopUpdate{{AllocID: "a2"}}})
	applyClientUpdate(t, s, 20, clientStatus("a2", structs.AllocClientStatusComplete))
	status(structs.JobStatusDead, 20)
	must.True(t, currentJob(t, s, "web").Stop)
}

func TestStateStore_JobStatus(t *testing.T) {
	cases := []struct {
		name   string
		stop   bool
		allocs []string // client statuses
		evals  []string // eval statuses
		want   string
	}{
		{name: "new", want: structs.JobStatusPending},
		{name: "pending eval", evals: []string{structs.EvalStatusPending}, want: structs.JobStatusPending},
		{name: "blocked eval", evals: []string{structs.EvalStatusComplete, structs.EvalStatusBlocked}, want: structs.JobStatusPending},
		{name: "evals done, nothing placed", evals: []string{structs.EvalStatusComplete}, want: structs.JobStatusDead},
		{name: "pending alloc", allocs: []string{structs.AllocClientStatusPending}, want: structs.JobStatusRunning},
		{name: "running alloc beats pending eval", allocs: []string{structs.AllocClientStatusRunning}, evals: []string{structs.EvalStatusPending}, want: structs.JobStatusRunning},
		{name: "all allocs finished", allocs: []string{structs.AllocClientStatusComplete, structs.AllocClientStatusFailed, structs.AllocClientStatusLost}, want: structs.JobStatusDead},
		{name: "finished allocs and pending eval", allocs: []string{structs.AllocClientStatusComplete}, evals: []string{structs.EvalStatusPending}, want: structs.JobStatusPending},
		{name: "stopped", stop: true, evals: []string{structs.EvalStatusPending}, want: structs.JobStatusDead},
		{name: "stopped, alloc still running", stop: true, allocs: []string{structs.AllocClientStatusRunning}, want: structs.JobStatusRunning},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStateStore(t)
			job := mockJob("web")
			job.Stop = tc.stop
			upsertJob(t, s, 10, job)
			mustApply(t, s, structs.ApplyPlanResultsRequestType, 11, nil, func(txn *Txn) error {
				var allocs []*structs.Allocation
				for i, st := range tc.allocs {
					a := mockAlloc(string(rune('a'+i)), job, "n1", i)
					a.ClientStatus = st
					a.Job = job
					allocs = append(allocs, a)
				}
				for _, a := range allocs {
					if err := txn.Insert(tableAllocs, a); err != nil {
						return err
					}
				}
				var evals []*structs.Evaluation
				for i, st := range tc.evals {
					e := mockEval(string(rune('p'+i)), job, structs.EvalTriggerJobRegister)
					e.Status = st
					evals = append(evals, e)
				}
				if err := s.UpsertEvalsTxn(txn, evals); err != nil {
					return err
				}
				return s.setJobStatusTxn(txn, job.Namespace, job.ID)
			})
			must.Eq(t, tc.want, currentJob(t, s, "web").Status)
		})
	}
}

func TestStateStore_PlanForPurgedJobPlacesNothing(t *testing.T) {
	s := testStateStore(t)
	upsertJob(t, s, 10, mockJob("web"))
	planned := currentJob(t, s, "web")
	must.NoError(t, applyPurge(s, 11, nil, structs.DefaultNamespace, "web", "rec-1", nil))
	// Registered again: a new job with the same ID, which the old plan must not fill.
	upsertJob(t, s, 12, mockJob("web"))

	done := mockEval("eval-1", planned, structs.EvalTriggerJobRegister)
	done.Status = structs.EvalStatusComplete
	applyPlan(t, s, 13, &structs.ApplyPlanResultsRequest{
		Job: planned, AllocsPlaced: []*structs.Allocation{mockAlloc("a1", planned, "n1", 0)}, Evals: []*structs.Evaluation{done},
	})
	allocs, err := s.AllocsByJob(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	must.SliceEmpty(t, allocs)
	eval, err := s.EvalByID(nil, "eval-1")
	must.NoError(t, err)
	must.Eq(t, structs.EvalStatusComplete, eval.Status, must.Sprint("the evaluation is still recorded"))
}

func TestStateStore_PurgeDeletesAllocations(t *testing.T) {
	s := testStateStore(t)
	upsertJob(t, s, 10, mockJob("web"))
	upsertJob(t, s, 11, mockJob("web2"))
	web, web2 := currentJob(t, s, "web"), currentJob(t, s, "web2")
	applyPlan(t, s, 12, &structs.ApplyPlanResultsRequest{Job: web, AllocsPlaced: []*structs.Allocation{mockAlloc("a1", web, "n1", 0)}})
	applyPlan(t, s, 13, &structs.ApplyPlanResultsRequest{Job: web2, AllocsPlaced: []*structs.Allocation{mockAlloc("b1", web2, "n1", 0)}})

	must.NoError(t, applyPurge(s, 14, nil, structs.DefaultNamespace, "web", "rec-1", nil))
	gone, err := s.AllocByID(nil, "a1")
	must.NoError(t, err)
	must.Nil(t, gone)
	kept, err := s.AllocByID(nil, "b1")
	must.NoError(t, err)
	must.NotNil(t, kept, must.Sprint("a job whose ID extends the purged one keeps its allocations"))
	must.Eq(t, uint64(14), s.Index(tableAllocs))
}

func TestStateStore_ClientUpdateTouchesOnlyClientFields(t *testing.T) {
	s := testStateStore(t)
	upsertJob(t, s, 10, mockJob("web"))
	job := currentJob(t, s, "web")
	applyPlan(t, s, 11, &structs.ApplyPlanResultsRequest{Job: job, AllocsPlaced: []*structs.Allocation{mockAlloc("a1", job, "n1", 0)}})
	applyPlan(t, s, 12, &structs.ApplyPlanResultsRequest{AllocsStopped: []*structs.AllocStopUpdate{{AllocID: "a1", DesiredDescription: "stop it"}}})

	// The client reports from what it saw before the stop: its report must not undo it.
	report := clientStatus("a1", structs.AllocClientStatusRunning)
	report.DesiredStatus = structs.AllocDesiredStatusRun
	report.NodeID = "elsewhere"
	applyClientUpdate(t, s, 13, report, clientStatus("unknown", structs.AllocClientStatusRunning))

	got, err := s.AllocByID(nil, "a1")
	must.NoError(t, err)
	must.Eq(t, structs.AllocDesiredStatusStop, got.DesiredStatus)
	must.Eq(t, "stop it", got.DesiredDescription)
	must.Eq(t, "n1", got.NodeID)
	must.Eq(t, structs.AllocClientStatusRunning, got.ClientStatus)
	must.Eq(t, uint64(13), got.ModifyIndex)
	must.Eq(t, int64(13), got.ModifyTime)
}

func TestStateStore_NodeDownLosesAllocations(t *testing.T) {
	s := testStateStore(t)
	mustApply(t, s, structs.NodeRegisterRequestType, 5, nil, func(txn *Txn) error { return s.UpsertNodeTxn(txn, mockNode("n1")) })
	mustApply(t, s, structs.NodeRegisterRequestType, 6, nil, func(txn *Txn) error { return s.UpsertNodeTxn(txn, mockNode("n2")) })
	upsertJob(t, s, 10, mockJob("web"))
	job := currentJob(t, s, "web")
	done := mockAlloc("done", job, "n1", 1)
	applyPlan(t, s, 11, &structs.ApplyPlanResultsRequest{Job: job, AllocsPlaced: []*structs.Allocation{
		mockAlloc("a1", job, "n1", 0), done, mockAlloc("b1", job, "n2", 2),
	}})
	applyClientUpdate(t, s, 12, clientStatus("a1", structs.AllocClientStatusRunning), clientStatus("done", structs.AllocClientStatusComplete))

	mustApply(t, s, structs.NodeUpdateStatusRequestType, 13, nil, func(txn *Txn) error {
		return s.UpdateNodeStatusTxn(txn, "n1", structs.NodeStatusDown, 42_000_000_000)
	})
	node, err := s.NodeByID(nil, "n1")
	must.NoError(t, err)
	must.Eq(t, structs.NodeStatusDown, node.Status)
	must.Eq(t, int64(42), node.StatusUpdatedAt)
	must.Eq(t, uint64(5), node.CreateIndex)

	want := map[string]string{"a1": structs.AllocClientStatusLost, "done": structs.AllocClientStatusComplete, "b1": structs.AllocClientStatusPending}
	for id, status := range want {
		a, err := s.AllocByID(nil, id)
		must.NoError(t, err)
		must.Eq(t, status, a.ClientStatus, must.Sprintf("alloc %s", id))
	}
	must.Eq(t, structs.TaskGroupSummary{Lost: 1, Complete: 1, Starting: 1}, summaryOf(t, s, "web"))

	err = applyTxn(s, structs.NodeUpdateStatusRequestType, 14, nil, func(txn *Txn) error {
		return s.UpdateNodeStatusTxn(txn, "nope", structs.NodeStatusDown, 0)
	})
	mustCode(t, 404, err)
}

func TestStateStore_NodeReads(t *testing.T) {
	s := testStateStore(t)
	for i, id := range []string{"b2", "a1", "a2"} {
		mustApply(t, s, structs.NodeRegisterRequestType, uint64(5+i), nil, func(txn *Txn) error { return s.UpsertNodeTxn(txn, mockNode(id)) })
	}
	nodes, err := s.Nodes(nil, "a")
	must.NoError(t, err)
	must.Len(t, 2, nodes)
	must.Eq(t, "a1", nodes[0].ID)
	bySecret, err := s.NodeBySecretID(nil, "secret-b2")
	must.NoError(t, err)
	must.Eq(t, "b2", bySecret.ID)

	// Re-registering keeps CreateIndex.
	mustApply(t, s, structs.NodeRegisterRequestType, 9, nil, func(txn *Txn) error { return s.UpsertNodeTxn(txn, mockNode("b2")) })
	again, err := s.NodeByID(nil, "b2")
	must.NoError(t, err)
	must.Eq(t, uint64(5), again.CreateIndex)
	must.Eq(t, uint64(9), again.ModifyIndex)
}

func TestStateStore_EvalsByStatus(t *testing.T) {
	s := testStateStore(t)
	job := mockJob("web")
	for i, id := range []string{"e3", "e1", "e2"} {
		mustApply(t, s, structs.EvalUpdateRequestType, uint64(10+i), nil, func(txn *Txn) error {
			return s.UpsertEvalsTxn(txn, []*structs.Evaluation{mockEval(id, job, structs.EvalTriggerJobRegister)})
		})
	}
	pending, err := s.EvalsByStatus(nil, structs.EvalStatusPending)
	must.NoError(t, err)
	var ids []string
	for _, e := range pending {
		ids = append(ids, e.ID)
	}
	must.Eq(t, []string{"e3", "e1", "e2"}, ids, must.Sprint("oldest first"))
}

func TestAllocAndNodeEvents(t *testing.T) {
	s := testStateStore(t)
	upsertJob(t, s, 10, mockJob("web"))
	job := currentJob(t, s, "web")
	got := captureEvents(s)

	mustApply(t, s, structs.NodeRegisterRequestType, 11, nil, func(txn *Txn) error { return s.UpsertNodeTxn(txn, mockNode("n1")) })
	applyPlan(t, s, 12, &structs.ApplyPlanResultsRequest{Job: job, AllocsPlaced: []*structs.Allocation{mockAlloc("a1", job, "n1", 0)}})
	a1, err := s.AllocByID(nil, "a1")
	must.NoError(t, err)
	must.NotNil(t, a1.Job, must.Sprint("the event's copy drops the job, not the row"))
	must.NoError(t, applyPurge(s, 13, actorAlice, structs.DefaultNamespace, "web", "rec-1", nil))

	must.Len(t, 3, *got)
	node := (*got)[0].Events
	must.Len(t, 1, node)
	must.Eq(t, structs.TopicNode, node[0].Topic)
	must.Eq(t, "NodeRegistration", node[0].Type)
	must.Eq(t, "n1", node[0].Key)
	must.Eq(t, "", node[0].Payload.(*structs.NodeStreamEvent).Node.SecretID)
	stored, err := s.NodeByID(nil, "n1")
	must.NoError(t, err)
	must.Eq(t, "secret-n1", stored.SecretID, must.Sprint("the event's copy is sanitized, not the row"))

	// The plan: the allocation (without its job) and the job, now running.
	plan := (*got)[1].Events
	must.Len(t, 2, plan)
	byTopic := map[structs.Topic]structs.Event{}
	for _, e := range plan {
		must.Eq(t, "PlanResult", e.Type)
		byTopic[e.Topic] = e
	}
	allocEvent := byTopic[structs.TopicAllocation]
	must.Eq(t, "a1", allocEvent.Key)
	must.Eq(t, []string{"web", ""}, allocEvent.FilterKeys)
	must.Nil(t, allocEvent.Payload.(*structs.AllocationEvent).Allocation.Job)
	must.Eq(t, structs.JobStatusRunning, byTopic[structs.TopicJob].Payload.(*structs.JobEvent).Job.Status)

	// A purge publishes the allocations it deletes, as they were last.
	purge := (*got)[2].Events
	must.Len(t, 3, purge)
	topics := map[structs.Topic]structs.Event{}
	for _, e := range purge {
		must.Eq(t, "JobDeregistered", e.Type)
		topics[e.Topic] = e
	}
	must.Eq(t, "a1", topics[structs.TopicAllocation].Key)
	must.MapContainsKeys(t, topics, []structs.Topic{structs.TopicJob, structs.TopicPurgeRecord})
}

// job stop -no-shutdown-delay: the stop marks the job's live allocations, in the same
// transaction, so that the clients skip their tasks' shutdown_delay when the stop reaches
// them; a plain stop leaves them alone.
func TestStateStore_StopWithoutShutdownDelayMarksAllocations(t *testing.T) {
	for _, skip := range []bool{false, true} {
		s := testStateStore(t)
		mustApply(t, s, structs.NodeRegisterRequestType, 5, nil, func(txn *Txn) error { return s.UpsertNodeTxn(txn, mockNode("n1")) })
		must.NoError(t, applyRegister(s, 10, nil, mockJob("web"), nil))
		job := currentJob(t, s, "web")
		applyPlan(t, s, 11, &structs.ApplyPlanResultsRequest{Job: job, AllocsPlaced: []*structs.Allocation{mockAlloc("a1", job, "n1", 0)}})
		must.NoError(t, s.ApplyJobDeregister(12, &structs.JobDeregisterRequest{
			JobID: "web", NoShutdownDelay: skip, StopTime: 12_000_000_000,
			WriteRequest: structs.WriteRequest{Namespace: structs.DefaultNamespace},
		}))
		a, err := s.AllocByID(nil, "a1")
		must.NoError(t, err)
		if skip {
			must.NotNil(t, a.DesiredTransition.NoShutdownDelay)
			must.True(t, *a.DesiredTransition.NoShutdownDelay)
			must.Eq(t, uint64(12), a.ModifyIndex)
		} else {
			must.Nil(t, a.DesiredTransition.NoShutdownDelay)
		}
	}
}
