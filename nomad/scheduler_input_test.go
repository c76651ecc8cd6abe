package nomad

import (
	"sync"
	"testing"

	"github.com/nomadfork/nomad/scheduler"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestJobPlan_PlacesAsTheWorkerOnAPoolsAlgorithm: on a node pool whose scheduler algorithm
// (spread) overrides the cluster's (binpack), a plan places where the registration's
// evaluation then does, both ranking nodes by the pool's algorithm: Job.Plan and the worker
// build their input through one function.
func TestJobPlan_PlacesAsTheWorkerOnAPoolsAlgorithm(t *testing.T) {
	type computed struct{ algorithm, node string }
	var mu sync.Mutex
	var seen []computed
	orig := compute
	t.Cleanup(func() { compute = orig })
	compute = func(in scheduler.Input) *scheduler.Plan {
		plan := orig(in)
		if in.Job != nil && in.Job.ID == "second" && len(plan.Place) > 0 {
			mu.Lock()
			seen = append(seen, computed{in.Algorithm, plan.Place[0].NodeID})
			mu.Unlock()
		}
		return plan
	}
	srv := testServer(t, func(c *Config) { c.NumSchedulers = 1; c.SchedulerAlgorithm = structs.SchedulerAlgorithmBinpack })
	var gr structs.GenericResponse
	must.NoError(t, srv.Endpoints.NodePool.UpsertNodePools(&structs.NodePoolUpsertRequest{
		NodePools: []*structs.NodePool{{Name: "wide",
			SchedulerConfiguration: &structs.NodePoolSchedulerConfiguration{SchedulerAlgorithm: structs.SchedulerAlgorithmSpread}}},
	}, &gr))
	inPool := func(id string) *structs.Node {
		n := sizedNode(id, 1000)
		n.NodePool = "wide"
		return n
	}
	poolJob := func(id string, memMB int) *structs.Job {
		job := memJob(id, 1, memMB)
		job.NodePool = "wide"
		return job
	}

	// n1 is busy, n2 empty: bin packing would pick n1, spread picks n2.
	registerNode(t, srv, inPool("n1"), "")
	defer keepAlive(srv, "n1")()
	evalDone(t, srv, registerJob(t, srv, "", poolJob("first", 500)).EvalID)
	registerNode(t, srv, inPool("n2"), "")
	defer keepAlive(srv, "n2")()

	var planned structs.JobPlanResponse
	must.NoError(t, srv.Endpoints.Job.Plan(&structs.JobPlanRequest{Job: poolJob("second", 100),
		WriteRequest: structs.WriteRequest{Namespace: structs.DefaultNamespace}}, &planned))
	must.Eq(t, 1, planned.Annotations.DesiredTGUpdates["web"].Place)
	mu.Lock()
	must.Eq(t, []computed{{structs.SchedulerAlgorithmSpread, "n2"}}, seen, must.Sprint("the plan ranks by the pool's algorithm"))
	mu.Unlock()

	evalDone(t, srv, registerJob(t, srv, "", poolJob("second", 100)).EvalID)
	placed := liveAllocs(t, srv, "second")
	must.Len(t, 1, placed)
	must.Eq(t, "n2", placed[0].NodeID, must.Sprint("the evaluation places where the plan said"))
	mu.Lock()
	defer mu.Unlock()
	must.Len(t, 2, seen)
	must.Eq(t, seen[0], seen[1])
}
