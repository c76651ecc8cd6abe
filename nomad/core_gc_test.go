package nomad

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// A forced GC is done by the GC but asked for by a token: the purge record and the
// JobBatchDeregistered event name both, through the Raft entry and the real FSM, and neither
// carries the token's secret. A scheduled run names the GC alone.
func TestSecurity_ForcedGCRecordsRequestingToken(t *testing.T) {
	srv, mgmt := testACLServer(t, nil)
	token, err := srv.State().ACLTokenBySecretID(nil, mgmt)
	must.NoError(t, err)
	want := &structs.Actor{AccessorID: token.AccessorID, Name: token.Name, Type: structs.ACLManagementToken}

	registerJob(t, srv, mgmt, mock.JobWithID("forced"))
	var dr structs.JobDeregisterResponse
	must.NoError(t, srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{JobID: "forced",
		WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: mgmt}}, &dr))

	sub, err := srv.Endpoints.Event.Subscribe(&EventStreamRequest{Topics: map[structs.Topic][]string{structs.TopicJob: {"*"}},
		Index: srv.State().LatestIndex() + 1, AuthToken: mgmt})
	must.NoError(t, err)
	defer sub.Unsubscribe()

	var gr structs.GenericResponse
	must.NoError(t, srv.Endpoints.System.GarbageCollect(&structs.WriteRequest{AuthToken: mgmt}, &gr))

	records, err := srv.State().PurgeRecords(nil)
	must.NoError(t, err)
	must.Len(t, 1, records)
	must.Eq(t, structs.ActorJobGC, records[0].Actor)
	must.Eq(t, want, records[0].ForcedBy)
	must.Eq(t, want, records[0].Stub().ForcedBy)
	raw, err := json.Marshal(records[0])
	must.NoError(t, err)
	must.StrNotContains(t, string(raw), mgmt)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	batch, err := sub.Next(ctx)
	must.NoError(t, err)
	must.Eq(t, "JobBatchDeregistered", batch.Events[0].Type)
	payload := batch.Events[0].Payload.(*structs.JobEvent)
	must.Eq(t, structs.ActorJobGC, payload.Actor)
	must.Eq(t, want, payload.ForcedBy)
	raw, err = json.Marshal(batch)
	must.NoError(t, err)
	must.StrNotContains(t, string(raw), mgmt)
	must.StrContains(t, string(raw), `"ForcedBy":{"AccessorID":"`+token.AccessorID)

	// A scheduled run has no requester to name.
	registerJob(t, srv, mgmt, mock.JobWithID("scheduled"))
	must.NoError(t, srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{JobID: "scheduled",
		WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: mgmt}}, &dr))
	_, err = srv.runJobGC(true, nil)
	must.NoError(t, err)
	records, err = srv.State().PurgeRecords(nil)
	must.NoError(t, err)
	for _, r := range records {
		if r.JobID == "scheduled" {
			must.Nil(t, r.ForcedBy)
			raw, err := json.Marshal(r.Stub())
			must.NoError(t, err)
			must.False(t, strings.Contains(string(raw), "ForcedBy"))
		}
	}
}

func TestNodeGCEligible(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	down := func(ago time.Duration) *structs.Node {
		n := mock.Node("n1")
		n.Status = structs.NodeStatusDown
		n.StatusUpdatedAt = now.Add(-ago).Unix()
		return n
	}
	lost := &structs.Allocation{ClientStatus: structs.AllocClientStatusLost}
	running := &structs.Allocation{ClientStatus: structs.AllocClientStatusRunning}
	cases := []struct {
		name   string
		node   *structs.Node
		allocs []*structs.Allocation
		force  bool
		want   bool
	}{
		{name: "down past the threshold", node: down(25 * time.Hour), allocs: []*structs.Allocation{lost}, want: true},
		{name: "down within the threshold", node: down(time.Hour)},
		{name: "forced ignores the threshold", node: down(time.Minute), force: true, want: true},
		{name: "ready node is kept", node: mock.Node("n1"), force: true},
		{name: "something still runs", node: down(48 * time.Hour), allocs: []*structs.Allocation{running}, force: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, nodeGCEligible(tc.node, tc.allocs, 24*time.Hour, now, tc.force))
		})
	}
}

// The scheduled node GC keeps recently downed nodes; a forced GC removes every down node
// through Raft, with a NodeDeregistration event, and never a ready one.
func TestNodeGC_RemovesDownNodes(t *testing.T) {
	srv := testServer(t, func(c *Config) { c.NodeGCThreshold = time.Hour })
	registerNode(t, srv, mock.Node("up"), "")
	registerNode(t, srv, mock.Node("gone"), "")
	var r structs.NodeUpdateResponse
	must.NoError(t, srv.Endpoints.Node.UpdateStatus(&structs.NodeUpdateStatusRequest{
		NodeID: "gone", Status: structs.NodeStatusDown, WriteRequest: structs.WriteRequest{AuthToken: "secret-gone"},
	}, &r))

	n, err := srv.runNodeGC(false)
	must.NoError(t, err)
	must.Zero(t, n)

	events := nodeEventsOf(t, srv, func() error {
		var reply structs.GenericResponse
		return srv.Endpoints.System.GarbageCollect(&structs.WriteRequest{}, &reply)
	})
	must.Eq(t, []nodeEventSeen{{Type: "NodeDeregistration", NodeID: "gone", Elig: structs.NodeSchedulingEligible}}, events)
	for id, want := range map[string]bool{"up": true, "gone": false} {
		node, err := srv.State().NodeByID(nil, id)
		must.NoError(t, err)
		must.Eq(t, want, node != nil, must.Sprintf("node %s", id))
	}
}

func TestEvalGCEligible(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	eval := func(status string, ago time.Duration) *structs.Evaluation {
		return &structs.Evaluation{ID: "e1", Status: status, ModifyTime: now.Add(-ago).UnixNano()}
	}
	service := mock.JobWithID("web")
	batch := mock.JobWithID("report")
	batch.Type = structs.JobTypeBatch
	done := &structs.Allocation{DesiredStatus: structs.AllocDesiredStatusStop, ClientStatus: structs.AllocClientStatusComplete}
	running := &structs.Allocation{DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusRunning}
	cases := []struct {
		name   string
		eval   *structs.Evaluation
		job    *structs.Job
		allocs []*structs.Allocation
		force  bool
		want   bool
	}{
		{name: "purged job's finished eval past the threshold", eval: eval(structs.EvalStatusComplete, 2*time.Hour), want: true},
		{name: "service job's finished eval past the threshold", eval: eval(structs.EvalStatusFailed, 2*time.Hour), job: service, allocs: []*structs.Allocation{done}, want: true},
		{name: "finished within the threshold", eval: eval(structs.EvalStatusComplete, time.Minute)},
		{name: "forced ignores the threshold", eval: eval(structs.EvalStatusCancelled, time.Minute), force: true, want: true},
		{name: "pending eval is kept", eval: eval(structs.EvalStatusPending, 2*time.Hour), force: true},
		{name: "blocked eval is kept", eval: eval(structs.EvalStatusBlocked, 2*time.Hour), force: true},
		{name: "an allocation it placed still runs", eval: eval(structs.EvalStatusComplete, 2*time.Hour), job: service, allocs: []*structs.Allocation{running}, force: true},
		{name: "batch job's evals stay with the job", eval: eval(structs.EvalStatusComplete, 2*time.Hour), job: batch, force: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, evalGCEligible(tc.eval, tc.job, tc.allocs, time.Hour, now, tc.force))
		})
	}
}

// The soak's churn: jobs registered and purged over and over. Each cycle leaves finished
// evaluations behind; the scheduled GC must bring the count back to zero, or the state (and
// the servers' memory) grows with every job ever run. The threshold keeps recent ones.
func TestEvalGC_CollectsPurgedJobsEvaluations(t *testing.T) {
	// A scheduler finishes the deregistrations' evaluations, as on a real server.
	srv := testServer(t, func(c *Config) { c.NumSchedulers = 1; c.EvalGCThreshold = time.Hour })
	const cycles = 20
	for i := 0; i < cycles; i++ {
		id := fmt.Sprintf("churn-%d", i)
		registerJob(t, srv, "", mock.JobWithID(id))
		var dr structs.JobDeregisterResponse
		must.NoError(t, srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{JobID: id, Purge: true,
			WriteRequest: structs.WriteRequest{Namespace: "default"}}, &dr))
	}
	finished := func() int {
		evals, err := srv.State().Evals(nil, structs.AllNamespacesSentinel, "")
		must.NoError(t, err)
		n := 0
		for _, e := range evals {
			if e.TerminalStatus() {
				n++
			}
		}
		must.Eq(t, len(evals), n, must.Sprint("every evaluation of a purged job ends"))
		return n
	}
	waitFor(t, 10*time.Second, func() bool {
		evals, err := srv.State().Evals(nil, structs.AllNamespacesSentinel, "")
		must.NoError(t, err)
		for _, e := range evals {
			if !e.TerminalStatus() {
				return false
			}
		}
		return true
	})
	must.GreaterEq(t, cycles, finished())

	// Within the threshold: kept.
	srv.collectGarbage()
	must.GreaterEq(t, cycles, finished())

	// Past it: all gone, through Raft (every server's state drops them).
	srv.config.EvalGCThreshold = time.Nanosecond
	srv.collectGarbage()
	must.Zero(t, finished())
}
