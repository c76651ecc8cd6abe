package nomad

import (
	"context"
	"testing"

	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/nomad/worker"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func testEval(id, jobID, status string) *structs.Evaluation {
	return &structs.Evaluation{ID: id, Namespace: structs.DefaultNamespace, JobID: jobID, Type: structs.JobTypeService,
		Priority: 50, TriggeredBy: structs.EvalTriggerJobRegister, Status: status, CreateTime: 1, ModifyTime: 1}
}

// A stop or purge cancels the job's pending and blocked evaluations in its own Raft entry,
// with the time the leader fixed; other evaluations and other jobs' are left alone.
func TestSecurity_DeregisterCancelsJobEvals(t *testing.T) {
	cases := []struct {
		name       string
		mt         structs.MessageType
		req        any
		wantReason string
	}{
		{name: "stop", mt: structs.JobDeregisterRequestType, wantReason: "canceled: job stopped",
			req: &structs.JobDeregisterRequest{JobID: "web", StopTime: 777, Eval: testEval("e-dereg", "web", structs.EvalStatusPending),
				WriteRequest: structs.WriteRequest{Namespace: structs.DefaultNamespace}}},
		{name: "purge", mt: structs.JobDeregisterRequestType, wantReason: "canceled: job purged",
			req: &structs.JobDeregisterRequest{JobID: "web", Purge: true, PurgeRecordID: "rec-1", PurgeTime: 777, StopTime: 777,
				Eval: testEval("e-dereg", "web", structs.EvalStatusPending), WriteRequest: structs.WriteRequest{Namespace: structs.DefaultNamespace}}},
		{name: "garbage collection", mt: structs.JobBatchDeregisterRequestType, wantReason: "canceled: job purged by garbage collection",
			req: &structs.JobBatchDeregisterRequest{PurgeTime: 777,
				Jobs: []*structs.JobBatchDeregisterItem{{Namespace: structs.DefaultNamespace, JobID: "web", PurgeRecordID: "rec-1"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := testFSM(t)
			must.Nil(t, applyEntry(t, f, 10, structs.JobRegisterRequestType, &structs.JobRegisterRequest{
				Job: mock.Job(), Eval: testEval("e-pending", "web", structs.EvalStatusPending)}))
			must.Nil(t, applyEntry(t, f, 11, structs.JobRegisterRequestType, &structs.JobRegisterRequest{
				Job: mock.JobWithID("web2"), Eval: testEval("e-other", "web2", structs.EvalStatusPending)}))
			must.Nil(t, applyEntry(t, f, 12, structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
				Evals: []*structs.Evaluation{testEval("e-blocked", "web", structs.EvalStatusBlocked), testEval("e-done", "web", structs.EvalStatusComplete)}}))

			must.Nil(t, applyEntry(t, f, 13, tc.mt, tc.req))

			want := map[string]string{
				"e-pending": structs.EvalStatusCancelled, "e-blocked": structs.EvalStatusCancelled,
				"e-done": structs.EvalStatusComplete, "e-other": structs.EvalStatusPending,
			}
			if tc.mt == structs.JobDeregisterRequestType {
				want["e-dereg"] = structs.EvalStatusPending
			}
			for id, status := range want {
				eval, err := f.State().EvalByID(nil, id)
				must.NoError(t, err)
				must.NotNil(t, eval, must.Sprint(id))
				must.Eq(t, status, eval.Status, must.Sprint(id))
				if status == structs.EvalStatusCancelled {
					must.Eq(t, tc.wantReason, eval.StatusDescription)
					must.Eq(t, int64(777), eval.ModifyTime)
					must.Eq(t, uint64(13), eval.ModifyIndex)
				}
			}
		})
	}
}

// pendingEvals are the evaluations the worker would take next.
func pendingEvals(t *testing.T, srv *Server) []*structs.Evaluation {
	t.Helper()
	evals, err := srv.State().EvalsByStatus(nil, structs.EvalStatusPending)
	must.NoError(t, err)
	return evals
}

// A huge job is placed in bounded batches, each evaluation leaving a pending follow-up; a
// stop cancels the follow-up, and no worker (this one, or a new one as after a restart)
// places anything for the job again.
func TestSecurity_StoppedJobPlacesNothing(t *testing.T) {
	srv := testServer(t, nil)
	registerNode(t, srv, testNode("n1"), "")
	job := mock.Job()
	job.TaskGroups[0].Count = new(2500)
	reply := registerJob(t, srv, "", job)

	w := newTestWorker(t, srv)
	ctx := context.Background()
	must.NoError(t, w.step(ctx))
	allocs, err := srv.State().AllocsByJob(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	must.Len(t, worker.MaxPlacementsPerPlan, allocs)
	first, err := srv.State().EvalByID(nil, reply.EvalID)
	must.NoError(t, err)
	must.Eq(t, structs.EvalStatusComplete, first.Status)
	must.Eq(t, 2500-worker.MaxPlacementsPerPlan, first.QueuedAllocations["web"])
	pending := pendingEvals(t, srv)
	must.Len(t, 1, pending)
	must.Eq(t, first.NextEval, pending[0].ID)
	must.Eq(t, first.ID, pending[0].PreviousEval)

	var dereg structs.JobDeregisterResponse
	must.NoError(t, srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{JobID: "web",
		WriteRequest: structs.WriteRequest{Namespace: structs.DefaultNamespace}}, &dereg))
	followUp, err := srv.State().EvalByID(nil, first.NextEval)
	must.NoError(t, err)
	must.Eq(t, structs.EvalStatusCancelled, followUp.Status)

	for _, w := range []*testWorker{w, newTestWorker(t, srv)} {
		for len(pendingEvals(t, srv)) > 0 {
			must.NoError(t, w.step(ctx))
		}
	}
	allocs, err = srv.State().AllocsByJob(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	must.Len(t, worker.MaxPlacementsPerPlan, allocs, must.Sprint("allocations were placed after the stop"))
	for _, a := range allocs {
		must.Eq(t, structs.AllocDesiredStatusStop, a.DesiredStatus)
	}
	for _, s := range []string{structs.EvalStatusPending, structs.EvalStatusBlocked} {
		left, err := srv.State().EvalsByStatus(nil, s)
		must.NoError(t, err)
		must.SliceEmpty(t, left)
	}
}

// Without a stop, follow-ups go on until the count is reached, a batch per evaluation.
func TestSecurity_HugeJobPlacedInBatches(t *testing.T) {
	srv := testServer(t, nil)
	registerNode(t, srv, testNode("n1"), "")
	job := mock.Job()
	job.TaskGroups[0].Count = new(2500)
	registerJob(t, srv, "", job)
	w := newTestWorker(t, srv)
	steps := 0
	for len(pendingEvals(t, srv)) > 0 {
		must.NoError(t, w.step(context.Background()))
		steps++
	}
	must.Eq(t, (2500+worker.MaxPlacementsPerPlan-1)/worker.MaxPlacementsPerPlan, steps)
	must.Len(t, 2500, liveAllocs(t, srv, "web"))
}

// A job stored above job_max_count (before the limit existed, or was lowered) is not placed:
// its evaluation fails, saying why, and stopping it still stops what it runs.
func TestSecurity_StoredJobAboveMaxCountNotPlaced(t *testing.T) {
	srv := testServer(t, func(c *Config) { c.JobMaxCount = 10 })
	registerNode(t, srv, testNode("n1"), "")
	job := mock.Job()
	job.TaskGroups[0].Count = new(99_999_999_999)
	// Straight to Raft, past the endpoint's check, as an entry written before it existed.
	_, err := srv.raftApply(structs.JobRegisterRequestType, &structs.JobRegisterRequest{
		Job: job, Eval: testEval("e-huge", "web", structs.EvalStatusPending)})
	must.NoError(t, err)

	w := newTestWorker(t, srv)
	must.NoError(t, w.step(context.Background()))
	eval, err := srv.State().EvalByID(nil, "e-huge")
	must.NoError(t, err)
	must.Eq(t, structs.EvalStatusFailed, eval.Status)
	must.StrContains(t, eval.StatusDescription, "job_max_count (10)")
	allocs, err := srv.State().AllocsByJob(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	must.SliceEmpty(t, allocs)
	must.SliceEmpty(t, pendingEvals(t, srv))
}
