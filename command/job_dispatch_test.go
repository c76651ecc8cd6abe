package command

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

const (
	dispatchEvalID  = "8a5b8f1e-1d2c-4e5f-8a9b-0c1d2e3f4a5b"
	dispatchChildID = "tmpl/dispatch-1767225600-0a1b2c3d"
)

func dispatchRoutes() map[string]route {
	return map[string]route{
		"GET /v1/jobs": jsonBody(`[{"ID":"tmpl","Type":"batch","ParameterizedJob":true}]`),
		"PUT /v1/job/tmpl/dispatch": jsonBody(`{"DispatchedJobID":"` + dispatchChildID + `","EvalID":"` + dispatchEvalID +
			`","EvalCreateIndex":12,"JobCreateIndex":12,"Index":12}`),
		"GET /v1/evaluation/" + dispatchEvalID: jsonBody(`{"ID":"` + dispatchEvalID + `","JobID":"` + dispatchChildID + `","Status":"complete"}`),
	}
}

func TestJobDispatch(t *testing.T) {
	payloadFile := writeFile(t, "input.json", `{"n":1}`)
	cases := []struct {
		name        string
		args        []string
		stdin       string
		wantOut     string
		wantMonitor bool
		wantPayload string
		wantMeta    map[string]string
		wantToken   string
	}{
		{
			name:    "detach",
			args:    []string{"-detach", "tmpl"},
			wantOut: "Dispatched Job ID = " + dispatchChildID + "\nEvaluation ID     = " + dispatchEvalID + "\n",
		},
		{
			name:        "meta, token and payload file",
			args:        []string{"-detach", "-meta", "a=1", "-meta", "b=x=y", "-idempotency-token", "tok-1", "tmpl", payloadFile},
			wantOut:     "Dispatched Job ID = " + dispatchChildID + "\nEvaluation ID     = " + dispatchEvalID + "\n",
			wantPayload: `{"n":1}`,
			wantMeta:    map[string]string{"a": "1", "b": "x=y"},
			wantToken:   "tok-1",
		},
		{
			name:        "payload from stdin, then monitor",
			args:        []string{"tmpl", "-"},
			stdin:       "from stdin",
			wantPayload: "from stdin",
			wantMonitor: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fa := newFakeAgent(t, dispatchRoutes())
			ui := cli.NewMockUi()
			cmd := &JobDispatchCommand{Meta: Meta{Ui: ui}, Stdin: strings.NewReader(tc.stdin)}
			code := cmd.Run(append([]string{"-address=" + fa.srv.URL}, tc.args...))
			out := ui.OutputWriter.String()
			must.Eq(t, 0, code, must.Sprint(ui.ErrorWriter.String()))
			if tc.wantMonitor {
				must.StrHasPrefix(t, "Dispatched Job ID = "+dispatchChildID+"\n", out)
				must.StrContains(t, out, `Evaluation "8a5b8f1e" finished with status "complete"`)
			} else {
				must.Eq(t, tc.wantOut, out)
			}
			reqs := fa.find("PUT", "/v1/job/tmpl/dispatch")
			must.Len(t, 1, reqs)
			var body api.JobDispatchRequest
			must.NoError(t, json.Unmarshal([]byte(reqs[0].Body), &body))
			must.Eq(t, tc.wantPayload, string(body.Payload))
			if tc.wantMeta != nil {
				must.Eq(t, tc.wantMeta, body.Meta)
			}
			must.Eq(t, tc.wantToken, strings.Join(reqs[0].Query["idempotency_token"], ","))
		})
	}
}

func TestJobDispatch_Errors(t *testing.T) {
	big := writeFile(t, "big.bin", strings.Repeat("x", 16*1024+1))
	cases := []struct {
		name    string
		args    []string
		routes  map[string]route
		wantErr string
	}{
		{name: "no job", args: nil, wantErr: "This command takes one or two arguments"},
		{name: "too many arguments", args: []string{"tmpl", "a", "b"}, wantErr: "This command takes one or two arguments"},
		{name: "payload too large", args: []string{"tmpl", big}, wantErr: "Payload exceeds maximum size; 16385 > 16384"},
		{name: "missing input file", args: []string{"tmpl", "/no/such/file"}, wantErr: "Error reading input data"},
		{name: "bad meta", args: []string{"-meta", "novalue", "tmpl"}, wantErr: "expected key=value"},
		{
			name: "refused by the server", args: []string{"tmpl"},
			routes: map[string]route{
				"GET /v1/jobs":              jsonBody(`[{"ID":"tmpl"}]`),
				"PUT /v1/job/tmpl/dispatch": textError(400, `Dispatch did not provide required meta keys: "who"`),
			},
			wantErr: `Failed to dispatch job: Unexpected response code: 400 (Dispatch did not provide required meta keys: "who")`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			routes := tc.routes
			if routes == nil {
				routes = dispatchRoutes()
			}
			fa := newFakeAgent(t, routes)
			code, _, errOut := runCLI(t, fa.srv.URL, "", append([]string{"job", "dispatch"}, tc.args...)...)
			must.Eq(t, 1, code)
			must.StrContains(t, errOut, tc.wantErr)
			if tc.routes == nil {
				must.SliceEmpty(t, fa.find("PUT", "/v1/job/tmpl/dispatch"))
			}
		})
	}
}

func TestJobPeriodicForce(t *testing.T) {
	routes := map[string]route{
		"GET /v1/jobs":                         jsonBody(`[{"ID":"nightly","Type":"batch","Periodic":true}]`),
		"PUT /v1/job/nightly/periodic/force":   jsonBody(`{"EvalID":"` + dispatchEvalID + `","EvalCreateIndex":9,"Index":9}`),
		"GET /v1/evaluation/" + dispatchEvalID: jsonBody(`{"ID":"` + dispatchEvalID + `","JobID":"nightly/periodic-1767225600","Status":"complete"}`),
	}
	fa := newFakeAgent(t, routes)
	code, out, errOut := runCLI(t, fa.srv.URL, "", "job", "periodic", "force", "-detach", "nightly")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Force periodic successful\nEvaluation ID: "+dispatchEvalID+"\n", out)

	code, out, errOut = runCLI(t, fa.srv.URL, "", "job", "periodic", "force", "nightly")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, `Evaluation "8a5b8f1e" finished with status "complete"`)
	must.Len(t, 2, fa.find("PUT", "/v1/job/nightly/periodic/force"))

	fa = newFakeAgent(t, map[string]route{
		"GET /v1/jobs":                   jsonBody(`[{"ID":"web"}]`),
		"PUT /v1/job/web/periodic/force": textError(400, "can't force launch non-periodic job"),
	})
	code, _, errOut = runCLI(t, fa.srv.URL, "", "job", "periodic", "force", "web")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, `Error forcing periodic job "web"`)
	must.StrContains(t, errOut, "non-periodic")
}

func TestJobStatus_PeriodicParent(t *testing.T) {
	now := time.Date(2026, 1, 15, 10, 7, 0, 0, time.UTC)
	job := &api.Job{ID: new("nightly"), Type: new("batch"),
		Periodic: &api.PeriodicConfig{Spec: new("0 3 * * *"), TimeZone: new("Asia/Tokyo")}}
	must.Eq(t, "Next Periodic Launch|2026-01-16T03:00:00+09:00 (7h53m0s from now)", nextPeriodicLaunch(job, now))
	stopped := *job
	stopped.Stop = new(true)
	must.Eq(t, "", nextPeriodicLaunch(&stopped, now))
	disabled := *job
	disabled.Periodic = &api.PeriodicConfig{Spec: new("0 3 * * *"), Enabled: new(false)}
	must.Eq(t, "", nextPeriodicLaunch(&disabled, now))

	fa := newFakeAgent(t, map[string]route{
		"GET /v1/jobs": func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("prefix") == "nightly/periodic-" {
				jsonBody(`[{"ID":"nightly/periodic-1767225600","ParentID":"nightly","Status":"dead"},`+
					`{"ID":"nightly/periodic-1767312000","ParentID":"nightly","Status":"running"}]`)(w, r)
				return
			}
			jsonBody(`[{"ID":"nightly","Type":"batch","Periodic":true}]`)(w, r)
		},
		"GET /v1/job/nightly": jsonBody(`{"ID":"nightly","Name":"nightly","Type":"batch","Status":"running",` +
			`"Periodic":{"Spec":"0 3 * * *","TimeZone":"UTC","Enabled":true}}`),
	})
	code, out, errOut := runCLI(t, fa.srv.URL, "", "job", "status", "nightly")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, "Next Periodic Launch = ")
	must.StrContains(t, out, "\nChildren Job Summary\nPending  Running  Dead\n0        1        1\n")
	must.StrContains(t, out, "\nPreviously Launched Jobs\nID                           Status\n"+
		"nightly/periodic-1767225600  dead\nnightly/periodic-1767312000  running\n")
}
