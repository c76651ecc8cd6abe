package nomad

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/scheduler"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// sizedNode is testNode with 4000 MHz and memMB of memory, on Linux.
func sizedNode(id string, memMB int64) *structs.Node {
	n := testNode(id)
	n.Attributes = map[string]string{"kernel.name": "linux"}
	n.NodeResources = &structs.NodeResources{NodeResources: api.NodeResources{
		Cpu:    api.NodeCpuResources{CpuShares: 4000, TotalCpuCores: 4},
		Memory: api.NodeMemoryResources{MemoryMB: memMB},
		Disk:   api.NodeDiskResources{DiskMB: 10000},
	}}
	return n
}

// memJob is a service job of count allocations of memMB each.
func memJob(id string, count, memMB int) *structs.Job {
	job := mock.JobWithID(id)
	job.TaskGroups[0].Count = new(count)
	job.TaskGroups[0].Tasks[0].Resources = &api.Resources{CPU: new(100), MemoryMB: new(memMB)}
	return job
}

// failedMetric reads an evaluation's FailedTGAllocs entry as the official client decodes it.
func failedMetric(t *testing.T, eval *structs.Evaluation, group string) *api.AllocationMetric {
	t.Helper()
	raw, err := json.Marshal(eval.FailedTGAllocs)
	must.NoError(t, err)
	var out map[string]*api.AllocationMetric
	must.NoError(t, json.Unmarshal(raw, &out))
	must.NotNil(t, out[group])
	return out[group]
}

func evalDone(t *testing.T, srv *Server, id string) *structs.Evaluation {
	t.Helper()
	var eval *structs.Evaluation
	waitFor(t, 5*time.Second, func() bool {
		eval, _ = srv.State().EvalByID(nil, id)
		return eval != nil && eval.Status == structs.EvalStatusComplete
	})
	return eval
}

// TestWorker_MemoryExhaustedBlocksThenNodeJoins is the example through the server: 4
// allocations of 40% of the node's memory place 2; the evaluation names memory as the
// exhausted dimension and leaves a blocked evaluation, which places the other 2 when a node
// joins.
func TestWorker_MemoryExhaustedBlocksThenNodeJoins(t *testing.T) {
	srv := testServer(t, func(c *Config) { c.NumSchedulers = 1 })
	registerNode(t, srv, sizedNode("n1", 1000), "")
	defer keepAlive(srv, "n1")()
	reply := registerJob(t, srv, "", memJob("web", 4, 400))
	eval := evalDone(t, srv, reply.EvalID)
	must.Len(t, 2, liveAllocs(t, srv, "web"))
	must.Eq(t, map[string]int{"web": 2}, eval.QueuedAllocations)
	m := failedMetric(t, eval, "web")
	must.Eq(t, map[string]int{"memory": 1}, m.DimensionExhausted)
	must.Eq(t, 1, m.NodesExhausted)
	must.Eq(t, 1, m.CoalescedFailures)
	must.NotEq(t, "", eval.BlockedEval)
	blocked, err := srv.State().EvalByID(nil, eval.BlockedEval)
	must.NoError(t, err)
	must.Eq(t, structs.EvalStatusBlocked, blocked.Status)
	summary, err := srv.State().JobSummaryByID(nil, "default", "web")
	must.NoError(t, err)
	must.Eq(t, 2, summary.Summary["web"].Queued)

	registerNode(t, srv, sizedNode("n2", 1000), "")
	defer keepAlive(srv, "n2")()
	waitFor(t, 5*time.Second, func() bool { return len(liveAllocs(t, srv, "web")) == 4 })
	perNode := map[string]int{}
	for _, a := range liveAllocs(t, srv, "web") {
		perNode[a.NodeID]++
		must.Eq(t, int64(400), a.AllocatedResources.Tasks["server"].Memory.MemoryMB)
	}
	must.Eq(t, map[string]int{"n1": 2, "n2": 2}, perNode)
	waitFor(t, 5*time.Second, func() bool {
		s, _ := srv.State().JobSummaryByID(nil, "default", "web")
		return s != nil && s.Summary["web"].Queued == 0
	})
}

// TestWorker_BlockedUnblocksWhenAllocationStops: room freed by another job's allocation that
// finishes is given to the blocked evaluation, without any node changing.
func TestWorker_BlockedUnblocksWhenAllocationStops(t *testing.T) {
	srv := testServer(t, func(c *Config) { c.NumSchedulers = 1 })
	registerNode(t, srv, sizedNode("n1", 1000), "")
	defer keepAlive(srv, "n1")()
	evalDone(t, srv, registerJob(t, srv, "", memJob("big", 2, 450)).EvalID)
	must.Len(t, 2, liveAllocs(t, srv, "big"))

	eval := evalDone(t, srv, registerJob(t, srv, "", memJob("more", 1, 400)).EvalID)
	must.Eq(t, map[string]int{"web": 1}, eval.QueuedAllocations)
	must.Len(t, 0, liveAllocs(t, srv, "more"))

	done := liveAllocs(t, srv, "big")[0]
	var gr structs.GenericResponse
	must.NoError(t, srv.Endpoints.Alloc.UpdateFromClient(&structs.AllocUpdateRequest{NodeID: "n1",
		Alloc:        []*structs.Allocation{{ID: done.ID, ClientStatus: structs.AllocClientStatusComplete}},
		WriteRequest: structs.WriteRequest{AuthToken: "secret-n1"}}, &gr))
	waitFor(t, 5*time.Second, func() bool { return len(liveAllocs(t, srv, "more")) == 1 })
	blocked, err := srv.State().EvalByID(nil, eval.BlockedEval)
	must.NoError(t, err)
	must.Eq(t, structs.EvalStatusComplete, blocked.Status)
}

// TestWorker_ConstraintFiltered is the second example: a job for plan9 places nothing
// on a Linux node and the evaluation says which constraint filtered it.
func TestWorker_ConstraintFiltered(t *testing.T) {
	srv := testServer(t, func(c *Config) { c.NumSchedulers = 1 })
	registerNode(t, srv, sizedNode("n1", 1000), "")
	defer keepAlive(srv, "n1")()
	job := memJob("web", 1, 100)
	job.Constraints = []*api.Constraint{{LTarget: "${attr.kernel.name}", RTarget: "plan9", Operand: "="}}
	eval := evalDone(t, srv, registerJob(t, srv, "", job).EvalID)
	must.Len(t, 0, liveAllocs(t, srv, "web"))
	m := failedMetric(t, eval, "web")
	must.Eq(t, map[string]int{"${attr.kernel.name} = plan9": 1}, m.ConstraintFiltered)
	must.Eq(t, 1, m.NodesFiltered)
	must.Eq(t, 1, m.NodesEvaluated)
}

// TestSecurity_SchedulerPanicFailsOneEvaluation: a scheduler that panics on one job's state
// fails that evaluation with the reason, and the worker goes on placing the others.
func TestSecurity_SchedulerPanicFailsOneEvaluation(t *testing.T) {
	orig := compute
	t.Cleanup(func() { compute = orig })
	compute = func(in scheduler.Input) *scheduler.Plan {
		if in.Job != nil && in.Job.ID == "poison" {
			panic("boom")
		}
		return orig(in)
	}
	srv := testServer(t, func(c *Config) { c.NumSchedulers = 1 })
	registerNode(t, srv, sizedNode("n1", 1000), "")
	defer keepAlive(srv, "n1")()
	bad := registerJob(t, srv, "", memJob("poison", 1, 100))
	good := registerJob(t, srv, "", memJob("fine", 1, 100))
	evalDone(t, srv, good.EvalID)
	must.Len(t, 1, liveAllocs(t, srv, "fine"))
	e, err := srv.State().EvalByID(nil, bad.EvalID)
	must.NoError(t, err)
	must.Eq(t, structs.EvalStatusFailed, e.Status)
	must.StrContains(t, e.StatusDescription, "scheduler failed on this evaluation: boom")
}

// TestWorker_SchedulerAlgorithm: bin packing puts a new allocation beside the busy node's,
// the spread algorithm of the server's configuration on the empty node.
func TestWorker_SchedulerAlgorithm(t *testing.T) {
	cases := []struct{ algorithm, want string }{{"", "n1"}, {"binpack", "n1"}, {"spread", "n2"}}
	for _, tc := range cases {
		t.Run("algorithm "+tc.algorithm, func(t *testing.T) {
			srv := testServer(t, func(c *Config) { c.NumSchedulers = 1; c.SchedulerAlgorithm = tc.algorithm })
			registerNode(t, srv, sizedNode("n1", 1000), "")
			defer keepAlive(srv, "n1")()
			evalDone(t, srv, registerJob(t, srv, "", memJob("first", 1, 500)).EvalID)
			registerNode(t, srv, sizedNode("n2", 1000), "")
			defer keepAlive(srv, "n2")()
			evalDone(t, srv, registerJob(t, srv, "", memJob("second", 1, 100)).EvalID)
			placed := liveAllocs(t, srv, "second")
			must.Len(t, 1, placed)
			must.Eq(t, tc.want, placed[0].NodeID)
		})
	}
}
