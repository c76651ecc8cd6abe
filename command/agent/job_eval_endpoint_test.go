package agent

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func matrixJobEvalEndpoints() []matrixEndpoint {
	return []matrixEndpoint{
		{name: "job evaluate", method: "PUT", path: "/v1/job/web/evaluate", allow: allowSubmit},
		// dispatch-job, which only `policy = "write"` grants among the rows; "web" is not
		// periodic, so an allowed caller is told so.
		{name: "job periodic force", method: "POST", path: "/v1/job/web/periodic/force", allow: []string{rowWrite, rowManagement}, okStatus: 400},
	}
}

func TestACLMatrix_JobEval(t *testing.T) { runACLMatrix(t, matrixJobEvalEndpoints(), matrixRows) }

func TestJobEvaluate_ThroughOfficialClient(t *testing.T) {
	ta := NewTestAgent(t, nil)
	c := ta.Client("")
	jobs := c.Jobs()

	_, _, err := jobs.ForceEvaluate("web", nil)
	must.ErrorContains(t, err, "job not found")

	_, _, err = jobs.Register(testJob("web"), nil)
	must.NoError(t, err)
	evalID, wm, err := jobs.EvaluateWithOpts("web", api.EvalOptions{ForceReschedule: true}, nil)
	must.NoError(t, err)
	must.UUIDv4(t, evalID)
	must.Positive(t, wm.LastIndex)
	eval, _, err := c.Evaluations().Info(evalID, nil)
	must.NoError(t, err)
	must.Eq(t, "web", eval.JobID)

	periodic := testJob("cron")
	periodic.Type = new("batch")
	periodic.Periodic = &api.PeriodicConfig{Enabled: new(true), Spec: new("*/30 * * * *"), SpecType: new("cron")}
	_, _, err = jobs.Register(periodic, nil)
	must.NoError(t, err)
	_, _, err = jobs.ForceEvaluate("cron", nil)
	must.ErrorContains(t, err, "periodic")
	_, _, err = jobs.PeriodicForce("web", nil)
	must.ErrorContains(t, err, "non-periodic")
	_, _, err = jobs.PeriodicForce("nope", nil)
	must.ErrorContains(t, err, "job not found")

	evalID, _, err = jobs.PeriodicForce("cron", nil)
	must.NoError(t, err)
	eval, _, err = c.Evaluations().Info(evalID, nil)
	must.NoError(t, err)
	must.Eq(t, "periodic-job", eval.TriggeredBy)
	child, _, err := jobs.Info(eval.JobID, nil)
	must.NoError(t, err)
	must.Eq(t, "cron", *child.ParentID)
	must.StrHasPrefix(t, "cron/periodic-", *child.ID)
	must.Nil(t, child.Periodic)
}
