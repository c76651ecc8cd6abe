package nomad

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestJobPurgePlan lists what a purge of web removes and leaves, changes nothing, hides
// variable paths the caller may not list, and needs read-job.
func TestJobPurgePlan(t *testing.T) {
	srv, mgmt := testACLServer(t, nil)
	job := mock.Job()
	job.TaskGroups[0].Scaling = &api.ScalingPolicy{Min: ptr(int64(1)), Max: ptr(int64(5))}
	registerJob(t, srv, mgmt, job)
	job2 := mock.Job()
	job2.Meta = map[string]string{"rev": "2"}
	job2.TaskGroups[0].Scaling = job.TaskGroups[0].Scaling
	registerJob(t, srv, mgmt, job2)
	var tag structs.JobTagResponse
	must.NoError(t, srv.Endpoints.Job.TagVersion(&structs.JobTagRequest{JobID: "web", Name: "golden", Version: ptr(uint64(0)),
		WriteRequest: structs.WriteRequest{AuthToken: mgmt}}, &tag))
	stored, err := srv.State().JobByID(nil, "default", "web")
	must.NoError(t, err)
	testUpsertDeployment(t, srv, stored, &structs.Deployment{ID: "dep-1", Status: "running"},
		&structs.Allocation{ID: "alloc-1", Name: "web.web[0]", TaskGroup: "web", NodeID: "node-1", ClientStatus: structs.AllocClientStatusRunning},
		&structs.Allocation{ID: "alloc-2", Name: "web.web[1]", TaskGroup: "web", NodeID: "node-1", ClientStatus: structs.AllocClientStatusFailed})
	testUpsertServiceRegistrations(t, srv, &structs.ServiceRegistration{ID: "_nomad-task-alloc-1-web-http", ServiceName: "web-http",
		Namespace: "default", NodeID: "node-1", Datacenter: "dc1", JobID: "web", AllocID: "alloc-1", Address: "10.0.0.1", Port: 80})
	for _, path := range []string{"nomad/jobs/web", "nomad/jobs/web/web", "nomad/jobs/web2", "nomad/jobs/web/secret"} {
		_, err := putVariable(srv, mgmt, structs.VarOpSet, newVar(path, map[string]string{"k": "v"}))
		must.NoError(t, err)
	}
	reader := clientToken(t, srv, mgmt, "reader", `namespace "default" {
  policy = "read"
  variables {
    path "nomad/jobs/web" { capabilities = ["list"] }
    path "nomad/jobs/web/web" { capabilities = ["list"] }
  }
}`)

	// The scheduler may write evaluations meanwhile; what a purge would write must not move.
	purgeTables := []string{"jobs", "job_version", "purge_history"}
	indexes := func() []uint64 {
		var out []uint64
		for _, table := range purgeTables {
			out = append(out, srv.State().Index(table))
		}
		return out
	}
	before := indexes()
	var reply structs.JobPurgePlanResponse
	must.NoError(t, srv.Endpoints.Job.PurgePlan(&structs.JobSpecificRequest{JobID: "web",
		QueryOptions: structs.QueryOptions{AuthToken: reader.SecretID}}, &reply))
	must.Eq(t, before, indexes())
	plan := reply.Plan
	must.False(t, plan.Protected)
	must.Eq(t, []structs.JobPurgePlanVersion{{Version: 1}, {Version: 0, Tag: "golden"}}, plan.Removes.Versions)
	must.Eq(t, map[string]int{"running": 1, "failed": 1}, plan.Removes.Allocations)
	must.Eq(t, []string{"dep-1"}, plan.Removes.Deployments)
	must.Len(t, 1, plan.Removes.Services)
	must.Eq(t, "web-http", plan.Removes.Services[0].ServiceName)
	must.Len(t, 1, plan.Removes.ScalingPolicies)
	must.Positive(t, plan.Keeps.Evaluations)
	must.Eq(t, []string{"nomad/jobs/web", "nomad/jobs/web/web"}, plan.Keeps.Variables)
	must.Eq(t, 1, plan.Keeps.HiddenVariables)

	// The plan is read-only: purge-job holders without read-job cannot read it.
	purger := clientToken(t, srv, mgmt, "purger", `namespace "default" { capabilities = ["purge-job"] }`)
	err = srv.Endpoints.Job.PurgePlan(&structs.JobSpecificRequest{JobID: "web",
		QueryOptions: structs.QueryOptions{AuthToken: purger.SecretID}}, &reply)
	must.Eq(t, 403, structs.ErrorCode(err))
	must.StrContains(t, err.Error(), "read-job")

	err = srv.Endpoints.Job.PurgePlan(&structs.JobSpecificRequest{JobID: "nope",
		QueryOptions: structs.QueryOptions{AuthToken: mgmt}}, &reply)
	must.Eq(t, 404, structs.ErrorCode(err))
}

func ptr[T any](v T) *T { return &v }
