package command

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

const registerResponse = `{"EvalID":"e9795683-3a8b-1f8b-5105-685a8c9b7793","EvalCreateIndex":14,` +
	`"JobModifyIndex":14,"Warnings":"","Index":14,"LastContact":0,"KnownLeader":false}`

const exampleHCL = `
variable "count" {
  type    = number
  default = 1
}

job "example" {
  datacenters = ["dc1"]

  group "web" {
    count = var.count

    task "server" {
      driver = "raw_exec"

      config {
        command = "/bin/sleep"
        args    = ["600"]
      }
    }
  }
}
`

const exampleJSON = `{"Job":{"ID":"example","Name":"example","Type":"batch","Datacenters":["dc1"],` +
	`"TaskGroups":[{"Name":"web","Count":2,"Tasks":[{"Name":"server","Driver":"raw_exec"}]}]}}`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	must.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

func TestJobRun(t *testing.T) {
	hcl := writeFile(t, "example.nomad.hcl", exampleHCL)
	js := writeFile(t, "example.json", exampleJSON)

	cases := []struct {
		name      string
		args      []string
		wantCount int
		wantType  string
		enforce   bool
		index     uint64
		wantNS    string
	}{
		{name: "hcl", args: []string{"-detach", hcl}, wantCount: 1},
		{name: "hcl with var", args: []string{"-detach", "-var", "count=3", hcl}, wantCount: 3},
		{name: "json by extension", args: []string{"-detach", js}, wantCount: 2, wantType: "batch"},
		{name: "check index", args: []string{"-detach", "-check-index", "7", hcl}, wantCount: 1, enforce: true, index: 7},
		{name: "check index zero", args: []string{"-detach", "-check-index=0", hcl}, wantCount: 1, enforce: true},
		{name: "namespace flag", args: []string{"-detach", "-namespace", "dev", hcl}, wantCount: 1, wantNS: "dev"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fa := newFakeAgent(t, map[string]route{"PUT /v1/jobs": jsonBody(registerResponse)})
			code, out, errOut := runCLI(t, fa.srv.URL, "", append([]string{"job", "run"}, tc.args...)...)
			must.Eq(t, 0, code, must.Sprint(errOut))
			must.Eq(t, "Job registration successful\nEvaluation ID: e9795683-3a8b-1f8b-5105-685a8c9b7793\n", out)

			reqs := fa.find("PUT", "/v1/jobs")
			must.Len(t, 1, reqs)
			var body api.JobRegisterRequest
			must.NoError(t, json.Unmarshal([]byte(reqs[0].Body), &body))
			must.Eq(t, "example", *body.Job.ID)
			must.Eq(t, tc.wantCount, *body.Job.TaskGroups[0].Count)
			if tc.wantType != "" {
				must.Eq(t, tc.wantType, *body.Job.Type)
			}
			must.Eq(t, tc.enforce, body.EnforceIndex)
			must.Eq(t, tc.index, body.JobModifyIndex)
			if tc.wantNS != "" {
				must.Eq(t, tc.wantNS, *body.Job.Namespace)
				must.Eq(t, []string{tc.wantNS}, reqs[0].Query["namespace"])
			}
		})
	}
}

func TestJobRun_Errors(t *testing.T) {
	hcl := writeFile(t, "example.nomad.hcl", exampleHCL)
	bad := writeFile(t, "bad.nomad.hcl", `job "x" { group "g" {`)

	cases := []struct {
		name    string
		args    []string
		route   route
		wantErr string
	}{
		{name: "no file", args: []string{}, wantErr: "This command takes one argument: <path>\n"},
		{name: "parse error", args: []string{bad}, wantErr: "Error getting job struct: "},
		{name: "bad check index", args: []string{"-check-index", "x", hcl}, wantErr: `Invalid -check-index "x"`},
		{
			name:    "permission denied",
			args:    []string{"-detach", hcl},
			route:   textError(403, "Permission denied: submit-job capability required in namespace \"default\""),
			wantErr: "Error submitting job: Unexpected response code: 403 (Permission denied: submit-job capability required in namespace \"default\")\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			routes := map[string]route{}
			if tc.route != nil {
				routes["PUT /v1/jobs"] = tc.route
			}
			fa := newFakeAgent(t, routes)
			code, _, errOut := runCLI(t, fa.srv.URL, "", append([]string{"job", "run"}, tc.args...)...)
			must.Eq(t, 1, code)
			must.StrHasPrefix(t, tc.wantErr, errOut)
		})
	}
}

func TestJobRun_Monitor(t *testing.T) {
	hcl := writeFile(t, "example.nomad.hcl", exampleHCL)
	fa := newFakeAgent(t, map[string]route{
		"PUT /v1/jobs": jsonBody(registerResponse),
		"GET /v1/evaluation/e9795683-3a8b-1f8b-5105-685a8c9b7793": jsonBody(
			`{"ID":"e9795683-3a8b-1f8b-5105-685a8c9b7793","JobID":"example","Status":"complete"}`),
	})
	code, out, errOut := runCLI(t, fa.srv.URL, "", "job", "run", hcl)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, `Monitoring evaluation "e9795683"`)
	must.StrContains(t, out, `Evaluation triggered by job "example"`)
	must.StrContains(t, out, `Evaluation "e9795683" finished with status "complete"`)
}

func TestJobRun_Output(t *testing.T) {
	hcl := writeFile(t, "example.nomad.hcl", exampleHCL)
	code, out, errOut := runCLI(t, "http://127.0.0.1:1", "", "job", "run", "-output", hcl)
	must.Eq(t, 0, code, must.Sprint(errOut))
	job, err := jobspecJSON(out)
	must.NoError(t, err)
	must.Eq(t, "example", *job.ID)
}

func jobspecJSON(s string) (*api.Job, error) {
	var wrapped struct{ Job *api.Job }
	err := json.Unmarshal([]byte(s), &wrapped)
	return wrapped.Job, err
}

// file() in a job file reads relative to the job file's directory, not the working
// directory, as upstream's CLI does.
func TestJobRun_OutputReadsFilesBesideTheJobFile(t *testing.T) {
	hcl := writeFile(t, "files.nomad.hcl", `job "files" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/true" }
      template {
        data        = file("app.conf.tpl")
        destination = "local/app.conf"
      }
    }
  }
}
`)
	must.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(hcl), "app.conf.tpl"), []byte("listen = 8080\n"), 0o644))
	code, out, errOut := runCLI(t, "http://127.0.0.1:1", "", "job", "run", "-output", hcl)
	must.Eq(t, 0, code, must.Sprint(errOut))
	job, err := jobspecJSON(out)
	must.NoError(t, err)
	must.Eq(t, "listen = 8080\n", *job.TaskGroups[0].Tasks[0].Templates[0].EmbeddedTmpl)
}
