package nomad

import (
	"context"
	"testing"
	"time"

	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/nomad/stream"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func testNode(id string) *structs.Node {
	return &structs.Node{
		ID: id, SecretID: "secret-" + id, Name: "node-" + id, Datacenter: "dc1",
		Status:  structs.NodeStatusReady,
		Drivers: map[string]*structs.DriverInfo{"raw_exec": {Detected: true, Healthy: true}},
	}
}

func registerNode(t *testing.T, srv *Server, node *structs.Node, token string) {
	t.Helper()
	var reply structs.NodeUpdateResponse
	must.NoError(t, srv.Endpoints.Node.Register(&structs.NodeRegisterRequest{
		Node: node, WriteRequest: structs.WriteRequest{AuthToken: token},
	}, &reply))
	must.Positive(t, reply.HeartbeatTTL)
}

// keepAlive heartbeats for a node until the returned function is called.
func keepAlive(srv *Server, nodeID string) func() {
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				var r structs.NodeUpdateResponse
				_ = srv.Endpoints.Node.UpdateStatus(&structs.NodeUpdateStatusRequest{
					NodeID: nodeID, Status: structs.NodeStatusReady, WriteRequest: structs.WriteRequest{AuthToken: "secret-" + nodeID},
				}, &r)
			}
		}
	}()
	return func() { close(stop) }
}

func liveAllocs(t *testing.T, srv *Server, jobID string) []*structs.Allocation {
	t.Helper()
	all, err := srv.State().AllocsByJob(nil, structs.DefaultNamespace, jobID)
	must.NoError(t, err)
	var out []*structs.Allocation
	for _, a := range all {
		if !a.TerminalStatus() {
			out = append(out, a)
		}
	}
	return out
}

// TestWorker_NoNodesQueuesThenPlaces: without nodes the evaluation completes with its
// allocations queued in a blocked evaluation, as upstream; the first node to register
// unblocks it and they are placed.
func TestWorker_NoNodesQueuesThenPlaces(t *testing.T) {
	srv := testServer(t, func(c *Config) { c.NumSchedulers = 1 })
	job := mock.Job()
	job.TaskGroups[0].Count = new(2)
	reply := registerJob(t, srv, "", job)
	var blockedID string
	waitFor(t, 5*time.Second, func() bool {
		e, _ := srv.State().EvalByID(nil, reply.EvalID)
		if e == nil || e.Status != structs.EvalStatusComplete || e.BlockedEval == "" {
			return false
		}
		blockedID = e.BlockedEval
		return true
	})
	summary, err := srv.State().JobSummaryByID(nil, "default", "web")
	must.NoError(t, err)
	must.Eq(t, 2, summary.Summary["web"].Queued)
	must.SliceEmpty(t, liveAllocs(t, srv, "web"))

	registerNode(t, srv, testNode("n1"), "")
	waitFor(t, 5*time.Second, func() bool { return len(liveAllocs(t, srv, "web")) == 2 })
	allocs := liveAllocs(t, srv, "web")
	for _, a := range allocs {
		must.Eq(t, "n1", a.NodeID)
		must.Eq(t, blockedID, a.EvalID)
		must.Positive(t, a.CreateTime)
		must.NotNil(t, a.Job)
	}
	waitFor(t, 5*time.Second, func() bool {
		e, _ := srv.State().EvalByID(nil, blockedID)
		return e.Status == structs.EvalStatusComplete
	})
	stored, err := srv.State().JobByID(nil, "default", "web")
	must.NoError(t, err)
	must.Eq(t, structs.JobStatusRunning, stored.Status)
}

// TestWorker_LostNodeAllocationsAreReplaced: a node that stops heartbeating is marked down,
// its allocation becomes lost and is replaced on the node that still heartbeats. The
// replacement names the lost one (PreviousAllocation), which names it back (NextAllocation,
// written by the same plan entry and read through the Alloc endpoint, so `alloc status` shows
// it), as upstream; it is no reschedule of a failure, so it carries no reschedule tracker.
func TestWorker_LostNodeAllocationsAreReplaced(t *testing.T) {
	srv := testServer(t, func(c *Config) {
		c.NumSchedulers = 1
		c.MinHeartbeatTTL = 100 * time.Millisecond
		c.HeartbeatGrace = 100 * time.Millisecond
	})
	registerNode(t, srv, testNode("n1"), "")
	defer keepAlive(srv, "n1")()
	registerNode(t, srv, testNode("n2"), "")
	silence := keepAlive(srv, "n2")
	job := mock.Job()
	job.TaskGroups[0].Count = new(2)
	registerJob(t, srv, "", job)
	waitFor(t, 5*time.Second, func() bool {
		all, _ := srv.State().AllocsByJob(nil, "default", "web")
		return len(all) == 2 && all[0].NodeID != all[1].NodeID
	})
	silence()
	waitFor(t, 5*time.Second, func() bool {
		n, _ := srv.State().NodeByID(nil, "n2")
		return n.Status == structs.NodeStatusDown
	})
	waitFor(t, 5*time.Second, func() bool {
		live := liveAllocs(t, srv, "web")
		return len(live) == 2 && live[0].NodeID == "n1" && live[1].NodeID == "n1"
	})
	all, err := srv.State().AllocsByJob(nil, "default", "web")
	must.NoError(t, err)
	var lost []*structs.Allocation
	for _, a := range all {
		if a.ClientStatus == structs.AllocClientStatusLost {
			lost = append(lost, a)
		}
	}
	must.Len(t, 1, lost)
	must.Eq(t, "n2", lost[0].NodeID)
	must.Eq(t, structs.AllocDesiredStatusStop, lost[0].DesiredStatus)
	var repl *structs.Allocation
	for _, a := range liveAllocs(t, srv, "web") {
		if a.PreviousAllocation == lost[0].ID {
			repl = a
		}
	}
	must.NotNil(t, repl, must.Sprint("a live allocation names the lost one"))
	must.Eq(t, lost[0].Name, repl.Name)
	must.Nil(t, repl.RescheduleTracker)
	var got structs.SingleAllocResponse
	must.NoError(t, srv.Endpoints.Alloc.GetAlloc(&structs.AllocSpecificRequest{AllocID: lost[0].ID}, &got))
	must.NotNil(t, got.Alloc)
	must.Eq(t, repl.ID, got.Alloc.NextAllocation)
	must.Eq(t, structs.AllocClientStatusLost, got.Alloc.ClientStatus)
	n1, err := srv.State().NodeByID(nil, "n1")
	must.NoError(t, err)
	must.Eq(t, structs.NodeStatusReady, n1.Status)
}

func TestJobGCEligible_NeedsFinishedAllocations(t *testing.T) {
	stopped := mock.Job()
	stopped.Stop = true
	stopped.Status = structs.JobStatusDead
	at := func(status string) *structs.Allocation {
		return &structs.Allocation{ClientStatus: status, DesiredStatus: structs.AllocDesiredStatusStop}
	}
	cases := []struct {
		name   string
		allocs []*structs.Allocation
		want   bool
	}{
		{name: "no allocations", want: true},
		{name: "all finished", allocs: []*structs.Allocation{at("complete"), at("failed"), at("lost")}, want: true},
		{name: "one still running", allocs: []*structs.Allocation{at("complete"), at("running")}},
		{name: "one not started", allocs: []*structs.Allocation{at("pending")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, jobGCEligible(stopped, nil, tc.allocs, time.Hour, time.Now(), true))
		})
	}
}

// TestWorker_NoNodeOneEvaluationEventPerEntry: with nothing placed, the blocked evaluation and
// the completion are separate entries, one Evaluation event each, as the official client's
// event stream test expects of upstream.
func TestWorker_NoNodeOneEvaluationEventPerEntry(t *testing.T) {
	srv := testServer(t, func(c *Config) { c.NumSchedulers = 1 })
	sub, err := srv.EventBroker().Subscribe(&stream.SubscribeRequest{
		Topics:    map[structs.Topic][]string{structs.TopicEvaluation: {"*"}},
		Namespace: structs.AllNamespacesSentinel,
		Index:     srv.raft.AppliedIndex(),
	})
	must.NoError(t, err)
	defer sub.Unsubscribe()
	registerJob(t, srv, "", mock.Job())

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	statuses := map[string]bool{}
	for !statuses[structs.EvalStatusBlocked] || !statuses[structs.EvalStatusComplete] {
		batch, err := sub.Next(ctx)
		must.NoError(t, err)
		must.Len(t, 1, batch.Events, must.Sprintf("one evaluation event per entry, got %d at index %d", len(batch.Events), batch.Index))
		statuses[batch.Events[0].Payload.(*structs.EvaluationEvent).Evaluation.Status] = true
	}
}

// TestWorker_PurgedJobEvaluationCompletes: the evaluation of a purge names a job that is gone;
// the worker schedules it (nothing to place, no pool to read an algorithm from) without
// failing.
func TestWorker_PurgedJobEvaluationCompletes(t *testing.T) {
	srv := testServer(t, func(c *Config) { c.NumSchedulers = 1 })
	registerNode(t, srv, testNode("n1"), "")
	registerJob(t, srv, "", mock.Job())
	waitFor(t, 5*time.Second, func() bool { return len(liveAllocs(t, srv, "web")) == 1 })
	var dr structs.JobDeregisterResponse
	must.NoError(t, srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{JobID: "web", Purge: true,
		WriteRequest: structs.WriteRequest{Namespace: "default"}}, &dr))
	must.NotEq(t, "", dr.EvalID)
	waitFor(t, 5*time.Second, func() bool {
		e, _ := srv.State().EvalByID(nil, dr.EvalID)
		return e != nil && e.Status == structs.EvalStatusComplete
	})
}
