package agent

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func matrixJobSubmissionEndpoints() []matrixEndpoint {
	return []matrixEndpoint{
		// The matrix job is registered without a source: an allowed read is a 404.
		{name: "job submission", method: "GET", path: "/v1/job/web/submission?version=0", allow: allowReadJob, okStatus: 404},
	}
}

func TestACLMatrix_JobSubmission(t *testing.T) {
	runACLMatrix(t, matrixJobSubmissionEndpoints(), matrixRows)
}

func TestJobSubmission_ThroughOfficialClient(t *testing.T) {
	ta := NewTestAgent(t, nil)
	c := ta.Client("")
	jobs := c.Jobs()

	_, _, err := jobs.Submission("web", 0, nil)
	must.ErrorContains(t, err, "job source not found")

	for i, src := range []string{"source v0", "source v1"} {
		job := testJob("web")
		job.Meta = map[string]string{"v": src}
		_, _, err := jobs.RegisterOpts(job, &api.RegisterOptions{Submission: &api.JobSubmission{
			Source: src, Format: "hcl2", VariableFlags: map[string]string{"i": src}, Variables: "x = 1",
		}}, nil)
		must.NoError(t, err, must.Sprintf("version %d", i))
	}
	for i, src := range []string{"source v0", "source v1"} {
		sub, qm, err := jobs.Submission("web", i, nil)
		must.NoError(t, err)
		must.Positive(t, qm.LastIndex)
		must.Eq(t, src, sub.Source)
		must.Eq(t, "hcl2", sub.Format)
		must.Eq(t, map[string]string{"i": src}, sub.VariableFlags)
		must.Eq(t, "x = 1", sub.Variables)
	}
	_, _, err = jobs.Submission("web", 0, &api.QueryOptions{Namespace: "other"})
	must.ErrorContains(t, err, "404")

	res := doHTTP(t, ta, "GET", "/v1/job/web/submission?version=x", nil, nil)
	must.Eq(t, 400, res.status)
	must.StrContains(t, res.body, "version")

	_, _, err = jobs.Deregister("web", true, nil)
	must.NoError(t, err)
	_, _, err = jobs.Submission("web", 1, nil)
	must.ErrorContains(t, err, "job source not found")
}
