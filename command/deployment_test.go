package command

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

const deploymentsBody = `[{"ID":"5e1f2a3b-0000-4000-8000-000000000001","Namespace":"default","JobID":"web","JobVersion":1,
 "Status":"running","StatusDescription":"Deployment is running but requires manual promotion","CreateIndex":20,
 "TaskGroups":{"web":{"AutoRevert":true,"Promoted":false,"DesiredTotal":3,"DesiredCanaries":1,"PlacedAllocs":1,
  "HealthyAllocs":1,"UnhealthyAllocs":0,"RequireProgressBy":"0001-01-01T00:00:00Z"}}}]`

const updateResponse = `{"EvalID":"e0000000-0000-4000-8000-000000000001","EvalCreateIndex":30,"DeploymentModifyIndex":30,"Index":30}`

func TestDeploymentCommands(t *testing.T) {
	depID := "5e1f2a3b-0000-4000-8000-000000000001"
	evalLine := "e0000000-0000-4000-8000-000000000001\n"
	cases := []struct {
		name     string
		args     []string
		refuse   bool // the agent refuses the promotion
		wantCode int
		wantOut  string
		wantErr  string
		// wantReq is the write the command must send, "METHOD /path", and fields of its body.
		wantReq  string
		wantBody map[string]any
	}{
		{name: "list", args: []string{"deployment", "list"},
			wantOut: "ID        Job ID  Job Version  Status   Description\n" +
				"5e1f2a3b  web     1            running  Deployment is running but requires manual promotion\n"},
		{name: "status by prefix", args: []string{"deployment", "status", "5e1f"},
			wantOut: "ID          = " + depID + "\nJob ID      = web\nJob Version = 1\nStatus      = running\n" +
				"Description = Deployment is running but requires manual promotion\n\nDeployed\n" +
				"Task Group  Auto Revert  Promoted  Desired  Canaries  Placed  Healthy  Unhealthy  Progress Deadline\n" +
				"web         true         false     3        1         1       1        0          -\n"},
		{name: "status of nothing", args: []string{"deployment", "status", "ffff"}, wantCode: 1,
			wantErr: `No deployment(s) with prefix or ID "ffff" found`},
		{name: "promote all", args: []string{"deployment", "promote", "-detach", "5e1f"},
			wantOut: "Deployment \"" + depID + "\" promoted\n" + evalLine,
			wantReq: "PUT /v1/deployment/promote/" + depID, wantBody: map[string]any{"DeploymentID": depID, "All": true}},
		{name: "promote a group", args: []string{"deployment", "promote", "-detach", "-group", "web", "5e1f"},
			wantOut: "Deployment \"" + depID + "\" promoted\n" + evalLine,
			wantReq: "PUT /v1/deployment/promote/" + depID, wantBody: map[string]any{"DeploymentID": depID, "Groups": []any{"web"}}},
		{name: "fail", args: []string{"deployment", "fail", "-detach", depID},
			wantOut: "Deployment \"" + depID + "\" failed\n" + evalLine, wantReq: "PUT /v1/deployment/fail/" + depID},
		{name: "pause", args: []string{"deployment", "pause", "-detach", depID},
			wantOut: "Deployment \"" + depID + "\" paused\n" + evalLine,
			wantReq: "PUT /v1/deployment/pause/" + depID, wantBody: map[string]any{"DeploymentID": depID, "Pause": true}},
		{name: "resume", args: []string{"deployment", "resume", "-detach", depID},
			wantOut: "Deployment \"" + depID + "\" resumed\n" + evalLine,
			wantReq: "PUT /v1/deployment/pause/" + depID, wantBody: map[string]any{"DeploymentID": depID, "Pause": false}},
		{name: "job promote", args: []string{"job", "promote", "-detach", "web"},
			wantOut: "Deployment \"" + depID + "\" promoted\n" + evalLine,
			wantReq: "PUT /v1/deployment/promote/" + depID, wantBody: map[string]any{"DeploymentID": depID, "All": true}},
		{name: "promote refused", args: []string{"deployment", "promote", "-detach", "-group", "db", "5e1f"}, refuse: true,
			wantCode: 1, wantErr: `Error promoting deployment: Unexpected response code: 400 (Deployment does not include task group "db")`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			promoteRoute := jsonBody(updateResponse)
			if tc.refuse {
				promoteRoute = textError(400, `Deployment does not include task group "db"`)
			}
			fa := newFakeAgent(t, map[string]route{
				"GET /v1/deployments":                 prefixed(deploymentsBody),
				"GET /v1/jobs":                        jsonBody(jobListWeb),
				"GET /v1/job/web/deployment":          jsonBody(`{"ID":"` + depID + `","JobID":"web","Status":"running"}`),
				"PUT /v1/deployment/promote/" + depID: promoteRoute,
				"PUT /v1/deployment/fail/" + depID:    jsonBody(updateResponse),
				"PUT /v1/deployment/pause/" + depID:   jsonBody(updateResponse),
			})
			code, out, errOut := runCLI(t, fa.srv.URL, "", tc.args...)
			must.Eq(t, tc.wantCode, code, must.Sprint(errOut))
			if tc.wantCode == 0 {
				must.Eq(t, tc.wantOut, out)
			} else {
				must.StrContains(t, errOut, tc.wantErr)
			}
			if tc.wantReq == "" {
				return
			}
			method, path, _ := strings.Cut(tc.wantReq, " ")
			reqs := fa.find(method, path)
			must.Len(t, 1, reqs)
			if tc.wantBody != nil {
				var got map[string]any
				must.NoError(t, json.Unmarshal([]byte(reqs[0].Body), &got))
				for k, v := range tc.wantBody {
					must.Eq(t, v, got[k], must.Sprintf("body field %s", k))
				}
			}
		})
	}
}

// prefixed answers a deployment list with the items whose ID starts with ?prefix=.
func prefixed(body string) route {
	var all []*api.Deployment
	if err := json.Unmarshal([]byte(body), &all); err != nil {
		panic(err)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		out := []*api.Deployment{}
		for _, d := range all {
			if strings.HasPrefix(d.ID, r.URL.Query().Get("prefix")) {
				out = append(out, d)
			}
		}
		raw, _ := json.Marshal(out)
		jsonBody(string(raw))(w, r)
	}
}
