package nomad

import (
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestReschedule_FailedAllocationAfterItsDelay: a client's failure report makes an
// alloc-failure evaluation at once; the scheduler leaves the failed allocation in place for
// its delay and the worker writes one delayed follow-up evaluation, which is processed only
// once due and places a replacement that names the failed allocation, and that the failed
// allocation names back.
func TestReschedule_FailedAllocationAfterItsDelay(t *testing.T) {
	srv := testServer(t, func(c *Config) { c.NumSchedulers = 1 })
	registerNode(t, srv, testNode("n1"), "")
	job := mock.Job()
	delay := structs.RescheduleMinDelay
	job.TaskGroups[0].ReschedulePolicy = &api.ReschedulePolicy{
		Attempts: new(0), Interval: new(time.Duration(0)), Delay: &delay, DelayFunction: new("constant"),
		MaxDelay: new(time.Duration(0)), Unlimited: new(true),
	}
	registerJob(t, srv, "", job)
	waitFor(t, 5*time.Second, func() bool { return len(liveAllocs(t, srv, "web")) == 1 })
	failed := liveAllocs(t, srv, "web")[0]

	var reply structs.GenericResponse
	must.NoError(t, srv.Endpoints.Alloc.UpdateFromClient(&structs.AllocUpdateRequest{NodeID: "n1",
		Alloc:        []*structs.Allocation{{ID: failed.ID, ClientStatus: structs.AllocClientStatusFailed}},
		WriteRequest: structs.WriteRequest{AuthToken: "secret-n1"}}, &reply), must.Sprint("the node reports the failure"))

	var followup *structs.Evaluation
	waitFor(t, 5*time.Second, func() bool {
		evals, _ := srv.State().EvalsByJob(nil, "default", "web")
		var sawFailure bool
		for _, e := range evals {
			sawFailure = sawFailure || e.TriggeredBy == structs.EvalTriggerAllocFailure
			if e.TriggeredBy == structs.EvalTriggerRetryFailedAlloc {
				followup = e
			}
		}
		return sawFailure && followup != nil
	})
	stored, err := srv.State().AllocByID(nil, failed.ID)
	must.NoError(t, err)
	must.Eq(t, time.Unix(0, stored.ModifyTime).Add(delay).UTC(), followup.WaitUntil)
	if time.Now().Before(followup.WaitUntil) {
		e, _ := srv.State().EvalByID(nil, followup.ID)
		must.Eq(t, structs.EvalStatusPending, e.Status, must.Sprint("not processed before it is due"))
		must.Len(t, 0, replacementsOf(t, srv, failed.ID))
	}

	waitFor(t, delay+10*time.Second, func() bool { return len(replacementsOf(t, srv, failed.ID)) == 1 })
	repl := replacementsOf(t, srv, failed.ID)[0]
	must.Eq(t, failed.Name, repl.Name)
	must.Len(t, 1, repl.RescheduleTracker.Events)
	must.Eq(t, failed.ID, repl.RescheduleTracker.Events[0].PrevAllocID)
	// The failed allocation names its replacement, written by the same plan entry, as the
	// Alloc endpoint (and so `alloc status` and the UI) reads it.
	var got structs.SingleAllocResponse
	must.NoError(t, srv.Endpoints.Alloc.GetAlloc(&structs.AllocSpecificRequest{AllocID: failed.ID}, &got))
	must.NotNil(t, got.Alloc)
	must.Eq(t, repl.ID, got.Alloc.NextAllocation)
	must.Eq(t, repl.CreateIndex, got.Alloc.ModifyIndex)
	must.Eq(t, structs.AllocClientStatusFailed, got.Alloc.ClientStatus)
	// The follow-up was processed once due, and no other was written for the same failure.
	evals, err := srv.State().EvalsByJob(nil, "default", "web")
	must.NoError(t, err)
	followups := 0
	for _, e := range evals {
		if e.TriggeredBy == structs.EvalTriggerRetryFailedAlloc {
			followups++
		}
	}
	must.Eq(t, 1, followups)
}

func replacementsOf(t *testing.T, srv *Server, prev string) []*structs.Allocation {
	t.Helper()
	all, err := srv.State().AllocsByJob(nil, "default", "web")
	must.NoError(t, err)
	var out []*structs.Allocation
	for _, a := range all {
		if a.PreviousAllocation == prev {
			out = append(out, a)
		}
	}
	return out
}
