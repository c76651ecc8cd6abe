package command

import (
	"fmt"
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
		// wantNoShutdown: the stop asks the clients to skip shutdown_delay.
		wantNoShutdown bool
		wantOut        string
		wantErr        string
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
			name:           "no shutdown delay",
			args:           []string{"-detach", "-no-shutdown-delay", "web"},
			wantDelete:     true,
			wantPurge:      "false",
			wantNoShutdown: true,
			wantOut:        "9a2dc317-4d4e-f764-427d-b09345a0da21\n",
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
			must.Eq(t, []string{fmt.Sprint(tc.wantNoShutdown)}, dels[0].Query["no_shutdown_delay"])
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

const purgePlanWeb = `{"Namespace":"default","JobID":"web","Protected":false,` +
	`"Removes":{"Versions":[{"Version":2},{"Version":1,"Tag":"golden"},{"Version":0}],` +
	`"Allocations":{"running":2,"complete":1},"Deployments":["d1"],` +
	`"Services":[{"ID":"s1","ServiceName":"web-http","AllocID":"a1"},{"ID":"s2","ServiceName":"web-http","AllocID":"a2"}],` +
	`"ScalingPolicies":["p1"]},` +
	`"Keeps":{"Evaluations":4,"CanceledEvaluations":1,"Variables":["nomad/jobs/web"],"HiddenVariables":1,"Children":[]}}`

// TestJobStop_PurgePlan: a purge without -yes prints the agent's purge plan before asking; a
// protected job is refused without asking or sending the purge; -yes reads no plan.
func TestJobStop_PurgePlan(t *testing.T) {
	const wantPlan = "Purging job \"web\" in namespace \"default\" removes:\n" +
		"  Versions              = 3 (tagged: 1 \"golden\")\n" +
		"  Allocations           = 3 (complete 1, running 2)\n" +
		"  Deployments           = 1\n" +
		"  Service registrations = 2 (web-http)\n" +
		"  Scaling policies      = 1\n" +
		"and leaves in place:\n" +
		"  Evaluations                     = 4 (1 pending canceled)\n" +
		"  Variables under nomad/jobs      = 2 (nomad/jobs/web)\n" +
		"  Periodic or dispatched children = 0\n" +
		"A purge record keeps the last version (\"nomad job purged\", \"nomad job restore\").\n\n"
	routes := func(plan string) map[string]route {
		return map[string]route{
			"GET /v1/jobs":               jsonBody(jobListWeb),
			"GET /v1/job/web/purge-plan": jsonBody(plan),
			"DELETE /v1/job/web":         jsonBody(deregisterResponse),
		}
	}

	fa := newFakeAgent(t, routes(purgePlanWeb))
	code, out, errOut := runCLI(t, fa.srv.URL, "n\n", "job", "stop", "-purge", "web")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, wantPlan+`Are you sure you want to purge job "web"? [y/N]Cancelling job purge`+"\n", out)
	must.Len(t, 0, fa.find("DELETE", "/v1/job/web"))

	fa = newFakeAgent(t, routes(purgePlanWeb))
	code, out, errOut = runCLI(t, fa.srv.URL, "y\n", "job", "stop", "-purge", "-detach", "web")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, wantPlan+`Are you sure you want to purge job "web"? [y/N]9a2dc317-4d4e-f764-427d-b09345a0da21`+"\n", out)
	must.Len(t, 1, fa.find("DELETE", "/v1/job/web"))

	fa = newFakeAgent(t, routes(`{"Namespace":"default","JobID":"web","Protected":true,"ProtectionReason":"billing"}`))
	code, out, errOut = runCLI(t, fa.srv.URL, "y\n", "job", "stop", "-purge", "web")
	must.Eq(t, 1, code)
	must.Eq(t, "", out)
	must.Eq(t, "Job \"web\" is protected from purge (reason: billing); a holder of protect-job must run \"nomad job unprotect\" first\n", errOut)
	must.Len(t, 0, fa.find("DELETE", "/v1/job/web"))

	fa = newFakeAgent(t, routes(purgePlanWeb))
	code, out, errOut = runCLI(t, fa.srv.URL, "", "job", "stop", "-purge", "-yes", "-detach", "web")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "9a2dc317-4d4e-f764-427d-b09345a0da21\n", out)
	must.Len(t, 0, fa.find("GET", "/v1/job/web/purge-plan"))
}
