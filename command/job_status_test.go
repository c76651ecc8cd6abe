package command

import (
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

const jobReadWeb = `{"Stop":false,"Region":"global","Namespace":"default","ID":"web","ParentID":"",` +
	`"Name":"web","Type":"service","Priority":50,"AllAtOnce":false,"Datacenters":["dc1","dc2"],` +
	`"NodePool":"default","TaskGroups":[{"Name":"web","Count":0,"Tasks":[{"Name":"sleep","Driver":"raw_exec"}]}],` +
	`"Status":"dead","Version":2,"SubmitTime":1796201706140062794,"CreateIndex":14,"ModifyIndex":17,"JobModifyIndex":16}`

const jobSummaryWeb = `{"JobID":"web","Namespace":"default","Summary":{` +
	`"web":{"Queued":0,"Complete":3,"Failed":1,"Running":12,"Starting":0,"Lost":0,"Unknown":0},` +
	`"api-long-name":{"Queued":1,"Complete":0,"Failed":0,"Running":2,"Starting":0,"Lost":0,"Unknown":0}},` +
	`"Children":{"Pending":0,"Running":0,"Dead":0},"CreateIndex":14,"ModifyIndex":14}`

func TestJobStatus_List(t *testing.T) {
	submit := formatUnixNano(1796201706140062794)
	list := `[{"ID":"web","Namespace":"default","Type":"service","Priority":50,"Status":"running",` +
		`"SubmitTime":1796201706140062794},` +
		`{"ID":"batch-reports","Namespace":"default","Type":"batch","Priority":100,"Status":"dead","Stop":true,` +
		`"SubmitTime":1796201706140062794}]`
	cases := []struct {
		name string
		args []string
		body string
		want string
	}{
		{
			name: "table",
			args: []string{"job", "status"},
			body: list,
			want: "ID             Type     Priority  Status          Submit Date\n" +
				"batch-reports  batch    100       dead (stopped)  " + submit + "\n" +
				"web            service  50        running         " + submit + "\n",
		},
		{
			name: "status alias",
			args: []string{"status"},
			body: list,
			want: "ID             Type     Priority  Status          Submit Date\n" +
				"batch-reports  batch    100       dead (stopped)  " + submit + "\n" +
				"web            service  50        running         " + submit + "\n",
		},
		{
			name: "all namespaces adds a column",
			args: []string{"job", "status", "-namespace=*"},
			body: `[{"ID":"web","Namespace":"prod","Type":"service","Priority":50,"Status":"running","SubmitTime":1796201706140062794}]`,
			want: "ID   Namespace  Type     Priority  Status   Submit Date\n" +
				"web  prod       service  50        running  " + submit + "\n",
		},
		{
			name: "empty",
			args: []string{"job", "status"},
			body: `[]`,
			want: "No running jobs\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fa := newFakeAgent(t, map[string]route{"GET /v1/jobs": jsonBody(tc.body)})
			code, out, errOut := runCLI(t, fa.srv.URL, "", tc.args...)
			must.Eq(t, 0, code, must.Sprint(errOut))
			must.Eq(t, tc.want, out)
		})
	}
}

func TestJobStatus_Job(t *testing.T) {
	submit := formatUnixNano(1796201706140062794)
	header := "ID            = web\n" +
		"Name          = web\n" +
		"Submit Date   = " + submit + "\n" +
		"Type          = service\n" +
		"Priority      = 50\n" +
		"Datacenters   = dc1,dc2\n" +
		"Namespace     = default\n" +
		"Node Pool     = default\n" +
		"Status        = dead\n" +
		"Periodic      = false\n" +
		"Parameterized = false\n"
	cases := []struct {
		name       string
		args       []string
		deployment string // the answer of /v1/job/web/deployment; "" = 404
		want       string
	}{
		{
			name:       "with its latest deployment",
			args:       []string{"web"},
			deployment: strings.TrimSuffix(strings.TrimPrefix(deploymentsBody, "["), "]"),
			want: header + "\nSummary\n" +
				"Task Group     Queued  Starting  Running  Failed  Complete  Lost  Unknown\n" +
				"api-long-name  1       0         2        0       0         0     0\n" +
				"web            0       0         12       1       3         0     0\n" +
				"\nLatest Deployment\nID          = 5e1f2a3b\nStatus      = running\n" +
				"Description = Deployment is running but requires manual promotion\n" +
				"\nDeployed\n" +
				"Task Group  Auto Revert  Promoted  Desired  Canaries  Placed  Healthy  Unhealthy  Progress Deadline\n" +
				"web         true         false     3        1         1       1        0          -\n" +
				"\nAllocations\nNo allocations placed\n",
		},
		{
			name:       "no deployment",
			args:       []string{"web"},
			deployment: "null",
			want: header + "\nSummary\n" +
				"Task Group     Queued  Starting  Running  Failed  Complete  Lost  Unknown\n" +
				"api-long-name  1       0         2        0       0         0     0\n" +
				"web            0       0         12       1       3         0     0\n" +
				"\nAllocations\nNo allocations placed\n",
		},
		{
			name: "full",
			args: []string{"web"},
			want: header + "\nSummary\n" +
				"Task Group     Queued  Starting  Running  Failed  Complete  Lost  Unknown\n" +
				"api-long-name  1       0         2        0       0         0     0\n" +
				"web            0       0         12       1       3         0     0\n" +
				"\nAllocations\nNo allocations placed\n",
		},
		{
			name: "short",
			args: []string{"-short", "web"},
			want: header,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			routes := map[string]route{
				"GET /v1/jobs":                jsonBody(jobListWeb),
				"GET /v1/job/web":             jsonBody(jobReadWeb),
				"GET /v1/job/web/summary":     jsonBody(jobSummaryWeb),
				"GET /v1/job/web/allocations": jsonBody(`[]`),
			}
			if tc.deployment != "" {
				routes["GET /v1/job/web/deployment"] = jsonBody(tc.deployment)
			}
			fa := newFakeAgent(t, routes)
			code, out, errOut := runCLI(t, fa.srv.URL, "", append([]string{"job", "status"}, tc.args...)...)
			must.Eq(t, 0, code, must.Sprint(errOut))
			must.Eq(t, tc.want, out)
		})
	}
}

func TestJobStatus_NotFound(t *testing.T) {
	fa := newFakeAgent(t, map[string]route{
		"GET /v1/jobs":    jsonBody(jobListWeb),
		"GET /v1/job/web": textError(404, "job not found"),
	})
	code, _, errOut := runCLI(t, fa.srv.URL, "", "job", "status", "web")
	must.Eq(t, 1, code)
	must.Eq(t, "Error querying job: Unexpected response code: 404 (job not found)\n", errOut)
}
