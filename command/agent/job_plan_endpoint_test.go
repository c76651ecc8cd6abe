package agent

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func matrixJobPlanEndpoints() []matrixEndpoint {
	planBody := mustJSON(&api.JobPlanRequest{Job: testJob("web"), Diff: true})
	validateBody := mustJSON(&api.JobValidateRequest{Job: testJob("web")})
	return []matrixEndpoint{
		// plan-job, which submit-job implies.
		{name: "job plan", method: "PUT", path: "/v1/job/web/plan", body: planBody, allow: allowSubmit},
		{name: "job validate", method: "PUT", path: "/v1/validate/job", body: validateBody, allow: allowReadJob},
	}
}

func TestACLMatrix_JobPlan(t *testing.T) { runACLMatrix(t, matrixJobPlanEndpoints(), matrixRows) }

// TestJobPlan_ThroughOfficialClient plans a job on an agent with a client: new, unchanged,
// scaled up, changed destructively; and checks that planning wrote nothing.
func TestJobPlan_ThroughOfficialClient(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	jobs := c.Jobs()
	store := ta.Server().State()

	job := testJob("web")
	before := store.LatestIndex()
	plan, _, err := jobs.Plan(job, true, nil)
	must.NoError(t, err)
	must.Eq(t, before, store.LatestIndex(), must.Sprint("a plan writes nothing"))
	must.Zero(t, plan.JobModifyIndex)
	must.Eq(t, "Added", plan.Diff.Type)
	must.Eq(t, uint64(1), plan.Annotations.DesiredTGUpdates["web"].Place)
	must.Eq(t, map[string]uint64{"create": 1}, plan.Diff.TaskGroups[0].Updates)
	must.SliceEmpty(t, plan.CreatedEvals)

	resp, _, err := jobs.Register(job, nil)
	must.NoError(t, err)
	allocsIn(t, c, "web", map[string]int{"running": 1})
	stored, _, err := jobs.Info("web", nil)
	must.NoError(t, err)

	cases := []struct {
		name   string
		mutate func(j *api.Job)
		diff   string
		want   api.DesiredUpdates
	}{
		{name: "unchanged", mutate: func(*api.Job) {}, diff: "None", want: api.DesiredUpdates{Ignore: 1}},
		{name: "scaled up", mutate: func(j *api.Job) { j.TaskGroups[0].Count = new(3) }, diff: "Edited",
			want: api.DesiredUpdates{InPlaceUpdate: 1, Place: 2}},
		{name: "changed task", mutate: func(j *api.Job) { j.TaskGroups[0].Tasks[0].Config["args"] = []string{"601"} },
			diff: "Edited", want: api.DesiredUpdates{DestructiveUpdate: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := testJob("web")
			tc.mutate(j)
			plan, wm, err := jobs.Plan(j, true, nil)
			must.NoError(t, err)
			must.Positive(t, wm.LastIndex)
			must.Eq(t, *stored.JobModifyIndex, plan.JobModifyIndex)
			must.Eq(t, tc.diff, plan.Diff.Type)
			must.Eq(t, tc.want, *plan.Annotations.DesiredTGUpdates["web"])

			plan, _, err = jobs.Plan(j, false, nil)
			must.NoError(t, err)
			must.Nil(t, plan.Diff)
		})
	}

	// More than the node can hold: the rest would wait in a blocked evaluation.
	big := testJob("big")
	big.TaskGroups[0].Tasks[0].Resources.MemoryMB = new(1 << 30)
	plan, _, err = jobs.Plan(big, false, nil)
	must.NoError(t, err)
	must.SliceLen(t, 1, plan.CreatedEvals)
	must.Eq(t, "blocked", plan.CreatedEvals[0].Status)
	must.MapContainsKey(t, plan.FailedTGAllocs, "web")

	// The registration's own evaluation is still the job's newest: planning created none.
	evals, _, err := jobs.Evaluations("web", nil)
	must.NoError(t, err)
	for _, e := range evals {
		must.Eq(t, resp.EvalID, e.ID)
	}

	_, _, err = jobs.Plan(&api.Job{ID: new("other"), TaskGroups: []*api.TaskGroup{}}, false, nil)
	must.ErrorContains(t, err, "400")
}

func TestJobValidate_ThroughOfficialClient(t *testing.T) {
	ta := NewTestAgent(t, nil)
	jobs := ta.Client("").Jobs()

	resp, _, err := jobs.Validate(testJob("web"), nil)
	must.NoError(t, err)
	must.SliceEmpty(t, resp.ValidationErrors)
	must.Eq(t, "", resp.Error)

	bad := testJob("web")
	bad.ID = nil
	bad.TaskGroups[0].Tasks[0].Name = "../x"
	resp, _, err = jobs.Validate(bad, nil)
	must.NoError(t, err)
	must.SliceLen(t, 2, resp.ValidationErrors)
	must.StrContains(t, resp.Error, "Missing job ID")
}
