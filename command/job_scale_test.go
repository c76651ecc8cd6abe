package command

import (
	"encoding/json"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func TestJobScale(t *testing.T) {
	const twoGroups = `{"ID":"web","Name":"web","Namespace":"default","Type":"service",` +
		`"TaskGroups":[{"Name":"web","Count":1},{"Name":"cache","Count":1}]}`
	cases := []struct {
		name      string
		args      []string
		job       string
		wantCode  int
		wantGroup string
		wantCount int64
		wantOut   string
		wantErr   string
	}{
		{
			name:      "group given",
			args:      []string{"-detach", "web", "cache", "3"},
			job:       twoGroups,
			wantGroup: "cache",
			wantCount: 3,
			wantOut: "Scaled task group \"cache\" of job \"web\" to 3\n" +
				"Evaluation ID: e9795683-3a8b-1f8b-5105-685a8c9b7793\n",
		},
		{
			name:      "single group inferred",
			args:      []string{"-detach", "web", "0"},
			job:       jobReadWeb,
			wantGroup: "web",
			wantCount: 0,
			wantOut: "Scaled task group \"web\" of job \"web\" to 0\n" +
				"Evaluation ID: e9795683-3a8b-1f8b-5105-685a8c9b7793\n",
		},
		{
			name:     "several groups need a name",
			args:     []string{"-detach", "web", "2"},
			job:      twoGroups,
			wantCode: 1,
			wantErr:  "Job \"web\" has 2 task groups; name the group to scale\n",
		},
		{
			name:     "negative count",
			args:     []string{"web", "web", "-1"},
			job:      jobReadWeb,
			wantCode: 1,
			wantErr:  "Invalid count \"-1\": must be a non-negative integer\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fa := newFakeAgent(t, map[string]route{
				"GET /v1/jobs":          jsonBody(jobListWeb),
				"GET /v1/job/web":       jsonBody(tc.job),
				"PUT /v1/job/web/scale": jsonBody(registerResponse),
			})
			code, out, errOut := runCLI(t, fa.srv.URL, "", append([]string{"job", "scale"}, tc.args...)...)
			must.Eq(t, tc.wantCode, code, must.Sprint(errOut))
			must.Eq(t, tc.wantOut, out)
			must.Eq(t, tc.wantErr, errOut)

			scales := fa.find("PUT", "/v1/job/web/scale")
			if tc.wantCode != 0 {
				must.Len(t, 0, scales)
				return
			}
			must.Len(t, 1, scales)
			var req api.ScalingRequest
			must.NoError(t, json.Unmarshal([]byte(scales[0].Body), &req))
			must.Eq(t, tc.wantGroup, req.Target["Group"])
			must.Eq(t, tc.wantCount, *req.Count)
		})
	}
}
