package command

import (
	"encoding/json"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

const versionsWithDiff = `{"Versions":[
 {"ID":"web","Version":1,"Stable":false,"SubmitTime":1796201706140062794,
  "VersionTag":{"Name":"golden","Description":"known good","TaggedTime":1}},
 {"ID":"web","Version":0,"Stable":true,"SubmitTime":1796201706140062794}],
 "Diffs":[{"Type":"Edited","ID":"web","Fields":null,"Objects":null,"TaskGroups":[
  {"Type":"Edited","Name":"web","Fields":[{"Type":"Edited","Name":"Count","Old":"1","New":"3"}],
   "Tasks":[{"Type":"None","Name":"sleep"}]}]}]}`

func TestJobHistory(t *testing.T) {
	submit := formatUnixNano(1796201706140062794)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{
			name: "plain",
			args: []string{"web"},
			want: "Version         = 1\nStable          = false\nSubmit Date     = " + submit + "\n" +
				"Tag Name        = golden\nTag Description = known good\n\n" +
				"Version     = 0\nStable      = true\nSubmit Date = " + submit + "\n",
		},
		{
			name: "diffs",
			args: []string{"-p", "-version", "1", "web"},
			want: "Version         = 1\nStable          = false\nSubmit Date     = " + submit + "\n" +
				"Tag Name        = golden\nTag Description = known good\nDiff            =\n" +
				"+/- Job: \"web\"\n+/- Task Group: \"web\"\n  +/- Count: \"1\" => \"3\"\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fa := newFakeAgent(t, map[string]route{
				"GET /v1/jobs":             jsonBody(jobListWeb),
				"GET /v1/job/web/versions": jsonBody(versionsWithDiff),
			})
			code, out, errOut := runCLI(t, fa.srv.URL, "", append([]string{"job", "history"}, tc.args...)...)
			must.Eq(t, 0, code, must.Sprint(errOut))
			must.Eq(t, tc.want, out)
		})
	}
}

func TestJobRevert(t *testing.T) {
	cases := []struct {
		name        string
		target      string
		wantVersion uint64
		wantCode    int
	}{
		{name: "by number", target: "0", wantVersion: 0},
		{name: "by tag", target: "golden", wantVersion: 1},
		{name: "unknown tag", target: "silver", wantCode: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fa := newFakeAgent(t, map[string]route{
				"GET /v1/jobs":             jsonBody(jobListWeb),
				"GET /v1/job/web/versions": jsonBody(versionsWithDiff),
				"PUT /v1/job/web/revert":   jsonBody(registerResponse),
			})
			code, out, errOut := runCLI(t, fa.srv.URL, "", "job", "revert", "-detach", "web", tc.target)
			must.Eq(t, tc.wantCode, code, must.Sprint(errOut))
			reverts := fa.find("PUT", "/v1/job/web/revert")
			if tc.wantCode != 0 {
				must.Len(t, 0, reverts)
				return
			}
			must.Eq(t, "e9795683-3a8b-1f8b-5105-685a8c9b7793\n", out)
			must.Len(t, 1, reverts)
			var req api.JobRevertRequest
			must.NoError(t, json.Unmarshal([]byte(reverts[0].Body), &req))
			must.Eq(t, tc.wantVersion, req.JobVersion)
		})
	}
}

func TestJobTag(t *testing.T) {
	cases := []struct {
		name        string
		args        []string
		wantMethod  string
		wantVersion uint64
		wantOut     string
	}{
		{
			name:        "apply to current version",
			args:        []string{"apply", "-name", "golden", "-description", "good", "web"},
			wantMethod:  "PUT",
			wantVersion: 2,
			wantOut:     "Job \"web\" version 2 tagged \"golden\"\n",
		},
		{
			name:        "apply to version 0",
			args:        []string{"apply", "-name", "golden", "-version", "0", "web"},
			wantMethod:  "PUT",
			wantVersion: 0,
			wantOut:     "Job \"web\" version 0 tagged \"golden\"\n",
		},
		{
			name:       "unset",
			args:       []string{"unset", "-name", "golden", "web"},
			wantMethod: "DELETE",
			wantOut:    "Tag \"golden\" removed from job \"web\"\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fa := newFakeAgent(t, map[string]route{
				"GET /v1/jobs":                           jsonBody(jobListWeb),
				"GET /v1/job/web":                        jsonBody(jobReadWeb),
				"PUT /v1/job/web/versions/golden/tag":    jsonBody(`{"Name":"golden"}`),
				"DELETE /v1/job/web/versions/golden/tag": jsonBody(`{}`),
			})
			code, out, errOut := runCLI(t, fa.srv.URL, "", append([]string{"job", "tag"}, tc.args...)...)
			must.Eq(t, 0, code, must.Sprint(errOut))
			must.Eq(t, tc.wantOut, out)
			reqs := fa.find(tc.wantMethod, "/v1/job/web/versions/golden/tag")
			must.Len(t, 1, reqs)
			if tc.wantMethod == "PUT" {
				var req api.TagVersionRequest
				must.NoError(t, json.Unmarshal([]byte(reqs[0].Body), &req))
				must.Eq(t, tc.wantVersion, req.Version)
			}
		})
	}
}

func TestJobInspect(t *testing.T) {
	cases := []struct {
		name        string
		args        []string
		wantVersion uint64
	}{
		{name: "current", args: []string{"web"}, wantVersion: 2},
		{name: "older version", args: []string{"-version", "0", "web"}, wantVersion: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fa := newFakeAgent(t, map[string]route{
				"GET /v1/jobs":             jsonBody(jobListWeb),
				"GET /v1/job/web":          jsonBody(jobReadWeb),
				"GET /v1/job/web/versions": jsonBody(versionsWithDiff),
			})
			code, out, errOut := runCLI(t, fa.srv.URL, "", append([]string{"job", "inspect"}, tc.args...)...)
			must.Eq(t, 0, code, must.Sprint(errOut))
			job, err := jobspecJSON(out)
			must.NoError(t, err)
			must.Eq(t, tc.wantVersion, *job.Version)
		})
	}
}

func TestJobValidate(t *testing.T) {
	good := writeFile(t, "good.nomad.hcl", exampleHCL)
	noTasks := writeFile(t, "bad.json", `{"Job":{"ID":"x","Type":"nope","TaskGroups":[{"Name":"g","Count":-1}]}}`)
	cases := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
		wantErr  []string
	}{
		{name: "valid", args: []string{good}, wantOut: "Job validation successful\n"},
		{
			name:     "invalid",
			args:     []string{noTasks},
			wantCode: 1,
			wantErr: []string{
				"Job validation errors:", `Invalid job type "nope"`,
				`Task group "g" has a negative count`, `Task group "g" has no tasks`,
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "http://127.0.0.1:1", "", append([]string{"job", "validate"}, tc.args...)...)
			must.Eq(t, tc.wantCode, code, must.Sprint(errOut))
			must.Eq(t, tc.wantOut, out)
			for _, w := range tc.wantErr {
				must.StrContains(t, errOut, w)
			}
		})
	}

	// With an agent to ask, its answer counts.
	fa := newFakeAgent(t, map[string]route{"PUT /v1/validate/job": jsonBody(
		`{"DriverConfigValidated":false,"ValidationErrors":["group \"web\": task \"server\": name must not contain control characters"],` +
			`"Error":"1 error occurred","Warnings":""}`)})
	code, _, errOut := runCLI(t, fa.srv.URL, "", "job", "validate", good)
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "name must not contain control characters")
	must.Len(t, 1, fa.find("PUT", "/v1/validate/job"))
}
