package nomad

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
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

func TestAllocGCEligible(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	// service: at most 2 reschedules an hour, 5s apart; unlimited: the service default.
	service := mock.JobWithID("web")
	service.TaskGroups[0].ReschedulePolicy = &api.ReschedulePolicy{Attempts: new(2), Interval: new(time.Hour),
		Delay: new(5 * time.Second), DelayFunction: new("constant"), Unlimited: new(false)}
	unlimited := mock.JobWithID("api")
	stopped := service.Copy()
	stopped.Stop = true
	batch := mock.BatchJob("report")
	sysbatch := mock.BatchJob("sweep")
	sysbatch.Type = structs.JobTypeSysBatch
	system := mock.SystemJob("agent")
	older := service.Copy()
	older.Version++

	alloc := func(job *structs.Job, status string, ago time.Duration, edit ...func(*structs.Allocation)) *structs.Allocation {
		a := &structs.Allocation{ID: "a1", JobID: job.ID, Job: job, TaskGroup: "web",
			DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: status, ModifyTime: now.Add(-ago).UnixNano()}
		for _, e := range edit {
			e(a)
		}
		return a
	}
	// Two reschedules within the interval use up service's attempts.
	exhausted := func(a *structs.Allocation) {
		a.RescheduleTracker = &api.RescheduleTracker{Events: []*api.RescheduleEvent{
			{RescheduleTime: now.Add(-30 * time.Minute).UnixNano(), PrevAllocID: "p1"},
			{RescheduleTime: now.Add(-20 * time.Minute).UnixNano(), PrevAllocID: "p2"},
		}}
	}
	cases := []struct {
		name     string
		alloc    *structs.Allocation
		job      *structs.Job
		replaced map[string]bool
		active   map[string]bool
		force    bool
		want     bool
	}{
		{name: "complete past the threshold", alloc: alloc(service, structs.AllocClientStatusComplete, 2*time.Hour), job: service, want: true},
		{name: "lost past the threshold", alloc: alloc(service, structs.AllocClientStatusLost, 2*time.Hour), job: service, want: true},
		// A lost allocation's replacement names it (NextAllocation) but is no reschedule of a
		// failure: nothing of its history is waited for.
		{name: "lost and replaced, stopped, past the threshold is collected", job: service, want: true,
			alloc: alloc(service, structs.AllocClientStatusLost, 2*time.Hour, func(a *structs.Allocation) {
				a.DesiredStatus, a.NextAllocation = structs.AllocDesiredStatusStop, "a2"
			})},
		{name: "lost and replaced within the threshold is kept", job: service,
			alloc: alloc(service, structs.AllocClientStatusLost, time.Minute, func(a *structs.Allocation) {
				a.DesiredStatus, a.NextAllocation = structs.AllocDesiredStatusStop, "a2"
			})},
		{name: "complete within the threshold", alloc: alloc(service, structs.AllocClientStatusComplete, time.Minute), job: service},
		{name: "forced ignores the threshold", alloc: alloc(service, structs.AllocClientStatusComplete, time.Minute), job: service, force: true, want: true},
		{name: "running is kept", alloc: alloc(service, structs.AllocClientStatusRunning, 2*time.Hour), job: service, force: true},
		{name: "pending is kept", alloc: alloc(service, structs.AllocClientStatusPending, 2*time.Hour), job: service, force: true},
		{name: "unknown is kept", alloc: alloc(service, structs.AllocClientStatusUnknown, 2*time.Hour), job: service, force: true},
		{name: "stopped but still running on its client is kept", job: service, force: true,
			alloc: alloc(service, structs.AllocClientStatusRunning, 2*time.Hour, func(a *structs.Allocation) { a.DesiredStatus = structs.AllocDesiredStatusStop })},
		{name: "failed with reschedule attempts left is kept", alloc: alloc(service, structs.AllocClientStatusFailed, 2*time.Hour), job: service, force: true},
		{name: "failed waiting for its reschedule delay is kept", alloc: alloc(unlimited, structs.AllocClientStatusFailed, time.Second), job: unlimited, force: true},
		{name: "failed of an older version is kept: it is replaced at once", alloc: alloc(older, structs.AllocClientStatusFailed, 2*time.Hour), job: service, force: true},
		// A reconnected original keeps the link to the replacement it beat; once failed, the
		// scheduler replaces it all the same (only a replacement's tracker counts).
		{name: "failed, linked (NextAllocation) to no replacement of its failure, is kept", job: service, force: true,
			alloc: alloc(service, structs.AllocClientStatusFailed, 2*time.Hour, func(a *structs.Allocation) { a.NextAllocation = "a2" })},
		{name: "failed, linked to the replacement of its failure, is collected", job: service, want: true, replaced: map[string]bool{"a1": true},
			alloc: alloc(service, structs.AllocClientStatusFailed, 2*time.Hour, func(a *structs.Allocation) { a.NextAllocation = "a2" })},
		{name: "failed and replaced (named by its replacement) is collected", alloc: alloc(service, structs.AllocClientStatusFailed, 2*time.Hour),
			job: service, replaced: map[string]bool{"a1": true}, want: true},
		{name: "failed and replaced but within the threshold", alloc: alloc(service, structs.AllocClientStatusFailed, time.Minute),
			job: service, replaced: map[string]bool{"a1": true}},
		{name: "failed with its attempts used up is collected", alloc: alloc(service, structs.AllocClientStatusFailed, 2*time.Hour, exhausted), job: service, want: true},
		{name: "failed and stopped by the servers is collected", job: service, want: true,
			alloc: alloc(service, structs.AllocClientStatusFailed, 2*time.Hour, func(a *structs.Allocation) { a.DesiredStatus = structs.AllocDesiredStatusStop })},
		{name: "failed of a stopped job is collected", alloc: alloc(stopped, structs.AllocClientStatusFailed, 2*time.Hour), job: stopped, want: true},
		{name: "failed of a purged job is collected", alloc: alloc(service, structs.AllocClientStatusFailed, 2*time.Hour), want: true},
		{name: "failed of a system job is collected: it is never rescheduled", alloc: alloc(system, structs.AllocClientStatusFailed, 2*time.Hour), job: system, want: true},
		{name: "failed of a group that is gone is collected", job: service, want: true,
			alloc: alloc(service, structs.AllocClientStatusFailed, 2*time.Hour, func(a *structs.Allocation) { a.TaskGroup = "old" })},
		{name: "of a deployment in progress is kept", job: service, force: true, active: map[string]bool{"d1": true},
			alloc: alloc(service, structs.AllocClientStatusComplete, 2*time.Hour, func(a *structs.Allocation) { a.DeploymentID = "d1" })},
		{name: "of a finished deployment is collected", job: service, want: true, active: map[string]bool{"d2": true},
			alloc: alloc(service, structs.AllocClientStatusComplete, 2*time.Hour, func(a *structs.Allocation) { a.DeploymentID = "d1" })},
		{name: "batch job's allocations stay with the job", alloc: alloc(batch, structs.AllocClientStatusComplete, 2*time.Hour), job: batch, force: true},
		{name: "sysbatch job's allocations stay with the job", alloc: alloc(sysbatch, structs.AllocClientStatusComplete, 2*time.Hour), job: sysbatch, force: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, allocGCEligible(tc.alloc, tc.job, tc.replaced, tc.active, time.Hour, now, tc.force))
		})
	}
}

// reportAllocs sends node n1's report of how allocations stand, as its client would.
func reportAllocs(t *testing.T, srv *Server, status string, allocs ...*structs.Allocation) {
	t.Helper()
	if len(allocs) == 0 {
		return
	}
	update := make([]*structs.Allocation, 0, len(allocs))
	for _, a := range allocs {
		update = append(update, &structs.Allocation{ID: a.ID, ClientStatus: status})
	}
	var reply structs.GenericResponse
	must.NoError(t, srv.Endpoints.Alloc.UpdateFromClient(&structs.AllocUpdateRequest{NodeID: "n1", Alloc: update,
		WriteRequest: structs.WriteRequest{AuthToken: "secret-n1"}}, &reply))
}

func jobSummaryOf(t *testing.T, srv *Server, id string) map[string]structs.TaskGroupSummary {
	t.Helper()
	var reply structs.JobSummaryResponse
	must.NoError(t, srv.Endpoints.Job.Summary(&structs.JobSpecificRequest{JobID: id,
		QueryOptions: structs.QueryOptions{Namespace: structs.DefaultNamespace}}, &reply))
	must.NotNil(t, reply.JobSummary)
	return reply.JobSummary.Summary
}

// A service job that lives on and is updated leaves the allocations of its earlier versions
// behind. The scheduled GC keeps them for the threshold; a forced GC removes every finished
// one through Raft and keeps the one that runs and a failed one its reschedule policy will
// still replace, and the job's summary counts what ran all the same.
func TestAllocGC_CollectsFinishedAllocationsOfLiveJobs(t *testing.T) {
	srv := testServer(t, func(c *Config) { c.NumSchedulers = 1; c.EvalGCThreshold = time.Hour })
	registerNode(t, srv, testNode("n1"), "")
	defer keepAlive(srv, "n1")()

	const versions = 4
	for v := 0; v < versions; v++ {
		job := mock.JobWithID("web")
		job.TaskGroups[0].Tasks[0].Env = map[string]string{"REV": fmt.Sprint(v)} // a destructive update
		registerJob(t, srv, "", job)
		waitFor(t, 10*time.Second, func() bool {
			live := liveAllocs(t, srv, "web")
			return len(live) == 1 && live[0].JobVersion() == uint64(v)
		})
		// The client finishes what the new version stopped and starts the new one.
		all, err := srv.State().AllocsByJob(nil, structs.DefaultNamespace, "web")
		must.NoError(t, err)
		var stopped []*structs.Allocation
		for _, a := range all {
			if a.DesiredStatus == structs.AllocDesiredStatusStop && !a.ClientTerminalStatus() {
				stopped = append(stopped, a)
			}
		}
		reportAllocs(t, srv, structs.AllocClientStatusComplete, stopped...)
		reportAllocs(t, srv, structs.AllocClientStatusRunning, liveAllocs(t, srv, "web")...)
	}
	running := liveAllocs(t, srv, "web")[0]

	// A failed allocation its reschedule policy replaces only in an hour.
	api1 := mock.JobWithID("api")
	api1.TaskGroups[0].ReschedulePolicy = &api.ReschedulePolicy{Attempts: new(3), Interval: new(24 * time.Hour),
		Delay: new(time.Hour), DelayFunction: new("constant"), MaxDelay: new(time.Duration(0)), Unlimited: new(false)}
	registerJob(t, srv, "", api1)
	waitFor(t, 10*time.Second, func() bool { return len(liveAllocs(t, srv, "api")) == 1 })
	failed := liveAllocs(t, srv, "api")[0]
	reportAllocs(t, srv, structs.AllocClientStatusFailed, failed)
	waitFor(t, 10*time.Second, func() bool {
		evals, err := srv.State().EvalsByJob(nil, structs.DefaultNamespace, "api")
		must.NoError(t, err)
		for _, e := range evals {
			if e.TriggeredBy == structs.EvalTriggerAllocFailure && e.TerminalStatus() {
				return true
			}
		}
		return false
	})

	all, err := srv.State().AllocsByJob(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	must.Len(t, versions, all)
	webSummary := jobSummaryOf(t, srv, "web")
	must.Eq(t, structs.TaskGroupSummary{Complete: versions - 1, Running: 1}, webSummary["web"])
	apiSummary := jobSummaryOf(t, srv, "api")
	must.Eq(t, 1, apiSummary["web"].Failed)

	// Within the threshold: kept.
	srv.collectGarbage()
	all, err = srv.State().AllocsByJob(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	must.Len(t, versions, all)

	// Forced: the finished ones go, on every server's state (through Raft).
	var reply structs.GenericResponse
	must.NoError(t, srv.Endpoints.System.GarbageCollect(&structs.WriteRequest{}, &reply))
	all, err = srv.State().AllocsByJob(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	must.Len(t, 1, all)
	must.Eq(t, running.ID, all[0].ID)
	kept, err := srv.State().AllocByID(nil, failed.ID)
	must.NoError(t, err)
	must.NotNil(t, kept, must.Sprint("a failed allocation awaiting its reschedule stays"))
	must.Eq(t, webSummary, jobSummaryOf(t, srv, "web"))
	must.Eq(t, apiSummary, jobSummaryOf(t, srv, "api"))
}
