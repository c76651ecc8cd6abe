package nomad

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// A plan is computed as under the deployment its registration would start, so its
// annotations are the scheduler's desired changes for this step, as upstream's: a rolling
// update replaces max_parallel allocations and leaves the rest (ignore), canaries are counted
// as canaries, and the diff's updates say the same.
func TestJobPlan_AnnotationsFollowTheDeployment(t *testing.T) {
	srv := testServer(t, func(c *Config) { c.NumSchedulers = 1 })
	registerNode(t, srv, sizedNode("n1", 4000), "")
	defer keepAlive(srv, "n1")()
	evalDone(t, srv, registerJob(t, srv, "", memJob("roll", 3, 64)).EvalID)
	must.Len(t, 3, liveAllocs(t, srv, "roll"))

	plan := func(job *structs.Job) *api.DesiredUpdates {
		t.Helper()
		var out structs.JobPlanResponse
		must.NoError(t, srv.Endpoints.Job.Plan(&structs.JobPlanRequest{Job: job, Diff: true,
			WriteRequest: structs.WriteRequest{Namespace: structs.DefaultNamespace}}, &out))
		u := out.Annotations.DesiredTGUpdates["web"]
		must.NotNil(t, u)
		must.Eq(t, updateCounts(u), out.Diff.TaskGroups[0].Updates)
		return u
	}
	changed := func(canary int) *structs.Job {
		job := memJob("roll", 3, 64)
		job.TaskGroups[0].Tasks[0].Config = map[string]any{"command": "/bin/sleep", "args": []any{"601"}}
		job.TaskGroups[0].Update.Canary = new(canary)
		return job
	}

	rolling := plan(changed(0))
	must.Eq(t, api.DesiredUpdates{DestructiveUpdate: 1, Ignore: 2}, *rolling)

	canary := plan(changed(1))
	must.Eq(t, api.DesiredUpdates{Canary: 1, Ignore: 3}, *canary)
	must.Eq(t, map[string]uint64{structs.UpdateTypeCanary: 1, structs.UpdateTypeIgnore: 3}, updateCounts(canary))

	// Nothing of a plan is stored: no deployment of the planned versions.
	d, err := srv.State().LatestDeploymentByJob(nil, structs.DefaultNamespace, "roll")
	must.NoError(t, err)
	must.NotNil(t, d)
	must.Eq(t, uint64(0), d.JobVersion)
}
