package nomad

import (
	"context"
	"fmt"
	"testing"
	"time"

	metrics "github.com/hashicorp/go-metrics"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/nomad/evalbroker"
	"github.com/nomadfork/nomad/nomad/worker"
	"github.com/nomadfork/nomad/scheduler"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(cond), wait.Timeout(10*time.Second), wait.Gap(10*time.Millisecond)))
}

// TestWorkers_ParallelNeverOverCommit runs two workers through the real server: jobs
// registered together, each wanting most of the one node's memory. Whichever way the
// workers interleave, the node never holds more than fits: one job is placed and the other
// waits in a blocked evaluation with its allocation queued. Then room appears elsewhere and
// the second is placed there.
func TestWorkers_ParallelNeverOverCommit(t *testing.T) {
	srv := testServer(t, func(c *Config) { c.NumSchedulers = 2 })
	registerNode(t, srv, sizedNode("n1", 1000), "")
	defer keepAlive(srv, "n1")()
	a, b := memJob("a", 1, 600), memJob("b", 1, 600)
	ra, rb := registerJob(t, srv, "", a), registerJob(t, srv, "", b)
	evalDone(t, srv, ra.EvalID)
	evalDone(t, srv, rb.EvalID)
	placed := len(liveAllocs(t, srv, "a")) + len(liveAllocs(t, srv, "b"))
	must.Eq(t, 1, placed, must.Sprint("the node was over-committed or nothing was placed"))
	onNode, err := srv.State().AllocsByNode(nil, "n1")
	must.NoError(t, err)
	must.SliceLen(t, 1, onNode)

	registerNode(t, srv, sizedNode("n2", 1000), "")
	defer keepAlive(srv, "n2")()
	waitUntil(t, func() bool { return len(liveAllocs(t, srv, "a"))+len(liveAllocs(t, srv, "b")) == 2 })
	for _, id := range []string{"n1", "n2"} {
		on, err := srv.State().AllocsByNode(nil, id)
		must.NoError(t, err)
		must.SliceLen(t, 1, on, must.Sprintf("node %s", id))
	}
}

// TestWorkers_ParallelPlaceManyJobs: two workers place several jobs, each completely, each
// evaluation complete.
func TestWorkers_ParallelPlaceManyJobs(t *testing.T) {
	srv := testServer(t, func(c *Config) { c.NumSchedulers = 2 })
	for i := range 3 {
		id := fmt.Sprintf("n%d", i)
		registerNode(t, srv, sizedNode(id, 4000), "")
		defer keepAlive(srv, id)()
	}
	var evals []string
	for i := range 6 {
		job := memJob(fmt.Sprintf("job-%d", i), 3, 100)
		evals = append(evals, registerJob(t, srv, "", job).EvalID)
	}
	for i, id := range evals {
		e := evalDone(t, srv, id)
		must.Eq(t, "", e.BlockedEval)
		must.SliceLen(t, 3, liveAllocs(t, srv, fmt.Sprintf("job-%d", i)))
	}
}

// TestWorkers_ConfigChangeAtRuntime: from 0 workers (evaluations wait in the broker) to 2
// through the agent's configuration, the waiting evaluation is processed.
func TestWorkers_ConfigChangeAtRuntime(t *testing.T) {
	srv := testServer(t, nil)
	registerNode(t, srv, sizedNode("n1", 4000), "")
	defer keepAlive(srv, "n1")()
	reply := registerJob(t, srv, "", memJob("web", 2, 100))
	waitUntil(t, func() bool { return srv.evalBroker.Stats().TotalReady == 1 })
	must.NoError(t, srv.SetSchedulerWorkerConfig(WorkerPoolConfig{NumSchedulers: 2, EnabledSchedulers: worker.DefaultEnabledSchedulers}))
	evalDone(t, srv, reply.EvalID)
	must.SliceLen(t, 2, liveAllocs(t, srv, "web"))
}

// TestEvalBroker_DeliveryLimitFailsWithFollowup: an evaluation nacked up to the delivery
// limit is marked failed by the leader, with a delayed follow-up that the broker holds.
func TestEvalBroker_DeliveryLimitFailsWithFollowup(t *testing.T) {
	srv := testServer(t, func(c *Config) {
		c.EvalBroker = evalbroker.Config{DeliveryLimit: 2, InitialNackDelay: -1, SubsequentNackDelay: -1}
		c.EvalFailedFollowupDelay = time.Hour
	})
	waitUntil(t, srv.evalBroker.Enabled)
	reply := registerJob(t, srv, "", mock.Job())
	before := time.Now()
	for range 2 {
		e, token, err := srv.evalBroker.Dequeue(context.Background(), worker.DefaultEnabledSchedulers, 5*time.Second)
		must.NoError(t, err)
		must.NotNil(t, e)
		must.Eq(t, reply.EvalID, e.ID)
		must.NoError(t, srv.evalBroker.Nack(e.ID, token))
	}
	var failed *structs.Evaluation
	waitUntil(t, func() bool {
		failed, _ = srv.State().EvalByID(nil, reply.EvalID)
		return failed != nil && failed.Status == structs.EvalStatusFailed
	})
	must.Eq(t, "evaluation reached its delivery limit (2)", failed.StatusDescription)
	must.NotEq(t, "", failed.NextEval)
	follow, err := srv.State().EvalByID(nil, failed.NextEval)
	must.NoError(t, err)
	must.Eq(t, structs.EvalStatusPending, follow.Status)
	must.Eq(t, "failed-follow-up", follow.TriggeredBy)
	must.Eq(t, failed.ID, follow.PreviousEval)
	must.True(t, follow.WaitUntil.After(before.Add(time.Hour-time.Second)))
	must.True(t, follow.WaitUntil.Before(before.Add(6*time.Hour+time.Minute)))
	// Held until due: nothing is delivered now.
	waitUntil(t, func() bool { return srv.evalBroker.Stats().TotalWaiting == 1 })
	e, _, err := srv.evalBroker.Dequeue(context.Background(), worker.DefaultEnabledSchedulers, 50*time.Millisecond)
	must.NoError(t, err)
	must.Nil(t, e)
}

// TestEvalBroker_FilledOnLeadershipAndEmptiedOnLoss: the broker is disabled and emptied when
// the term ends, and a server that gains leadership fills it from the state's pending
// evaluations (replaying the log happens before, while the broker is off, so only the fill
// can find them).
func TestEvalBroker_FilledOnLeadershipAndEmptiedOnLoss(t *testing.T) {
	dir := t.TempDir()
	srv := testServer(t, func(c *Config) { c.DataDir = dir })
	// The term's duties start just after the leader is ready.
	waitUntil(t, srv.evalBroker.Enabled)
	reply := registerJob(t, srv, "", mock.Job())
	waitUntil(t, func() bool { return srv.evalBroker.Stats().TotalReady == 1 })
	must.NoError(t, srv.Shutdown())
	must.False(t, srv.evalBroker.Enabled())
	must.Eq(t, 0, srv.evalBroker.Stats().TotalReady)

	again := testServer(t, func(c *Config) { c.DataDir = dir })
	waitUntil(t, func() bool { return again.evalBroker.Stats().TotalReady == 1 })
	e, token, err := again.evalBroker.Dequeue(context.Background(), worker.DefaultEnabledSchedulers, time.Second)
	must.NoError(t, err)
	must.NotNil(t, e)
	must.Eq(t, reply.EvalID, e.ID)
	must.NoError(t, again.evalBroker.Ack(e.ID, token))
}

// TestEvalBroker_PausedBySchedulerConfig: PauseEvalBroker disables the broker (no worker
// takes anything) and clearing it enables and refills it.
func TestEvalBroker_PausedBySchedulerConfig(t *testing.T) {
	srv := testServer(t, func(c *Config) { c.NumSchedulers = 1 })
	set := func(pause bool) {
		var reply structs.SchedulerSetConfigurationResponse
		must.NoError(t, srv.Endpoints.Operator.SchedulerSetConfiguration(&structs.SchedulerSetConfigRequest{
			Config: structs.SchedulerConfiguration{SchedulerAlgorithm: structs.SchedulerAlgorithmBinpack, PauseEvalBroker: pause},
		}, &reply))
	}
	set(true)
	waitUntil(t, func() bool { return !srv.evalBroker.Enabled() })
	reply := registerJob(t, srv, "", mock.Job())
	e, err := srv.State().EvalByID(nil, reply.EvalID)
	must.NoError(t, err)
	must.Eq(t, structs.EvalStatusPending, e.Status)
	set(false)
	evalDone(t, srv, reply.EvalID)
}

// TestWorkers_SchedulerErrorFailsOnlyThatEvaluation: with two workers, an evaluation whose
// scheduling fails is failed with the reason, and the other jobs are placed.
func TestWorkers_SchedulerErrorFailsOnlyThatEvaluation(t *testing.T) {
	orig := compute
	t.Cleanup(func() { compute = orig })
	compute = func(in scheduler.Input) *scheduler.Plan {
		if in.Job != nil && in.Job.ID == "bad" {
			panic("boom")
		}
		return orig(in)
	}
	srv := testServer(t, func(c *Config) { c.NumSchedulers = 2 })
	registerNode(t, srv, sizedNode("n1", 4000), "")
	defer keepAlive(srv, "n1")()
	bad := registerJob(t, srv, "", memJob("bad", 1, 100))
	good := registerJob(t, srv, "", memJob("good", 1, 100))
	evalDone(t, srv, good.EvalID)
	var e *structs.Evaluation
	waitUntil(t, func() bool {
		e, _ = srv.State().EvalByID(nil, bad.EvalID)
		return e != nil && e.Status == structs.EvalStatusFailed
	})
	must.StrContains(t, e.StatusDescription, "boom")
	must.SliceLen(t, 1, liveAllocs(t, srv, "good"))
}

// TestWorker_RefusedPlanIsReplannedOnFresherState: another plan commits onto the node this
// worker's plan chose after the worker took its snapshot. The applier refuses the placement,
// the worker refreshes its snapshot and plans again, and the allocation lands on the other
// node; the evaluation completes once, with nothing queued.
func TestWorker_RefusedPlanIsReplannedOnFresherState(t *testing.T) {
	srv := testServer(t, nil)
	registerNode(t, srv, sizedNode("n1", 1000), "")
	registerNode(t, srv, sizedNode("n2", 1000), "")
	filler := memJob("filler", 1, 900)
	_, err := srv.raftApply(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: filler})
	must.NoError(t, err)
	filler, err = srv.State().JobByID(nil, "default", "filler")
	must.NoError(t, err)

	orig := compute
	t.Cleanup(func() { compute = orig })
	calls := 0
	var raced string
	compute = func(in scheduler.Input) *scheduler.Plan {
		p := orig(in)
		if in.Job != nil && in.Job.ID == "web" {
			calls++
			if calls == 1 && len(p.Place) == 1 {
				// Another worker's plan, committed between this one's snapshot and its submit.
				raced = p.Place[0].NodeID
				testPlaceAllocs(t, srv, filler, &structs.Allocation{ID: "filler-1", NodeID: raced, TaskGroup: "web"})
			}
		}
		return p
	}
	reply := registerJob(t, srv, "", memJob("web", 1, 600))
	w := newTestWorker(t, srv)
	must.NoError(t, w.step(context.Background()))

	must.Eq(t, 2, calls)
	must.NotEq(t, "", raced)
	live := liveAllocs(t, srv, "web")
	must.SliceLen(t, 1, live)
	must.NotEq(t, raced, live[0].NodeID)
	e, err := srv.State().EvalByID(nil, reply.EvalID)
	must.NoError(t, err)
	must.Eq(t, structs.EvalStatusComplete, e.Status)
	must.Eq(t, "", e.BlockedEval)
	must.Eq(t, 0, e.QueuedAllocations["web"])
	on, err := srv.State().AllocsByNode(nil, raced)
	must.NoError(t, err)
	must.SliceLen(t, 1, on)
}

// TestEvalBroker_Metrics: the broker's gauges and the plan and worker timers reach the
// process's go-metrics sink under upstream's names.
func TestEvalBroker_Metrics(t *testing.T) {
	sink := metrics.NewInmemSink(10*time.Second, time.Minute)
	conf := metrics.DefaultConfig("nomad")
	conf.EnableHostname, conf.EnableRuntimeMetrics = false, false
	_, err := metrics.NewGlobal(conf, sink)
	must.NoError(t, err)
	t.Cleanup(func() { _, _ = metrics.NewGlobal(metrics.DefaultConfig(""), &metrics.BlackholeSink{}) })

	srv := testServer(t, func(c *Config) { c.NumSchedulers = 1 })
	registerNode(t, srv, sizedNode("n1", 4000), "")
	defer keepAlive(srv, "n1")()
	evalDone(t, srv, registerJob(t, srv, "", memJob("web", 1, 100)).EvalID)
	want := []string{"nomad.nomad.broker.total_ready", "nomad.nomad.broker.total_unacked", "nomad.nomad.broker.total_blocked",
		"nomad.nomad.plan.evaluate", "nomad.nomad.plan.submit", "nomad.nomad.worker.dequeue_eval"}
	waitUntil(t, func() bool {
		seen := map[string]bool{}
		for _, iv := range sink.Data() {
			iv.RLock()
			for k := range iv.Gauges {
				seen[k] = true
			}
			for k := range iv.Samples {
				seen[k] = true
			}
			iv.RUnlock()
		}
		for _, k := range want {
			if !seen[k] {
				return false
			}
		}
		return true
	})
}

// TestEvalBroker_FollowsLeadership: only the leader's broker is enabled and holds the pending
// evaluation (followers apply it too, and their commit hook offers it to a disabled broker);
// when the leader goes, the next leader's broker finds it in the state.
func TestEvalBroker_FollowsLeadership(t *testing.T) {
	servers := testCluster(t, 3, func(c *Config) { c.NumSchedulers = 0 })
	var leader *Server
	waitUntil(t, func() bool { leader = leaderOf(servers); return leader != nil && leader.leaderCaughtUp() })
	reply := registerJob(t, leader, "", mock.Job())
	waitUntil(t, func() bool { return leader.evalBroker.Stats().TotalReady == 1 })
	for _, s := range servers {
		if s == leader {
			continue
		}
		waitUntil(t, func() bool {
			e, _ := s.State().EvalByID(nil, reply.EvalID)
			return e != nil
		})
		must.False(t, s.evalBroker.Enabled())
		must.Eq(t, 0, s.evalBroker.Stats().TotalReady)
	}

	must.NoError(t, leader.Shutdown())
	must.False(t, leader.evalBroker.Enabled())
	var next *Server
	waitUntil(t, func() bool {
		next = leaderOf(servers)
		return next != nil && next != leader && next.evalBroker.Stats().TotalReady == 1
	})
	e, token, err := next.evalBroker.Dequeue(context.Background(), worker.DefaultEnabledSchedulers, time.Second)
	must.NoError(t, err)
	must.NotNil(t, e)
	must.Eq(t, reply.EvalID, e.ID)
	must.NoError(t, next.evalBroker.Ack(e.ID, token))
}
