package command

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

const schedulerConfigAnswer = `{"SchedulerConfig":{"SchedulerAlgorithm":"binpack","PreemptionConfig":{"SystemSchedulerEnabled":true},"RejectJobRegistration":false,"ModifyIndex":7},"Index":7}`

func TestOperatorSchedulerGetConfig(t *testing.T) {
	fa := newFakeAgent(t, map[string]route{"GET /v1/operator/scheduler/configuration": jsonBody(schedulerConfigAnswer)})
	code, out, errOut := runCLI(t, fa.srv.URL, "", "operator", "scheduler", "get-config")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, "Scheduler Algorithm           = binpack\n")
	must.StrContains(t, out, "Preemption System Scheduler   = true\n")
	must.StrContains(t, out, "Modify Index                  = 7")
}

func TestOperatorSchedulerSetConfig(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		updated  bool
		wantCode int
		wantOut  string
		wantErr  string
		check    func(t *testing.T, sent api.SchedulerConfiguration, query map[string][]string)
	}{
		{
			name: "changes only what is given", args: []string{"-scheduler-algorithm=spread", "-reject-job-registration"}, updated: true,
			wantOut: "Scheduler configuration updated!\n",
			check: func(t *testing.T, sent api.SchedulerConfiguration, query map[string][]string) {
				must.Eq(t, api.SchedulerAlgorithmSpread, sent.SchedulerAlgorithm)
				must.True(t, sent.RejectJobRegistration)
				must.True(t, sent.PreemptionConfig.SystemSchedulerEnabled, must.Sprint("a setting not given was changed"))
				must.MapNotContainsKey(t, query, "cas")
			},
		},
		{
			name: "false is a value", args: []string{"-preempt-system-scheduler=false"}, updated: true,
			wantOut: "Scheduler configuration updated!\n",
			check: func(t *testing.T, sent api.SchedulerConfiguration, _ map[string][]string) {
				must.False(t, sent.PreemptionConfig.SystemSchedulerEnabled)
				must.Eq(t, api.SchedulerAlgorithmBinpack, sent.SchedulerAlgorithm)
			},
		},
		{
			name: "check index lost", args: []string{"-check-index=3", "-pause-eval-broker"}, updated: false, wantCode: 1,
			wantErr: "Scheduler configuration not updated: its modify index is no longer 3\n",
			check: func(t *testing.T, _ api.SchedulerConfiguration, query map[string][]string) {
				must.Eq(t, []string{"3"}, query["cas"])
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			answer := `{"Updated":false,"Index":8}`
			if tc.updated {
				answer = `{"Updated":true,"Index":8}`
			}
			fa := newFakeAgent(t, map[string]route{
				"GET /v1/operator/scheduler/configuration": jsonBody(schedulerConfigAnswer),
				"PUT /v1/operator/scheduler/configuration": func(w http.ResponseWriter, r *http.Request) { jsonBody(answer)(w, r) },
			})
			code, out, errOut := runCLI(t, fa.srv.URL, "", append([]string{"operator", "scheduler", "set-config"}, tc.args...)...)
			must.Eq(t, tc.wantCode, code, must.Sprint(errOut))
			must.Eq(t, tc.wantOut, out)
			must.Eq(t, tc.wantErr, errOut)
			reqs := fa.find("PUT", "/v1/operator/scheduler/configuration")
			must.SliceLen(t, 1, reqs)
			var sent api.SchedulerConfiguration
			must.NoError(t, json.Unmarshal([]byte(reqs[0].Body), &sent))
			tc.check(t, sent, reqs[0].Query)
		})
	}
}
