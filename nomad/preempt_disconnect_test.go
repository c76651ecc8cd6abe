package nomad

import (
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/scheduler"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestWorker_SystemJobPreempts: a system job that does not fit a full node evicts a
// lower-priority allocation there (the default configuration allows it for system jobs), as
// job plan showed it would; the victim names its preemptor, and its job is evaluated again
// and waits for room.
func TestWorker_SystemJobPreempts(t *testing.T) {
	srv := testServer(t, func(c *Config) { c.NumSchedulers = 1 })
	registerNode(t, srv, sizedNode("n1", 1000), "")
	defer keepAlive(srv, "n1")()
	low := memJob("low", 2, 400)
	low.Priority = 20
	evalDone(t, srv, registerJob(t, srv, "", low).EvalID)
	must.Len(t, 2, liveAllocs(t, srv, "low"))

	sys := mock.SystemJob("sys")
	sys.Priority = 70
	sys.TaskGroups[0].Tasks[0].Resources = &api.Resources{CPU: new(100), MemoryMB: new(500)}

	var plan structs.JobPlanResponse
	must.NoError(t, srv.Endpoints.Job.Plan(&structs.JobPlanRequest{Job: sys.Copy(),
		WriteRequest: structs.WriteRequest{Namespace: sys.Namespace}}, &plan))
	must.Len(t, 1, plan.Annotations.PreemptedAllocs)
	must.Eq(t, "low", plan.Annotations.PreemptedAllocs[0].JobID)

	evalDone(t, srv, registerJob(t, srv, "", sys).EvalID)
	placed := liveAllocs(t, srv, "sys")
	must.Len(t, 1, placed)
	must.Len(t, 1, placed[0].PreemptedAllocations)
	victim, err := srv.State().AllocByID(nil, placed[0].PreemptedAllocations[0])
	must.NoError(t, err)
	must.Eq(t, "low", victim.JobID)
	must.Eq(t, plan.Annotations.PreemptedAllocs[0].ID, victim.ID)
	must.Eq(t, structs.AllocDesiredStatusEvict, victim.DesiredStatus)
	must.Eq(t, placed[0].ID, victim.PreemptedByAllocation)
	must.Eq(t, "Preempted by alloc ID "+placed[0].ID, victim.DesiredDescription)
	must.Len(t, 1, liveAllocs(t, srv, "low"))

	// The preempted job is evaluated again: no room is left, so its allocation waits.
	evals, err := srv.State().EvalsByJob(nil, "default", "low")
	must.NoError(t, err)
	var preemptEval *structs.Evaluation
	for _, e := range evals {
		if e.TriggeredBy == structs.EvalTriggerPreemption {
			preemptEval = e
		}
	}
	must.NotNil(t, preemptEval)
	evalDone(t, srv, preemptEval.ID)
	waitFor(t, 5*time.Second, func() bool {
		s, _ := srv.State().JobSummaryByID(nil, "default", "low")
		return s != nil && s.Summary["web"].Queued == 1
	})
}

// TestWorker_SystemJobPreemptionDisabled: with preemption off for system jobs, the system
// job's allocation waits instead.
func TestWorker_SystemJobPreemptionDisabled(t *testing.T) {
	srv := testServer(t, func(c *Config) { c.NumSchedulers = 1 })
	var cfgReply structs.SchedulerSetConfigurationResponse
	must.NoError(t, srv.Endpoints.Operator.SchedulerSetConfiguration(&structs.SchedulerSetConfigRequest{
		Config: structs.SchedulerConfiguration{SchedulerAlgorithm: structs.SchedulerAlgorithmBinpack}}, &cfgReply))
	registerNode(t, srv, sizedNode("n1", 1000), "")
	defer keepAlive(srv, "n1")()
	low := memJob("low", 2, 400)
	low.Priority = 20
	evalDone(t, srv, registerJob(t, srv, "", low).EvalID)
	sys := mock.SystemJob("sys")
	sys.Priority = 70
	sys.TaskGroups[0].Tasks[0].Resources = &api.Resources{CPU: new(100), MemoryMB: new(500)}
	eval := evalDone(t, srv, registerJob(t, srv, "", sys).EvalID)
	must.Eq(t, map[string]int{"web": 1}, eval.QueuedAllocations)
	must.Len(t, 2, liveAllocs(t, srv, "low"))
	must.Len(t, 0, liveAllocs(t, srv, "sys"))
}

// heartbeater heartbeats for one node until stopped; stop waits for it to end.
type heartbeater struct {
	stop chan struct{}
	done chan struct{}
}

func startHeartbeats(srv *Server, nodeID string) *heartbeater {
	h := &heartbeater{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-tick.C:
				var r structs.NodeUpdateResponse
				_ = srv.Endpoints.Node.UpdateStatus(&structs.NodeUpdateStatusRequest{
					NodeID: nodeID, Status: structs.NodeStatusReady, WriteRequest: structs.WriteRequest{AuthToken: "secret-" + nodeID},
				}, &r)
			}
		}
	}()
	return h
}

func (h *heartbeater) Stop() {
	select {
	case <-h.stop:
	default:
		close(h.stop)
	}
	<-h.done
}

func nodeStatus(srv *Server, id string) string {
	n, _ := srv.State().NodeByID(nil, id)
	if n == nil {
		return ""
	}
	return n.Status
}

// disconnectServer starts a server with fast heartbeats, two heartbeating nodes and job
// (count 1) placed, and returns the allocation, its node's heartbeater and the other node.
func disconnectServer(t *testing.T, job *structs.Job) (*Server, *structs.Allocation, *heartbeater, string) {
	t.Helper()
	srv := testServer(t, func(c *Config) {
		c.NumSchedulers = 1
		c.MinHeartbeatTTL = 100 * time.Millisecond
		c.HeartbeatGrace = 100 * time.Millisecond
	})
	beats := map[string]*heartbeater{}
	for _, id := range []string{"n1", "n2"} {
		registerNode(t, srv, testNode(id), "")
		beats[id] = startHeartbeats(srv, id)
		t.Cleanup(beats[id].Stop)
	}
	evalDone(t, srv, registerJob(t, srv, "", job).EvalID)
	live := liveAllocs(t, srv, job.ID)
	must.Len(t, 1, live)
	orig := live[0]
	reportStatus(t, srv, orig, structs.AllocClientStatusRunning)
	other := "n1"
	if orig.NodeID == "n1" {
		other = "n2"
	}
	return srv, orig, beats[orig.NodeID], other
}

func reportStatus(t *testing.T, srv *Server, a *structs.Allocation, status string) {
	t.Helper()
	var gr structs.GenericResponse
	must.NoError(t, srv.Endpoints.Alloc.UpdateFromClient(&structs.AllocUpdateRequest{NodeID: a.NodeID,
		Alloc:        []*structs.Allocation{{ID: a.ID, ClientStatus: status}},
		WriteRequest: structs.WriteRequest{AuthToken: "secret-" + a.NodeID}}, &gr))
}

func allocByID(t *testing.T, srv *Server, id string) *structs.Allocation {
	t.Helper()
	a, err := srv.State().AllocByID(nil, id)
	must.NoError(t, err)
	must.NotNil(t, a)
	return a
}

// TestWorker_DisconnectReplaceThenReconnect: a node that misses its heartbeat while it runs
// an allocation of a group with disconnect { lost_after } is disconnected, not down; the
// allocation is unknown, a replacement runs on the other node, and when the node comes back
// and reports the allocation running, keep_original stops the replacement.
func TestWorker_DisconnectReplaceThenReconnect(t *testing.T) {
	job := mock.Job()
	job.TaskGroups[0].Disconnect = &api.DisconnectStrategy{LostAfter: new(time.Hour), Reconcile: new(api.ReconcileOptionKeepOriginal)}
	srv, orig, beat, other := disconnectServer(t, job)

	beat.Stop()
	waitFor(t, 5*time.Second, func() bool { return nodeStatus(srv, orig.NodeID) == structs.NodeStatusDisconnected })
	must.Eq(t, structs.AllocClientStatusUnknown, allocByID(t, srv, orig.ID).ClientStatus)
	var repl *structs.Allocation
	waitFor(t, 5*time.Second, func() bool {
		for _, a := range liveAllocs(t, srv, "web") {
			if a.ID != orig.ID {
				repl = a
			}
		}
		return repl != nil
	})
	must.Eq(t, other, repl.NodeID)
	must.Eq(t, orig.ID, repl.PreviousAllocation)
	must.Eq(t, structs.AllocDesiredStatusRun, allocByID(t, srv, orig.ID).DesiredStatus)
	// A follow-up comes back when lost_after passes.
	evals, err := srv.State().EvalsByJob(nil, "default", "web")
	must.NoError(t, err)
	found := false
	for _, e := range evals {
		if e.TriggeredBy == structs.EvalTriggerMaxDisconnectTimeout && e.Status == structs.EvalStatusPending {
			found = true
			must.True(t, e.WaitUntil.After(time.Now().Add(50*time.Minute)))
		}
	}
	must.True(t, found)
	reportStatus(t, srv, repl, structs.AllocClientStatusRunning)

	// The node comes back and its client reports the allocation running.
	back := startHeartbeats(srv, orig.NodeID)
	t.Cleanup(back.Stop)
	waitFor(t, 5*time.Second, func() bool { return nodeStatus(srv, orig.NodeID) == structs.NodeStatusReady })
	reportStatus(t, srv, orig, structs.AllocClientStatusRunning)
	waitFor(t, 5*time.Second, func() bool {
		return allocByID(t, srv, repl.ID).DesiredStatus == structs.AllocDesiredStatusStop
	})
	must.Eq(t, scheduler.ReasonReconnectOriginal, allocByID(t, srv, repl.ID).DesiredDescription)
	kept := allocByID(t, srv, orig.ID)
	must.Eq(t, structs.AllocDesiredStatusRun, kept.DesiredStatus)
	must.Eq(t, structs.AllocClientStatusRunning, kept.ClientStatus)
	// It still names the replacement placed while it was away, as upstream's state keeps it.
	must.Eq(t, repl.ID, kept.NextAllocation)
	must.Len(t, 1, liveAllocs(t, srv, "web"))
}

// TestWorker_DisconnectLostAfterPasses: without replace, the unknown allocation keeps its
// place until lost_after passes; then the follow-up evaluation makes it lost and replaces it,
// the replacement naming it and it naming the replacement back (NextAllocation).
func TestWorker_DisconnectLostAfterPasses(t *testing.T) {
	job := mock.Job()
	job.TaskGroups[0].Disconnect = &api.DisconnectStrategy{LostAfter: new(time.Second), Replace: new(false)}
	srv, orig, beat, other := disconnectServer(t, job)

	beat.Stop()
	waitFor(t, 5*time.Second, func() bool {
		return allocByID(t, srv, orig.ID).ClientStatus == structs.AllocClientStatusUnknown
	})
	must.Len(t, 1, liveAllocs(t, srv, "web"))
	waitFor(t, 10*time.Second, func() bool {
		return allocByID(t, srv, orig.ID).ClientStatus == structs.AllocClientStatusLost
	})
	lost := allocByID(t, srv, orig.ID)
	must.Eq(t, structs.AllocDesiredStatusStop, lost.DesiredStatus)
	must.Eq(t, scheduler.ReasonDisconnectLost, lost.DesiredDescription)
	waitFor(t, 5*time.Second, func() bool {
		live := liveAllocs(t, srv, "web")
		return len(live) == 1 && live[0].NodeID == other
	})
	repl := liveAllocs(t, srv, "web")[0]
	must.Eq(t, orig.ID, repl.PreviousAllocation)
	must.Nil(t, repl.RescheduleTracker)
	must.Eq(t, repl.ID, allocByID(t, srv, orig.ID).NextAllocation)
}

// TestJobRegister_BadDisconnectRefused: a bad disconnect block is a 400 naming the field.
func TestJobRegister_BadDisconnectRefused(t *testing.T) {
	srv := testServer(t, nil)
	cases := []struct {
		name    string
		block   *api.DisconnectStrategy
		wantErr string
	}{
		{"unknown reconcile", &api.DisconnectStrategy{Reconcile: new(api.ReconcileOption("newest"))}, "disconnect: reconcile must be one of"},
		{"negative lost_after", &api.DisconnectStrategy{LostAfter: new(-time.Minute)}, "disconnect: lost_after must not be negative"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := mock.Job()
			job.TaskGroups[0].Disconnect = tc.block
			var reply structs.JobRegisterResponse
			err := srv.Endpoints.Job.Register(&structs.JobRegisterRequest{Job: job,
				WriteRequest: structs.WriteRequest{Namespace: job.Namespace}}, &reply)
			must.ErrorContains(t, err, tc.wantErr)
			must.Eq(t, 400, structs.ErrorCode(err))
			stored, err := srv.State().JobByID(nil, "default", "web")
			must.NoError(t, err)
			must.Nil(t, stored)
		})
	}
}
