package state

import (
	"testing"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func TestStateStore_UpsertEvals_KeepsCreateIndex(t *testing.T) {
	s := testStateStore(t)
	job := mockJob("web")
	eval := mockEval("e1", job, structs.EvalTriggerJobRegister)
	mustApply(t, s, structs.EvalUpdateRequestType, 10, nil, func(txn *Txn) error {
		return s.UpsertEvalsTxn(txn, []*structs.Evaluation{eval})
	})
	got, err := s.EvalByID(nil, "e1")
	must.NoError(t, err)
	must.Eq(t, uint64(10), got.CreateIndex)
	must.Eq(t, uint64(10), got.ModifyIndex)

	updated := got.Copy()
	updated.Status = structs.EvalStatusComplete
	mustApply(t, s, structs.EvalUpdateRequestType, 20, nil, func(txn *Txn) error {
		return s.UpsertEvalsTxn(txn, []*structs.Evaluation{updated})
	})
	got, err = s.EvalByID(nil, "e1")
	must.NoError(t, err)
	must.Eq(t, uint64(10), got.CreateIndex)
	must.Eq(t, uint64(20), got.ModifyIndex)
	must.Eq(t, structs.EvalStatusComplete, got.Status)
	must.Eq(t, uint64(20), s.Index(tableEvals))

	missing, err := s.EvalByID(nil, "nope")
	must.NoError(t, err)
	must.Nil(t, missing)
}

// evalFixture stores evaluations of jobs "web" and "web2" in default and one of "web" in prod,
// each at its own index so newest-first order is known.
func evalFixture(t *testing.T) *StateStore {
	t.Helper()
	s := testStateStore(t)
	upsertNamespaces(t, s, 5, "prod")
	web, web2, prodWeb := mockJob("web"), mockJob("web2"), mockJobIn("prod", "web")
	for i, e := range []*structs.Evaluation{
		mockEval("aa-1", web, structs.EvalTriggerJobRegister),
		mockEval("ab-2", web2, structs.EvalTriggerJobRegister),
		mockEval("aa-3", web, structs.EvalTriggerJobDeregister),
		mockEval("bb-4", prodWeb, structs.EvalTriggerJobRegister),
	} {
		mustApply(t, s, structs.EvalUpdateRequestType, uint64(10+i), nil, func(txn *Txn) error {
			return s.UpsertEvalsTxn(txn, []*structs.Evaluation{e})
		})
	}
	return s
}

func evalIDs(evals []*structs.Evaluation) []string {
	var out []string
	for _, e := range evals {
		out = append(out, e.ID)
	}
	return out
}

func TestStateStore_EvalsByJob(t *testing.T) {
	s := evalFixture(t)
	cases := []struct {
		name      string
		namespace string
		jobID     string
		want      []string
	}{
		{name: "newest first", namespace: "default", jobID: "web", want: []string{"aa-3", "aa-1"}},
		{name: "no prefix match", namespace: "default", jobID: "web2", want: []string{"ab-2"}},
		{name: "other namespace", namespace: "prod", jobID: "web", want: []string{"bb-4"}},
		{name: "unknown job", namespace: "default", jobID: "we"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			evals, err := s.EvalsByJob(nil, tc.namespace, tc.jobID)
			must.NoError(t, err)
			must.Eq(t, tc.want, evalIDs(evals))
		})
	}
}

func TestStateStore_Evals(t *testing.T) {
	s := evalFixture(t)
	cases := []struct {
		name      string
		namespace string
		prefix    string
		want      []string
	}{
		{name: "namespace", namespace: "default", want: []string{"aa-3", "ab-2", "aa-1"}},
		{name: "namespace prefix", namespace: "default", prefix: "aa", want: []string{"aa-3", "aa-1"}},
		{name: "all", namespace: "*", want: []string{"bb-4", "aa-3", "ab-2", "aa-1"}},
		{name: "all prefix", namespace: "*", prefix: "b", want: []string{"bb-4"}},
		{name: "prefix in other namespace", namespace: "default", prefix: "b"},
		{name: "other namespace", namespace: "prod", want: []string{"bb-4"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			evals, err := s.Evals(nil, tc.namespace, tc.prefix)
			must.NoError(t, err)
			must.Eq(t, tc.want, evalIDs(evals))
		})
	}
}

func TestStateStore_DeleteEvals(t *testing.T) {
	s := evalFixture(t)
	mustApply(t, s, structs.EvalDeleteRequestType, 30, nil, func(txn *Txn) error {
		return s.DeleteEvalsTxn(txn, []string{"aa-1", "unknown"})
	})
	evals, err := s.Evals(nil, "*", "")
	must.NoError(t, err)
	must.Eq(t, []string{"bb-4", "aa-3", "ab-2"}, evalIDs(evals))
	must.Eq(t, uint64(30), s.Index(tableEvals))
}
