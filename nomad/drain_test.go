package nomad

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client"
	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/nomad/stream"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// startMockClient runs a client with the mock driver against srv and waits for its node.
func startMockClient(t *testing.T, srv *Server, name string) *client.Client {
	t.Helper()
	rpc, err := client.NewRPCServers([]string{srv.RaftAddr()}, ClientYamuxConfig(), nil, nil)
	must.NoError(t, err)
	t.Cleanup(rpc.Close)
	c, err := client.New(&client.Config{
		Name: name, Datacenter: "dc1", AllocDir: t.TempDir(), Drivers: []drivers.Driver{drivers.Mock{}},
		RetryInterval: 50 * time.Millisecond, MaxQueryTime: time.Second,
	}, rpc)
	must.NoError(t, err)
	t.Cleanup(c.Shutdown)
	select {
	case <-c.Registered():
	case <-time.After(15 * time.Second):
		t.Fatalf("client %s never registered", name)
	}
	return c
}

// runningOn counts the job's allocations that run on each node.
func runningOn(t *testing.T, srv *Server, jobID string) map[string]int {
	t.Helper()
	allocs, err := srv.State().AllocsByJob(nil, structs.DefaultNamespace, jobID)
	must.NoError(t, err)
	out := map[string]int{}
	for _, a := range allocs {
		if a.DesiredStatus == structs.AllocDesiredStatusRun && a.ClientStatus == structs.AllocClientStatusRunning {
			out[a.NodeID]++
		}
	}
	return out
}

// Two real clients with the mock driver: draining the one that runs a service job moves its
// allocations to the other, one at a time, and the drain ends with the node ineligible.
func TestDrain_MovesServiceAllocsToOtherNode(t *testing.T) {
	srv := testCluster(t, 1, func(c *Config) { c.NumSchedulers = 1 })[0]
	waitFor(t, 10*time.Second, srv.LeaderReady)
	a := startMockClient(t, srv, "a")
	b := startMockClient(t, srv, "b")

	// Everything starts on a: b is ineligible while the job is placed.
	_, err := setEligibility(srv, "", b.NodeID(), structs.NodeSchedulingIneligible)
	must.NoError(t, err)
	job := mock.JobWithID("svc")
	tg := job.TaskGroups[0]
	tg.Count = new(2)
	tg.Tasks[0].Driver = "mock_driver"
	tg.Tasks[0].Config = map[string]any{"run_for": "1h"}
	tg.Migrate = &api.MigrateStrategy{MaxParallel: new(1), MinHealthyTime: new(100 * time.Millisecond)}
	registerJob(t, srv, "", job)
	waitFor(t, 20*time.Second, func() bool { return runningOn(t, srv, "svc")[a.NodeID()] == 2 })
	_, err = setEligibility(srv, "", b.NodeID(), structs.NodeSchedulingEligible)
	must.NoError(t, err)

	sub, err := srv.EventBroker().Subscribe(&stream.SubscribeRequest{
		Topics:    map[structs.Topic][]string{structs.TopicNode: {a.NodeID()}},
		Namespace: structs.AllNamespacesSentinel, Index: srv.raft.AppliedIndex(),
	})
	must.NoError(t, err)
	defer sub.Unsubscribe()
	_, err = drainNode(srv, "", a.NodeID(), &api.DrainSpec{Deadline: time.Minute}, false)
	must.NoError(t, err)
	// max_parallel 1: while the allocations move, a and b together never run fewer than one.
	waitFor(t, 30*time.Second, func() bool {
		on := runningOn(t, srv, "svc")
		must.Positive(t, on[a.NodeID()]+on[b.NodeID()])
		node, err := srv.State().NodeByID(nil, a.NodeID())
		must.NoError(t, err)
		return on[b.NodeID()] == 2 && node.DrainStrategy == nil
	})
	node, err := srv.State().NodeByID(nil, a.NodeID())
	must.NoError(t, err)
	must.False(t, node.Drain)
	must.Eq(t, structs.NodeSchedulingIneligible, node.SchedulingEligibility)
	must.Eq(t, api.DrainStatusComplete, node.LastDrain.Status)
	allocs, err := srv.State().AllocsByNode(nil, a.NodeID())
	must.NoError(t, err)
	must.SliceLen(t, 2, allocs)
	for _, alloc := range allocs {
		must.Eq(t, structs.AllocDesiredStatusStop, alloc.DesiredStatus)
		must.True(t, migrating(alloc))
	}

	// Subscribers saw the drain start and end as NodeDrain events.
	var statuses []api.DrainStatus
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for len(statuses) == 0 || statuses[len(statuses)-1] != api.DrainStatusComplete {
		batch, err := sub.Next(ctx)
		must.NoError(t, err)
		for _, e := range batch.Events {
			n := e.Payload.(*structs.NodeStreamEvent).Node
			if e.Type == "NodeDrain" && n.LastDrain != nil {
				statuses = append(statuses, n.LastDrain.Status)
			}
		}
	}
	must.Eq(t, api.DrainStatusDraining, statuses[0])
}

func migrating(a *structs.Allocation) bool {
	return a.DesiredTransition.Migrate != nil && *a.DesiredTransition.Migrate
}

// A drain outlives its leader: the next leader's drainer picks it up from the state and, at the
// deadline, marks what is left for migration.
func TestDrain_SurvivesLeaderChange(t *testing.T) {
	servers := testCluster(t, 3)
	leader := leaderOf(servers)
	registerNode(t, leader, mock.Node("n1"), "")
	holdDrain(t, leader, "", "n1")
	_, err := drainNode(leader, "", "n1", &api.DrainSpec{Deadline: 2 * time.Second}, false)
	must.NoError(t, err)
	alloc, err := leader.State().AllocByID(nil, "hold-n1")
	must.NoError(t, err)
	must.False(t, migrating(alloc), must.Sprint("a batch allocation waits for the deadline"))

	must.NoError(t, leader.Shutdown())
	var rest []*Server
	for _, s := range servers {
		if s != leader {
			rest = append(rest, s)
		}
	}
	waitFor(t, 15*time.Second, func() bool { return leaderOf(rest) != nil })
	next := leaderOf(rest)
	waitFor(t, 15*time.Second, func() bool {
		a, err := next.State().AllocByID(nil, "hold-n1")
		must.NoError(t, err)
		return migrating(a)
	})
	evals, err := next.State().EvalsByJob(nil, structs.DefaultNamespace, "hold-n1")
	must.NoError(t, err)
	must.SliceContainsFunc(t, evals, structs.EvalTriggerNodeDrain, func(e *structs.Evaluation, trigger string) bool {
		return e.TriggeredBy == trigger
	})
}
