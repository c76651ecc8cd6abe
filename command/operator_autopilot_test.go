package command

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

const autopilotBody = `{"CleanupDeadServers":true,"LastContactThreshold":"200ms","MaxTrailingLogs":250,"MinQuorum":0,
"ServerStabilizationTime":"10s","EnableRedundancyZones":false,"DisableUpgradeMigration":false,"EnableCustomUpgrades":false,
"CreateIndex":4,"ModifyIndex":7}`

const healthBody = `{"Healthy":%s,"FailureTolerance":0,"Leader":"id-a","Voters":["id-a","id-b"],"Servers":[
{"ID":"id-a","Name":"a.global","Address":"10.0.0.1:4647","SerfStatus":"alive","Leader":true,"LastContact":"0s","LastTerm":2,"LastIndex":40,"Healthy":true,"Voter":true,"StableSince":"2026-01-02T03:04:05Z"},
{"ID":"id-b","Name":"b.global","Address":"10.0.0.2:4647","SerfStatus":"failed","Leader":false,"LastContact":"0s","LastTerm":0,"LastIndex":0,"Healthy":%s,"Voter":true,"StableSince":"2026-01-02T03:04:05Z"}]}`

func TestOperatorCommands(t *testing.T) {
	healthy := jsonBody(sprintf(healthBody, "true", "true"))
	raftConf := jsonBody(`{"Index":0,"Servers":[
{"ID":"id-a","Node":"a.global","Address":"10.0.0.1:4647","Leader":true,"Voter":true,"RaftProtocol":"3"},
{"ID":"id-b","Node":"b.global","Address":"10.0.0.2:4647","Leader":false,"Voter":true,"RaftProtocol":"3"}]}`)
	runCLICases(t, []cliCase{
		{
			name:   "list-peers",
			routes: map[string]route{"GET /v1/operator/raft/configuration": raftConf},
			args:   []string{"operator", "raft", "list-peers"},
			stdout: "Node      ID    Address        State     Voter  RaftProtocol\n" +
				"a.global  id-a  10.0.0.1:4647  leader    true   3\n" +
				"b.global  id-b  10.0.0.2:4647  follower  true   3\n",
		},
		{
			name:   "remove-peer by id",
			routes: map[string]route{"DELETE /v1/operator/raft/peer": jsonBody(`null`)},
			args:   []string{"operator", "raft", "remove-peer", "-peer-id", "id-b"},
			stdout: "Removed peer with id \"id-b\"\n",
		},
		{
			name:   "remove-peer missing",
			routes: map[string]route{"DELETE /v1/operator/raft/peer": textError(404, `address "10.9.9.9:4647" was not found in the Raft configuration`)},
			args:   []string{"operator", "raft", "remove-peer", "-peer-address=10.9.9.9:4647"},
			code:   1,
			stderr: "Error removing peer: Unexpected response code: 404 (address \"10.9.9.9:4647\" was not found in the Raft configuration)\n",
		},
		{
			name:   "remove-peer needs one flag",
			args:   []string{"operator", "raft", "remove-peer", "-peer-id", "a", "-peer-address", "b"},
			code:   1,
			stderr: "Give exactly one of -peer-id and -peer-address\n",
		},
		{
			name:   "get-config",
			routes: map[string]route{"GET /v1/operator/autopilot/configuration": jsonBody(autopilotBody)},
			args:   []string{"operator", "autopilot", "get-config"},
			stdout: "CleanupDeadServers      = true\nLastContactThreshold    = 200ms\nMaxTrailingLogs         = 250\nMinQuorum               = 0\n" +
				"ServerStabilizationTime = 10s\nEnableRedundancyZones   = false\nDisableUpgradeMigration = false\nEnableCustomUpgrades    = false\n",
		},
		{
			name: "set-config lost the race",
			routes: map[string]route{
				"GET /v1/operator/autopilot/configuration": jsonBody(autopilotBody),
				"PUT /v1/operator/autopilot/configuration": jsonBody(`false`),
			},
			args:   []string{"operator", "autopilot", "set-config", "-min-quorum=3"},
			code:   1,
			stderr: "Autopilot configuration changed while it was being updated; please try again\n",
		},
		{
			name:   "set-config bad duration",
			routes: map[string]route{"GET /v1/operator/autopilot/configuration": jsonBody(autopilotBody)},
			args:   []string{"operator", "autopilot", "set-config", "-last-contact-threshold=soon"},
			code:   1,
			stderr: "-last-contact-threshold: \"soon\" is not a duration\n",
		},
		{
			name:   "health",
			routes: map[string]route{"GET /v1/operator/autopilot/health": healthy},
			args:   []string{"operator", "autopilot", "health"},
			stdout: "Healthy          = true\nFailureTolerance = 0\nLeader           = id-a\nVoters           = id-a, id-b\n" +
				"\nID    Name      Address        SerfStatus  Healthy  Voter  LastContact  LastTerm  LastIndex  StableSince\n" +
				"id-a  a.global  10.0.0.1:4647  alive       true     true   0s           2         40         " + formatTime(mustTime(t, "2026-01-02T03:04:05Z")) + "\n" +
				"id-b  b.global  10.0.0.2:4647  failed      true     true   0s           0         0          " + formatTime(mustTime(t, "2026-01-02T03:04:05Z")) + "\n",
		},
	})
}

func TestOperatorAutopilotHealth_UnhealthyExits2WithTheReport(t *testing.T) {
	fa := newFakeAgent(t, map[string]route{"GET /v1/operator/autopilot/health": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(sprintf(healthBody, "false", "false")))
	}})
	code, out, errOut := runCLI(t, fa.srv.URL, "", "operator", "autopilot", "health")
	must.Eq(t, 2, code, must.Sprint(errOut))
	must.StrContains(t, out, "Healthy          = false")
	must.StrContains(t, out, "b.global  10.0.0.2:4647  failed      false")
}

func TestOperatorAutopilotSetConfig_SendsACASWithOnlyTheGivenChanges(t *testing.T) {
	fa := newFakeAgent(t, map[string]route{
		"GET /v1/operator/autopilot/configuration": jsonBody(autopilotBody),
		"PUT /v1/operator/autopilot/configuration": jsonBody(`true`),
	})
	code, out, errOut := runCLI(t, fa.srv.URL, "", "operator", "autopilot", "set-config",
		"-cleanup-dead-servers=false", "-max-trailing-logs=10", "-server-stabilization-time=30s")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Configuration updated!\n", out)
	reqs := fa.find("PUT", "/v1/operator/autopilot/configuration")
	must.Len(t, 1, reqs)
	must.Eq(t, []string{"7"}, reqs[0].Query["cas"])
	var sent api.AutopilotConfiguration
	must.NoError(t, json.Unmarshal([]byte(reqs[0].Body), &sent))
	must.False(t, sent.CleanupDeadServers)
	must.Eq(t, uint64(10), sent.MaxTrailingLogs)
	must.Eq(t, "30s", sent.ServerStabilizationTime.String())
	must.Eq(t, "200ms", sent.LastContactThreshold.String())
}

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	must.NoError(t, err)
	return v
}
