package command

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

func TestJobProtect(t *testing.T) {
	const denied = `Permission denied: protect-job capability required in namespace "default"`
	cases := []struct {
		name      string
		args      []string
		putResp   route
		wantCode  int
		wantBody  map[string]any // nil: no PUT is sent
		wantOut   string
		wantErr   string
		unprotect bool
	}{
		{
			name:     "protect",
			args:     []string{"-reason", "billing depends on it", "web"},
			wantBody: map[string]any{"Protected": true, "Reason": "billing depends on it"},
			wantOut:  "Job \"web\" protected: billing depends on it\n",
		},
		{
			name:     "a reason is required",
			args:     []string{"web"},
			wantCode: 1,
			wantErr:  "A -reason is required to protect a job\n",
		},
		{
			name:     "denied is shown verbatim",
			args:     []string{"-reason", "x", "web"},
			putResp:  textError(403, denied),
			wantBody: map[string]any{"Protected": true, "Reason": "x"},
			wantCode: 1,
			wantErr:  "Error setting job protection: Unexpected response code: 403 (" + denied + ")\n",
		},
		{
			name:      "unprotect",
			args:      []string{"web"},
			unprotect: true,
			wantBody:  map[string]any{"Protected": false, "Reason": ""},
			wantOut:   "Job \"web\" unprotected\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			put := tc.putResp
			if put == nil {
				put = jsonBody(`{"Index":30}`)
			}
			fa := newFakeAgent(t, map[string]route{
				"GET /v1/jobs":               jsonBody(jobListWeb),
				"PUT /v1/job/web/protection": put,
			})
			cmd := []string{"job", "protect"}
			if tc.unprotect {
				cmd = []string{"job", "unprotect"}
			}
			code, out, errOut := runCLI(t, fa.srv.URL, "", append(cmd, tc.args...)...)
			must.Eq(t, tc.wantCode, code, must.Sprint(errOut))
			must.Eq(t, tc.wantOut, out)
			must.Eq(t, tc.wantErr, errOut)
			puts := fa.find("PUT", "/v1/job/web/protection")
			if tc.wantBody == nil {
				must.Len(t, 0, puts)
				return
			}
			must.Len(t, 1, puts)
			var got map[string]any
			must.NoError(t, json.Unmarshal([]byte(puts[0].Body), &got))
			must.Eq(t, tc.wantBody, got)
		})
	}
}

func TestJobStatus_ShowsProtection(t *testing.T) {
	fa := newFakeAgent(t, map[string]route{
		"GET /v1/jobs":    jsonBody(jobListWeb),
		"GET /v1/job/web": jsonBody(jobReadWeb),
		"GET /v1/job/web/protection": jsonBody(`{"Protected":true,"Reason":"billing depends on it",` +
			`"Actor":{"AccessorID":"7c1c","Name":"olga","Type":"client"},"ModifyTime":1796201706140062794,"ModifyIndex":30}`),
	})
	code, out, errOut := runCLI(t, fa.srv.URL, "", "job", "status", "-short", "web")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, "Parameterized = false\nProtected     = yes: billing depends on it (by olga)\n")

	// An unprotected job shows no row.
	fa = newFakeAgent(t, map[string]route{
		"GET /v1/jobs":               jsonBody(jobListWeb),
		"GET /v1/job/web":            jsonBody(jobReadWeb),
		"GET /v1/job/web/protection": jsonBody(`{"Protected":false,"Reason":"","Actor":null,"ModifyTime":0,"ModifyIndex":0}`),
	})
	code, out, errOut = runCLI(t, fa.srv.URL, "", "job", "status", "-short", "web")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.False(t, strings.Contains(out, "Protected"))
}
