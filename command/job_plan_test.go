package command

import (
	"encoding/json"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

const planScaleUp = `{"JobModifyIndex":14,"Diff":{"Type":"Edited","ID":"example","TaskGroups":[` +
	`{"Type":"Edited","Name":"web","Fields":[{"Type":"Edited","Name":"Count","Old":"1","New":"3"}],` +
	`"Tasks":[{"Type":"None","Name":"server"}]}]},` +
	`"Annotations":{"DesiredTGUpdates":{"web":{"Place":2,"InPlaceUpdate":1}}},"FailedTGAllocs":null,"CreatedEvals":null}`

// A canary is a placement, and placements that would not fit still count: both exit 1.
const planCanaryFailed = `{"JobModifyIndex":14,"Diff":null,` +
	`"Annotations":{"DesiredTGUpdates":{"web":{"Canary":1,"Ignore":3}}},` +
	`"FailedTGAllocs":{"web":{"CoalescedFailures":0,"ConstraintFiltered":{"${attr.kernel.name} = linux":2,"${attr.cpu.arch} = arm64":1},` +
	`"DimensionExhausted":{"memory":3,"cpu":1}}},"CreatedEvals":null}`

const planNothing = `{"JobModifyIndex":14,"Diff":null,` +
	`"Annotations":{"DesiredTGUpdates":{"web":{"Ignore":1}}},"FailedTGAllocs":null,"CreatedEvals":null}`

func TestJobPlan(t *testing.T) {
	hcl := writeFile(t, "example.nomad.hcl", exampleHCL)
	cases := []struct {
		name     string
		args     []string
		answer   string
		wantCode int
		wantDiff bool
		wantOut  []string
	}{
		{
			name: "scale up", args: []string{hcl}, answer: planScaleUp, wantCode: 1, wantDiff: true,
			wantOut: []string{"+/- Job: \"example\"", "+/- Count: \"1\" => \"3\"", "- All tasks successfully allocated.",
				"- Task Group \"web\": 2 create, 1 in-place update", "nomad job run -check-index 14 " + hcl},
		},
		{
			name: "canary that would not fit", args: []string{"-diff=false", hcl}, answer: planCanaryFailed, wantCode: 1,
			wantOut: []string{"- WARNING: Failed to place all allocations.\n" +
				"  Task Group \"web\" (failed to place 1 allocation(s)):\n" +
				"    * Constraint \"${attr.cpu.arch} = arm64\": 1 nodes excluded by filter\n" +
				"    * Constraint \"${attr.kernel.name} = linux\": 2 nodes excluded by filter\n" +
				"    * Resources exhausted on 1 nodes: cpu\n" +
				"    * Resources exhausted on 3 nodes: memory\n", "- Task Group \"web\": 1 canary, 3 ignore"},
		},
		{
			name: "nothing changes", args: []string{"-diff=false", hcl}, answer: planNothing, wantCode: 0,
			wantOut: []string{"- Task Group \"web\": 1 ignore", "Job Modify Index: 14"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fa := newFakeAgent(t, map[string]route{"PUT /v1/job/example/plan": jsonBody(tc.answer)})
			code, out, errOut := runCLI(t, fa.srv.URL, "", append([]string{"job", "plan"}, tc.args...)...)
			must.Eq(t, tc.wantCode, code, must.Sprint(errOut))
			for _, want := range tc.wantOut {
				must.StrContains(t, out, want)
			}
			reqs := fa.find("PUT", "/v1/job/example/plan")
			must.Len(t, 1, reqs)
			var body api.JobPlanRequest
			must.NoError(t, json.Unmarshal([]byte(reqs[0].Body), &body))
			must.Eq(t, tc.wantDiff, body.Diff)
			must.Eq(t, "example", *body.Job.ID)
		})
	}

	fa := newFakeAgent(t, map[string]route{"PUT /v1/job/example/plan": textError(400, "group \"web\": bad")})
	code, _, errOut := runCLI(t, fa.srv.URL, "", "job", "plan", hcl)
	must.Eq(t, 255, code)
	must.StrContains(t, errOut, "Error during plan")
}

func TestJobEval(t *testing.T) {
	fa := newFakeAgent(t, map[string]route{
		"GET /v1/jobs":             jsonBody(jobListWeb),
		"PUT /v1/job/web/evaluate": jsonBody(registerResponse),
	})
	code, out, errOut := runCLI(t, fa.srv.URL, "", "job", "eval", "-detach", "-force-reschedule", "web")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "e9795683-3a8b-1f8b-5105-685a8c9b7793\n", out)
	reqs := fa.find("PUT", "/v1/job/web/evaluate")
	must.Len(t, 1, reqs)
	var body api.JobEvaluateRequest
	must.NoError(t, json.Unmarshal([]byte(reqs[0].Body), &body))
	must.True(t, body.EvalOptions.ForceReschedule)
}
