package agent

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/nomad/nomadtest"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func matrixDeploymentEndpoints() []matrixEndpoint {
	fresh := func(t *testing.T, f *matrixFixture) { f.freshDeployment(t) }
	return []matrixEndpoint{
		{name: "deployments list", method: "GET", path: "/v1/deployments", setup: fresh, allow: allowReadJob},
		{name: "deployment read", method: "GET", path: "/v1/deployment/{deployment}", setup: fresh, allow: allowReadJob},
		{name: "deployment allocations", method: "GET", path: "/v1/deployment/allocations/{deployment}", setup: fresh, allow: allowReadJob},
		{name: "deployment fail", method: "PUT", path: "/v1/deployment/fail/{deployment}", setup: fresh, allow: allowSubmit,
			check: func(t *testing.T, f *matrixFixture) { f.deploymentStatus(t, structs.DeploymentStatusFailed) }},
		{name: "deployment pause", method: "PUT", path: "/v1/deployment/pause/{deployment}", body: `{"Pause":true}`, setup: fresh,
			allow: allowSubmit, check: func(t *testing.T, f *matrixFixture) { f.deploymentStatus(t, structs.DeploymentStatusPaused) }},
		{name: "deployment promote", method: "PUT", path: "/v1/deployment/promote/{deployment}", body: `{"All":true}`, setup: fresh,
			allow: allowSubmit, check: func(t *testing.T, f *matrixFixture) { f.deploymentPromoted(t) }},
		{name: "deployment allocation health", method: "PUT", path: "/v1/deployment/allocation-health/{deployment}",
			body: `{"HealthyAllocationIDs":["{depAlloc}"]}`, setup: fresh, allow: allowSubmit},
		{name: "deployment unblock", method: "PUT", path: "/v1/deployment/unblock/{deployment}", setup: fresh,
			allow: allowSubmit, okStatus: 400},
		{name: "job promote", method: "PUT", path: "/v1/job/web/promote", setup: fresh, allow: allowSubmit,
			check: func(t *testing.T, f *matrixFixture) { f.deploymentPromoted(t) }},
	}
}

func TestACLMatrix_Deployments(t *testing.T) {
	runACLMatrix(t, matrixDeploymentEndpoints(), matrixRows)
}

// freshDeployment writes a running deployment of "web" with one healthy canary waiting for
// promotion, and waits for the leader's watcher to have made its evaluation for it, so that
// nothing but the cell's request writes while the cell runs.
func (f *matrixFixture) freshDeployment(t *testing.T) {
	t.Helper()
	f.deployments++
	job := f.job(t)
	d := &structs.Deployment{ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", f.deployments),
		Status: structs.DeploymentStatusRunning, StatusDescription: structs.DeploymentDescRunningNeedsPromotion,
		TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 2, DesiredCanaries: 1}}}
	canary := &structs.Allocation{ID: fmt.Sprintf("00000000-0000-4000-9000-%012d", f.deployments),
		Name: structs.AllocName("web", "web", 0), TaskGroup: "web", NodeID: "matrix-node",
		DeploymentStatus: &structs.AllocDeploymentStatus{Canary: true, Healthy: new(true)}}
	nomadtest.UpsertDeployment(t, f.ta.Server(), job, d, canary)
	f.deploymentID, f.deploymentAlloc = d.ID, canary.ID
	waitUntil(t, 5*time.Second, "the watcher's evaluation of the new deployment", func() bool {
		evals, err := f.ta.Server().State().EvalsByJob(nil, structs.DefaultNamespace, "web")
		must.NoError(t, err)
		for _, e := range evals {
			if e.DeploymentID == d.ID {
				return true
			}
		}
		return false
	})
}

func (f *matrixFixture) deploymentStatus(t *testing.T, want string) {
	t.Helper()
	d, err := f.ta.Server().State().DeploymentByID(nil, f.deploymentID)
	must.NoError(t, err)
	must.Eq(t, want, d.Status)
}

func (f *matrixFixture) deploymentPromoted(t *testing.T) {
	t.Helper()
	d, err := f.ta.Server().State().DeploymentByID(nil, f.deploymentID)
	must.NoError(t, err)
	must.True(t, d.TaskGroups["web"].Promoted)
}

// TestDeployments_HTTPAnswers drives the routes with the official client and raw requests:
// the shapes it decodes, and the codes of bad requests.
func TestDeployments_HTTPAnswers(t *testing.T) {
	ta := NewTestAgent(t, nil)
	c := ta.Client("")
	_, _, err := c.Jobs().Register(testJob("web"), nil)
	must.NoError(t, err)
	job, err := ta.Server().State().JobByID(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	d := &structs.Deployment{ID: "11111111-0000-4000-8000-000000000001", Status: structs.DeploymentStatusRunning,
		StatusDescription: structs.DeploymentDescRunningNeedsPromotion,
		TaskGroups:        map[string]*structs.DeploymentState{"web": {DesiredTotal: 2, DesiredCanaries: 1}}}
	canary := &structs.Allocation{ID: "22222222-0000-4000-8000-000000000001", Name: structs.AllocName("web", "web", 0),
		TaskGroup: "web", NodeID: "n1", DeploymentStatus: &structs.AllocDeploymentStatus{Canary: true}}
	nomadtest.UpsertDeployment(t, ta.Server(), job, d, canary)

	list, qm, err := c.Deployments().List(nil)
	must.NoError(t, err)
	must.Len(t, 1, list)
	must.Positive(t, qm.LastIndex)
	must.Eq(t, "web", list[0].JobID)
	must.Eq(t, 1, list[0].TaskGroups["web"].PlacedAllocs)
	must.Eq(t, []string{canary.ID}, list[0].TaskGroups["web"].PlacedCanaries)
	running, _, err := c.Deployments().List(&api.QueryOptions{Filter: `Status == "running"`})
	must.NoError(t, err)
	must.Len(t, 1, running)
	failed, _, err := c.Deployments().List(&api.QueryOptions{Filter: `Status == "failed"`})
	must.NoError(t, err)
	must.Len(t, 0, failed)
	prefixed, _, err := c.Deployments().PrefixList("1111")
	must.NoError(t, err)
	must.Len(t, 1, prefixed)
	none, _, err := c.Deployments().PrefixList("ffff")
	must.NoError(t, err)
	must.Len(t, 0, none)

	info, _, err := c.Deployments().Info(d.ID, nil)
	must.NoError(t, err)
	must.Eq(t, structs.DeploymentStatusRunning, info.Status)
	latest, _, err := c.Jobs().LatestDeployment("web", nil)
	must.NoError(t, err)
	must.Eq(t, d.ID, latest.ID)
	byJob, _, err := c.Jobs().Deployments("web", false, nil)
	must.NoError(t, err)
	must.Len(t, 1, byJob)
	allocs, _, err := c.Deployments().Allocations(d.ID, nil)
	must.NoError(t, err)
	must.Len(t, 1, allocs)
	must.True(t, allocs[0].DeploymentStatus.Canary)

	// The canary's health is unknown: a promotion is refused, naming the group.
	_, _, err = c.Deployments().PromoteAll(d.ID, nil)
	must.ErrorContains(t, err, `400 (Task group "web" has 0/1 healthy allocations)`)
	resp, _, err := c.Deployments().SetAllocHealth(d.ID, []string{canary.ID}, nil, nil)
	must.NoError(t, err)
	must.UUIDv4(t, resp.EvalID)
	resp, _, err = c.Deployments().PromoteGroups(d.ID, []string{"web"}, nil)
	must.NoError(t, err)
	must.UUIDv4(t, resp.EvalID)
	info, _, err = c.Deployments().Info(d.ID, nil)
	must.NoError(t, err)
	must.True(t, info.TaskGroups["web"].Promoted)
	must.Eq(t, structs.DeploymentDescRunning, info.StatusDescription)

	_, _, err = c.Deployments().Pause(d.ID, true, nil)
	must.NoError(t, err)
	info, _, _ = c.Deployments().Info(d.ID, nil)
	must.Eq(t, structs.DeploymentStatusPaused, info.Status)
	_, _, err = c.Deployments().Pause(d.ID, false, nil)
	must.NoError(t, err)
	info, _, _ = c.Deployments().Info(d.ID, nil)
	must.Eq(t, structs.DeploymentStatusRunning, info.Status)
	_, _, err = c.Deployments().Fail(d.ID, nil)
	must.NoError(t, err)
	info, _, _ = c.Deployments().Info(d.ID, nil)
	must.Eq(t, structs.DeploymentStatusFailed, info.Status)
	must.Eq(t, structs.DeploymentDescFailedByUser, info.StatusDescription)

	cases := []struct {
		name       string
		method     string
		path       string
		body       string
		wantStatus int
		wantBody   string
	}{
		{name: "unknown deployment", method: "GET", path: "/v1/deployment/nope", wantStatus: 404, wantBody: "deployment not found"},
		{name: "fail unknown", method: "PUT", path: "/v1/deployment/fail/nope", wantStatus: 404, wantBody: "deployment not found"},
		{name: "fail terminal", method: "PUT", path: "/v1/deployment/fail/" + d.ID, wantStatus: 400, wantBody: "can't fail terminal deployment"},
		{name: "pause terminal", method: "PUT", path: "/v1/deployment/pause/" + d.ID, body: `{"Pause":true}`, wantStatus: 400, wantBody: "can't pause terminal deployment"},
		{name: "body names another deployment", method: "PUT", path: "/v1/deployment/promote/" + d.ID, body: `{"DeploymentID":"other","All":true}`,
			wantStatus: 400, wantBody: "Deployment ID does not match"},
		{name: "bad body", method: "PUT", path: "/v1/deployment/pause/" + d.ID, body: `{"Pause":"yes"}`, wantStatus: 400},
		{name: "wrong method", method: "DELETE", path: "/v1/deployment/" + d.ID, wantStatus: 405, wantBody: "Invalid method"},
		{name: "job without deployments promotes nothing", method: "PUT", path: "/v1/job/other/promote", wantStatus: 404, wantBody: `job "other" has no deployment`},
		{name: "allocations of an unknown deployment", method: "GET", path: "/v1/deployment/allocations/nope", wantStatus: 200, wantBody: "[]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := ta.Server().State().Index("deployment")
			res := doHTTP(t, ta, tc.method, tc.path, strings.NewReader(tc.body), nil)
			must.Eq(t, tc.wantStatus, res.status, must.Sprint(res.body))
			must.StrContains(t, res.body, tc.wantBody)
			if tc.wantStatus >= 400 {
				must.Eq(t, before, ta.Server().State().Index("deployment"), must.Sprint("a refused request writes nothing"))
			}
		})
	}
}

// TestDeployments_RegisterRefusesBadUpdate: a bad update block is a 400 naming the field, and
// nothing is written.
func TestDeployments_RegisterRefusesBadUpdate(t *testing.T) {
	ta := NewTestAgent(t, nil)
	c := ta.Client("")
	cases := []struct {
		name    string
		update  *api.UpdateStrategy
		wantErr string
	}{
		{name: "negative max_parallel", update: &api.UpdateStrategy{MaxParallel: new(-1)},
			wantErr: `group "web": update: max_parallel must not be negative, got -1`},
		{name: "healthy_deadline past progress_deadline", update: &api.UpdateStrategy{HealthyDeadline: new(20 * time.Minute)},
			wantErr: "healthy_deadline (20m0s) must be less than progress_deadline (10m0s)"},
		{name: "auto_promote without canaries", update: &api.UpdateStrategy{AutoPromote: new(true)},
			wantErr: "auto_promote requires a canary count greater than zero"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := testJob("bad")
			job.TaskGroups[0].Update = tc.update
			before := ta.Server().State().Index("jobs")
			_, _, err := c.Jobs().Register(job, nil)
			must.ErrorContains(t, err, "400")
			must.ErrorContains(t, err, tc.wantErr)
			must.Eq(t, before, ta.Server().State().Index("jobs"))
		})
	}
}
