package state

import (
	"fmt"
	"testing"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// commitSeen is what one committed transaction told the commit hook.
type commitSeen struct {
	msgType structs.MessageType
	index   uint64
	actor   *structs.Actor
	tables  map[string]bool
}

// recordCommits makes s record every commit from now on.
func recordCommits(s *StateStore) *[]commitSeen {
	var seen []commitSeen
	s.SetCommitHook(func(txn *Txn, changes memdb.Changes) {
		c := commitSeen{msgType: txn.MsgType, index: txn.Index, actor: txn.Meta.Actor, tables: map[string]bool{}}
		for _, ch := range changes {
			c.tables[ch.Table] = true
		}
		seen = append(seen, c)
	})
	return &seen
}

func pendingEval(id string) *structs.Evaluation {
	return &structs.Evaluation{ID: id, Namespace: structs.DefaultNamespace, JobID: "web", Type: structs.JobTypeService,
		Priority: 50, TriggeredBy: structs.EvalTriggerNodeUpdate, Status: structs.EvalStatusPending}
}

// nodeWithAlloc stores node n1 (at 10), job web (11) and one allocation of web on n1 (12).
func nodeWithAlloc(t *testing.T) (*StateStore, *structs.Allocation) {
	t.Helper()
	s := testStateStore(t)
	must.NoError(t, s.ApplyNodeRegister(10, &structs.NodeRegisterRequest{Node: mockNode("n1")}))
	job := mockJob("web")
	must.NoError(t, applyRegister(s, 11, nil, job, nil))
	alloc := mockAlloc("a1", job, "n1", 0)
	applyPlan(t, s, 12, &structs.ApplyPlanResultsRequest{Job: job, AllocsPlaced: []*structs.Allocation{alloc}})
	return s, alloc
}

// Each node write commits with its evaluations in one transaction of its own message type.
func TestApplyNodeWrites_CommitWithTheirEvaluations(t *testing.T) {
	cases := []struct {
		msgType structs.MessageType
		table   string
		actor   *structs.Actor
		apply   func(s *StateStore, eval *structs.Evaluation) error
	}{
		{structs.NodeRegisterRequestType, tableNodes, nil, func(s *StateStore, e *structs.Evaluation) error {
			n := mockNode("n1")
			n.Name = "renamed"
			return s.ApplyNodeRegister(20, &structs.NodeRegisterRequest{Node: n, Evals: []*structs.Evaluation{e}})
		}},
		{structs.NodeUpdateStatusRequestType, tableAllocs, nil, func(s *StateStore, e *structs.Evaluation) error {
			return s.ApplyNodeStatusUpdate(20, &structs.NodeUpdateStatusRequest{NodeID: "n1", Status: structs.NodeStatusDown,
				UpdatedAt: 20e9, Evals: []*structs.Evaluation{e}})
		}},
		{structs.NodeUpdateDrainRequestType, tableNodes, actorAlice, func(s *StateStore, e *structs.Evaluation) error {
			return s.ApplyNodeDrainUpdate(20, &structs.NodeUpdateDrainRequest{NodeID: "n1", DrainStrategy: &api.DrainStrategy{},
				Actor: actorAlice, UpdatedAt: 20e9, Evals: []*structs.Evaluation{e}})
		}},
		{structs.NodeUpdateEligibilityRequestType, tableNodes, nil, func(s *StateStore, e *structs.Evaluation) error {
			return s.ApplyNodeEligibilityUpdate(20, &structs.NodeUpdateEligibilityRequest{NodeID: "n1",
				Eligibility: structs.NodeSchedulingIneligible, UpdatedAt: 20e9, Evals: []*structs.Evaluation{e}})
		}},
		{structs.NodeDeregisterRequestType, tableNodes, nil, func(s *StateStore, e *structs.Evaluation) error {
			return s.ApplyNodeDeregister(20, &structs.NodeDeregisterRequest{NodeIDs: []string{"n1"}, UpdatedAt: 20e9,
				Evals: []*structs.Evaluation{e}})
		}},
		{structs.AllocUpdateDesiredTransitionRequestType, tableAllocs, nil, func(s *StateStore, e *structs.Evaluation) error {
			return s.ApplyAllocDesiredTransition(20, &structs.AllocUpdateDesiredTransitionRequest{
				Allocs: map[string]*api.DesiredTransition{"a1": {Migrate: ptrOf(true)}}, UpdatedAt: 20e9, Evals: []*structs.Evaluation{e}})
		}},
		{structs.AllocClientUpdateRequestType, tableAllocs, nil, func(s *StateStore, e *structs.Evaluation) error {
			return s.ApplyAllocClientUpdate(20, &structs.AllocUpdateRequest{NodeID: "n1",
				Alloc: []*structs.Allocation{clientStatus("a1", structs.AllocClientStatusFailed)}, UpdatedAt: 20e9,
				Evals: []*structs.Evaluation{e}})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.msgType.String(), func(t *testing.T) {
			s, _ := nodeWithAlloc(t)
			commits := recordCommits(s)
			evalID := fmt.Sprintf("eval-%d", tc.msgType)
			must.NoError(t, tc.apply(s, pendingEval(evalID)))

			must.Len(t, 1, *commits, must.Sprint("one transaction"))
			c := (*commits)[0]
			must.Eq(t, tc.msgType, c.msgType)
			must.Eq(t, uint64(20), c.index)
			must.Eq(t, tc.actor, c.actor)
			must.True(t, c.tables[tc.table], must.Sprintf("the write changed %s: %v", tc.table, c.tables))
			must.True(t, c.tables[tableEvals], must.Sprintf("the evaluations are in the write's transaction: %v", c.tables))
			eval, err := s.EvalByID(nil, evalID)
			must.NoError(t, err)
			must.NotNil(t, eval)
			must.Eq(t, uint64(20), eval.CreateIndex)
		})
	}
}

// A node write the state refuses leaves its evaluations unwritten too.
func TestApplyNodeWrites_RefusedWriteStoresNoEvaluation(t *testing.T) {
	cases := map[string]struct {
		wantCode int
		apply    func(s *StateStore, eval *structs.Evaluation) error
	}{
		"status of an unknown node": {404, func(s *StateStore, e *structs.Evaluation) error {
			return s.ApplyNodeStatusUpdate(20, &structs.NodeUpdateStatusRequest{NodeID: "nope", Status: structs.NodeStatusDown,
				Evals: []*structs.Evaluation{e}})
		}},
		"drain of an unknown node": {404, func(s *StateStore, e *structs.Evaluation) error {
			return s.ApplyNodeDrainUpdate(20, &structs.NodeUpdateDrainRequest{NodeID: "nope", DrainStrategy: &api.DrainStrategy{},
				Evals: []*structs.Evaluation{e}})
		}},
		"eligible while draining": {400, func(s *StateStore, e *structs.Evaluation) error {
			must.NoError(t, s.ApplyNodeDrainUpdate(19, &structs.NodeUpdateDrainRequest{NodeID: "n1", DrainStrategy: &api.DrainStrategy{}}))
			return s.ApplyNodeEligibilityUpdate(20, &structs.NodeUpdateEligibilityRequest{NodeID: "n1",
				Eligibility: structs.NodeSchedulingEligible, Evals: []*structs.Evaluation{e}})
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, _ := nodeWithAlloc(t)
			err := tc.apply(s, pendingEval("refused"))
			must.Eq(t, tc.wantCode, structs.ErrorCode(err), must.Sprintf("error %v", err))
			eval, err := s.EvalByID(nil, "refused")
			must.NoError(t, err)
			must.Nil(t, eval)
		})
	}
}

// The configuration and variable writes answer their caller; a lost check-and-set is an
// answer that writes nothing, not an error.
func TestApplyAnswers_LostCheckAndSetWritesNothing(t *testing.T) {
	s := testStateStore(t)
	commits := recordCommits(s)

	updated, err := s.ApplySchedulerSetConfig(10, &structs.SchedulerSetConfigRequest{
		Config: structs.SchedulerConfiguration{ModifyIndex: 99}, CAS: true, Actor: actorBob})
	must.NoError(t, err)
	must.False(t, updated)
	must.Len(t, 0, *commits, must.Sprint("a lost scheduler CAS commits nothing"))

	updated, err = s.ApplySchedulerSetConfig(11, &structs.SchedulerSetConfigRequest{Actor: actorBob})
	must.NoError(t, err)
	must.True(t, updated)
	must.Len(t, 1, *commits)
	must.Eq(t, actorBob, (*commits)[0].actor)
	must.Eq(t, structs.SchedulerConfigRequestType, (*commits)[0].msgType)

	updated, err = s.ApplyAutopilotSetConfig(12, &structs.AutopilotSetConfigRequest{
		Config: structs.AutopilotConfig{ModifyIndex: 99}, CAS: true})
	must.NoError(t, err)
	must.False(t, updated)
	updated, err = s.ApplyAutopilotSetConfig(13, &structs.AutopilotSetConfigRequest{Actor: actorAlice})
	must.NoError(t, err)
	must.True(t, updated)
	_, stored, err := s.AutopilotConfig(nil)
	must.NoError(t, err)
	must.NotNil(t, stored)
	must.Eq(t, uint64(13), stored.ModifyIndex)
}
