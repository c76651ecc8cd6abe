package command

import (
	"testing"

	"github.com/shoenig/test/must"
)

const jobListWeb = `[{"ID":"web","ParentID":"","Name":"web","Namespace":"default","Datacenters":["dc1"],` +
	`"NodePool":"default","Type":"service","Priority":50,"Periodic":false,"ParameterizedJob":false,` +
	`"Stop":false,"Status":"dead","StatusDescription":"","CreateIndex":14,"ModifyIndex":17,` +
	`"JobModifyIndex":16,"SubmitTime":1796201706140062794}]`

const deregisterResponse = `{"EvalID":"9a2dc317-4d4e-f764-427d-b09345a0da21","EvalCreateIndex":21,` +
	`"JobModifyIndex":21,"VolumeEvalID":"","VolumeEvalIndex":0,"Index":21}`

func TestJobStop(t *testing.T) {
	const denied = `Permission denied: purge-job capability required in namespace "default"`
	cases := []struct {
		name       string
		args       []string
		stdin      string
		deleteResp route
		wantCode   int
		wantDelete bool
		wantPurge  string
		wantOut    string
		wantErr    string
	}{
		{
			name:     "purge declined",
			args:     []string{"-purge", "web"},
			stdin:    "n\n",
			wantOut:  `Are you sure you want to purge job "web"? [y/N]Cancelling job purge` + "\n",
			wantCode: 0,
		},
		{
			name:     "purge empty answer declines",
			args:     []string{"-purge", "web"},
			stdin:    "\n",
			wantOut:  `Are you sure you want to purge job "web"? [y/N]Cancelling job purge` + "\n",
			wantCode: 0,
		},
		{
			name:     "purge unexpected answer",
			args:     []string{"-purge", "web"},
			stdin:    "maybe\n",
			wantOut:  `Are you sure you want to purge job "web"? [y/N]`,
			wantErr:  `Unexpected answer "maybe"` + "\n",
			wantCode: 1,
		},
		{
			name:       "purge confirmed",
			args:       []string{"-purge", "-detach", "web"},
			stdin:      "yes\n",
			wantDelete: true,
			wantPurge:  "true",
			wantOut:    `Are you sure you want to purge job "web"? [y/N]9a2dc317-4d4e-f764-427d-b09345a0da21` + "\n",
		},
		{
			name:       "purge with -yes does not ask",
			args:       []string{"-purge", "-yes", "-detach", "web"},
			wantDelete: true,
			wantPurge:  "true",
			wantOut:    "9a2dc317-4d4e-f764-427d-b09345a0da21\n",
		},
		{
			name:       "plain stop",
			args:       []string{"-detach", "web"},
			wantDelete: true,
			wantPurge:  "false",
			wantOut:    "9a2dc317-4d4e-f764-427d-b09345a0da21\n",
		},
		{
			name:       "flags after the job",
			args:       []string{"web", "-purge", "-yes", "-detach"},
			wantDelete: true,
			wantPurge:  "true",
			wantOut:    "9a2dc317-4d4e-f764-427d-b09345a0da21\n",
		},
		{
			name:       "permission denied is shown verbatim",
			args:       []string{"-purge", "-yes", "-detach", "web"},
			deleteResp: textError(403, denied),
			wantDelete: true,
			wantPurge:  "true",
			wantErr:    "Error deregistering job: Unexpected response code: 403 (" + denied + ")\n",
			wantCode:   1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			del := tc.deleteResp
			if del == nil {
				del = jsonBody(deregisterResponse)
			}
			fa := newFakeAgent(t, map[string]route{
				"GET /v1/jobs":       jsonBody(jobListWeb),
				"DELETE /v1/job/web": del,
			})
			code, out, errOut := runCLI(t, fa.srv.URL, tc.stdin, append([]string{"job", "stop"}, tc.args...)...)
			must.Eq(t, tc.wantCode, code, must.Sprint(errOut))
			must.Eq(t, tc.wantOut, out)
			must.Eq(t, tc.wantErr, errOut)

			dels := fa.find("DELETE", "/v1/job/web")
			if !tc.wantDelete {
				must.Len(t, 0, dels)
				return
			}
			must.Len(t, 1, dels)
			must.Eq(t, []string{tc.wantPurge}, dels[0].Query["purge"])
		})
	}
}

func TestJobStop_UnknownJob(t *testing.T) {
	fa := newFakeAgent(t, map[string]route{"GET /v1/jobs": jsonBody(`[]`)})
	code, _, errOut := runCLI(t, fa.srv.URL, "", "job", "stop", "-purge", "-yes", "nope")
	must.Eq(t, 1, code)
	must.Eq(t, "No job(s) with prefix or ID \"nope\" found\n", errOut)
	must.Len(t, 0, fa.find("DELETE", "/v1/job/nope"))
}
