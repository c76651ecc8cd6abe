package command

import (
	"fmt"
	"testing"

	"github.com/shoenig/test/must"
)

const purgedRecords = `[
 {"ID":"2b1f6e1c-0000-0000-0000-000000000001","Namespace":"default","JobID":"web","JobVersion":3,
  "JobType":"service","Reason":"purge","Actor":{"AccessorID":"7c1c2a3e-aaaa","Name":"alice","Type":"client"},
  "PurgeTime":1796201706140062794,"CreateIndex":42},
 {"ID":"2b1f6e1c-0000-0000-0000-000000000002","Namespace":"batch","JobID":"nightly-report","JobVersion":0,
  "JobType":"batch","Reason":"gc","Actor":{"Name":"job-gc","Type":"system"},
  "PurgeTime":1796201706140062794,"CreateIndex":40}
]`

func TestJobPurged(t *testing.T) {
	at := formatUnixNano(1796201706140062794)
	const wiActor = "global:default:janitor:g:t:default (alloc e1000000-0000-0000-0000-000000000001, on behalf of alice)"
	cases := []struct {
		name      string
		args      []string
		body      string
		wantCode  int
		wantOut   string
		wantErr   string
		wantQuery map[string][]string
	}{
		{
			name: "table",
			body: purgedRecords,
			wantOut: "ID                                    " + fmt.Sprintf("%-*s", len(at), "Time") + "  Namespace  Job             Version  Reason  Actor   Accessor\n" +
				"2b1f6e1c-0000-0000-0000-000000000001  " + at + "  default    web             3        purge   alice   7c1c2a3e-aaaa\n" +
				"2b1f6e1c-0000-0000-0000-000000000002  " + at + "  batch      nightly-report  0        gc      job-gc  -\n",
		},
		{
			name: "forced gc names the token too",
			body: `[{"ID":"2b1f6e1c-0000-0000-0000-000000000003","Namespace":"default","JobID":"old","JobVersion":1,` +
				`"JobType":"service","Reason":"gc","Actor":{"Name":"job-gc","Type":"system"},` +
				`"ForcedBy":{"AccessorID":"9a01ffff","Name":"olga","Type":"management"},"PurgeTime":1796201706140062794,"CreateIndex":44}]`,
			wantOut: "ID                                    " + fmt.Sprintf("%-*s", len(at), "Time") + "  Namespace  Job  Version  Reason  Actor                    Accessor\n" +
				"2b1f6e1c-0000-0000-0000-000000000003  " + at + "  default    old  1        gc      job-gc (forced by olga)  9a01ffff\n",
		},
		{
			name: "json keeps ForcedBy",
			args: []string{"-json"},
			body: `[{"ID":"r","Reason":"gc","Actor":{"Name":"job-gc","Type":"system"},"ForcedBy":{"AccessorID":"9a01ffff","Name":"olga","Type":"management"}}]`,
			wantOut: "[\n    {\n        \"ID\": \"r\",\n        \"Namespace\": \"\",\n        \"JobID\": \"\",\n        \"JobVersion\": 0,\n" +
				"        \"JobType\": \"\",\n        \"Reason\": \"gc\",\n        \"Actor\": {\n            \"AccessorID\": \"\",\n" +
				"            \"Name\": \"job-gc\",\n            \"Type\": \"system\"\n        },\n        \"ForcedBy\": {\n" +
				"            \"AccessorID\": \"9a01ffff\",\n            \"Name\": \"olga\",\n            \"Type\": \"management\"\n        },\n" +
				"        \"PurgeTime\": 0,\n        \"CreateIndex\": 0\n    }\n]\n",
		},
		{
			name: "workload identity names its allocation and whom it acts for",
			body: `[{"ID":"2b1f6e1c-0000-0000-0000-000000000004","Namespace":"default","JobID":"victim","JobVersion":0,` +
				`"JobType":"service","Reason":"purge","Actor":{"Name":"global:default:janitor:g:t:default","Type":"workload-identity",` +
				`"AllocID":"e1000000-0000-0000-0000-000000000001","OnBehalfOf":{"AccessorID":"7c1c2a3e-aaaa","Name":"alice"}},` +
				`"PurgeTime":1796201706140062794,"CreateIndex":45}]`,
			wantOut: "ID                                    " + fmt.Sprintf("%-*s", len(at), "Time") + "  Namespace  Job     Version  Reason  " +
				fmt.Sprintf("%-*s", len(wiActor), "Actor") + "  Accessor\n" +
				"2b1f6e1c-0000-0000-0000-000000000004  " + at + "  default    victim  0        purge   " + wiActor + "  7c1c2a3e-aaaa\n",
		},
		{
			name:    "empty",
			body:    `[]`,
			wantOut: "No purged jobs\n",
		},
		{
			name:      "since and namespace are sent",
			args:      []string{"-namespace=*", "-since", "2026-01-02T15:04:05Z"},
			body:      `[]`,
			wantOut:   "No purged jobs\n",
			wantQuery: map[string][]string{"namespace": {"*"}, "since": {"2026-01-02T15:04:05Z"}},
		},
		{
			name:     "bad since",
			args:     []string{"-since", "yesterday"},
			body:     `[]`,
			wantCode: 1,
			wantErr:  "Invalid -since \"yesterday\": expected an RFC 3339 time such as 2026-01-02T15:04:05Z\n",
		},
		{
			name:    "json",
			args:    []string{"-json"},
			body:    `[]`,
			wantOut: "[]\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fa := newFakeAgent(t, map[string]route{"GET /v1/jobs/purged": jsonBody(tc.body)})
			code, out, errOut := runCLI(t, fa.srv.URL, "", append([]string{"job", "purged"}, tc.args...)...)
			must.Eq(t, tc.wantCode, code, must.Sprint(errOut))
			must.Eq(t, tc.wantOut, out)
			must.Eq(t, tc.wantErr, errOut)
			for k, v := range tc.wantQuery {
				reqs := fa.find("GET", "/v1/jobs/purged")
				must.Len(t, 1, reqs)
				must.Eq(t, v, reqs[0].Query[k])
			}
		})
	}
}

func TestJobRestore(t *testing.T) {
	const id = "2b1f6e1c-0000-0000-0000-000000000001"
	const record = `{"ID":"` + id + `","Namespace":"prod","JobID":"web","JobVersion":3,"Reason":"purge",` +
		`"Job":{"ID":"web"}}`
	cases := []struct {
		name        string
		args        []string
		stdin       string
		recordBody  string
		wantCode    int
		wantRestore bool
		wantOut     string
	}{
		{
			name:       "declined",
			args:       []string{id},
			stdin:      "n\n",
			recordBody: record,
			wantOut:    `Are you sure you want to restore job "web" in namespace "prod" (version 3)? [y/N]Cancelling job restore` + "\n",
		},
		{
			name:        "confirmed with -yes",
			args:        []string{"-yes", "-detach", id},
			recordBody:  record,
			wantRestore: true,
			wantOut:     "Job \"web\" restored\nEvaluation ID: e9795683-3a8b-1f8b-5105-685a8c9b7793\n",
		},
		{
			name:        "wrapped record",
			args:        []string{"-yes", "-detach", id},
			recordBody:  `{"Record":` + record + `,"Index":9}`,
			wantRestore: true,
			wantOut:     "Job \"web\" restored\nEvaluation ID: e9795683-3a8b-1f8b-5105-685a8c9b7793\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fa := newFakeAgent(t, map[string]route{
				"GET /v1/jobs/purged/" + id:              jsonBody(tc.recordBody),
				"PUT /v1/jobs/purged/" + id + "/restore": jsonBody(registerResponse),
			})
			code, out, errOut := runCLI(t, fa.srv.URL, tc.stdin, append([]string{"job", "restore"}, tc.args...)...)
			must.Eq(t, tc.wantCode, code, must.Sprint(errOut))
			must.Eq(t, tc.wantOut, out)
			restores := fa.find("PUT", "/v1/jobs/purged/"+id+"/restore")
			if !tc.wantRestore {
				must.Len(t, 0, restores)
				return
			}
			must.Len(t, 1, restores)
			must.Eq(t, []string{"prod"}, restores[0].Query["namespace"])
		})
	}
}

func TestJobPurged_Verify(t *testing.T) {
	cases := []struct {
		name     string
		body     string
		wantCode int
		wantOut  string
	}{
		{
			name:    "valid",
			body:    `{"Valid":true,"Records":3,"Head":"ab12"}`,
			wantOut: "Valid   = true\nRecords = 3\nHead    = ab12\n",
		},
		{
			name: "broken exits 2 and names the record",
			body: `{"Valid":false,"Records":2,"Head":"ab12","Checkpoint":"cd34",` +
				`"Broken":{"ChainSeq":3,"ID":"rec-c","Namespace":"default","JobID":"web","Reason":"Hash does not match the record's content: the record was changed"}}`,
			wantCode: 2,
			wantOut: "Valid      = false\nRecords    = 2\nHead       = ab12\nCheckpoint = cd34\n" +
				"Broken at  = record 3 (rec-c, job \"web\" in namespace \"default\")\n" +
				"Reason     = Hash does not match the record's content: the record was changed\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fa := newFakeAgent(t, map[string]route{"GET /v1/jobs/purged/verify": jsonBody(tc.body)})
			code, out, errOut := runCLI(t, fa.srv.URL, "", "job", "purged", "-verify")
			must.Eq(t, tc.wantCode, code, must.Sprint(errOut))
			must.Eq(t, tc.wantOut, out)
			must.Len(t, 0, fa.find("GET", "/v1/jobs/purged"))
		})
	}
}
