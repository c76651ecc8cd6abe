package structs

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func TestValidateDispatch(t *testing.T) {
	parent := func(mode string) *Job {
		j := validJob()
		j.Type = JobTypeBatch
		j.ParameterizedJob = &api.ParameterizedJobConfig{Payload: mode, MetaRequired: []string{"need"}, MetaOptional: []string{"may"}}
		return j
	}
	ok := map[string]string{"need": "1"}
	cases := []struct {
		name    string
		job     *Job
		req     JobDispatchRequest
		wantErr string
	}{
		{name: "valid", job: parent("optional"), req: JobDispatchRequest{Meta: ok}},
		{name: "empty mode is optional", job: parent(""), req: JobDispatchRequest{Meta: ok, Payload: []byte("x")}},
		{name: "payload at the limit", job: parent("required"), req: JobDispatchRequest{Meta: ok, Payload: make([]byte, DispatchPayloadSizeLimit)}},
		{name: "payload over the limit", job: parent("optional"), req: JobDispatchRequest{Meta: ok, Payload: make([]byte, DispatchPayloadSizeLimit+1)},
			wantErr: "Payload exceeds maximum size; 16385 > 16384"},
		{name: "payload required", job: parent("required"), req: JobDispatchRequest{Meta: ok}, wantErr: "Payload is not provided but required"},
		{name: "payload forbidden", job: parent("forbidden"), req: JobDispatchRequest{Meta: ok, Payload: []byte("x")}, wantErr: "Payload provided but forbidden"},
		{name: "required key missing", job: parent("optional"), req: JobDispatchRequest{Meta: map[string]string{"may": "1"}}, wantErr: `required meta keys: "need"`},
		{name: "unknown keys, sorted", job: parent("optional"), req: JobDispatchRequest{Meta: map[string]string{"need": "1", "z": "", "a": ""}},
			wantErr: `unpermitted metadata keys: "a", "z"`},
		{name: "too many keys", job: parent("optional"), req: JobDispatchRequest{Meta: manyKeys(65)}, wantErr: "Meta: at most 64 keys"},
		{name: "not parameterized", job: validJob(), wantErr: "not a parameterized job"},
		{name: "a dispatched child", job: func() *Job { j := parent("optional"); j.Dispatched = true; return j }(), wantErr: "not a parameterized job"},
		{name: "stopped", job: func() *Job { j := parent("optional"); j.Stop = true; return j }(), req: JobDispatchRequest{Meta: ok}, wantErr: "stopped"},
		{name: "long prefix", job: parent("optional"), req: JobDispatchRequest{Meta: ok, IdPrefixTemplate: strings.Repeat("p", 65)}, wantErr: "IdPrefixTemplate must be at most 64"},
		{name: "priority", job: parent("optional"), req: JobDispatchRequest{Meta: ok, Priority: -1}, wantErr: "Priority must be between"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateDispatch(tc.job, &tc.req)
			if tc.wantErr == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, tc.wantErr)
			must.Eq(t, 400, ErrorCode(err))
		})
	}
}

func manyKeys(n int) map[string]string {
	m := map[string]string{"need": "1"}
	for i := range n {
		m[strings.Repeat("k", i+1)] = ""
	}
	return m
}

func TestJob_Children(t *testing.T) {
	parent := validJob()
	parent.ID, parent.Type, parent.Version, parent.Stable = "cron", JobTypeBatch, 4, true
	parent.Periodic = &api.PeriodicConfig{Spec: new("@hourly")}
	parent.Meta = map[string]string{"team": "a", "keep": "yes"}
	at := time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)

	child := parent.PeriodicChild(at)
	must.Eq(t, "cron/periodic-1768471200", child.ID)
	must.Eq(t, "cron", child.ParentID)
	must.Nil(t, child.Periodic)
	must.Eq(t, uint64(0), child.Version)
	must.False(t, child.Stable)
	must.NotNil(t, parent.Periodic)

	parent.Periodic = nil
	parent.ParameterizedJob = &api.ParameterizedJobConfig{}
	d := parent.DispatchChild(DispatchedID("cron", "", at.Unix(), "0a1b2c3d"), at, []byte("p"), map[string]string{"team": "b"}, "tok")
	must.Eq(t, "cron/dispatch-1768471200-0a1b2c3d", d.ID)
	must.True(t, d.Dispatched)
	must.False(t, d.IsParameterized())
	must.Eq(t, map[string]string{"team": "b", "keep": "yes"}, d.Meta)
	must.Eq(t, map[string]string{"team": "a", "keep": "yes"}, parent.Meta) // the parent's meta is untouched
	must.Eq(t, "tok", d.DispatchIdempotencyToken)
	must.Eq(t, "cron/dispatch-nightly-1768471200-0a1b2c3d", DispatchedID("cron", "nightly", at.Unix(), "0a1b2c3d"))
}

func TestJob_DispatchPayloadFileValidated(t *testing.T) {
	cases := []struct {
		file    string
		wantErr string
	}{
		{file: "input.json"},
		{file: "in/nested/input.json"},
		{file: "/etc/passwd", wantErr: "must be relative"},
		{file: "../../secrets/x", wantErr: `must not contain empty, "." or ".." elements`},
		{file: "a//b", wantErr: "must not contain empty"},
		{file: "a\nb", wantErr: "control characters"},
		{file: strings.Repeat("a", 513), wantErr: "must be at most 512 characters"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			j := validJob()
			j.TaskGroups[0].Tasks[0].DispatchPayload = &api.DispatchPayloadConfig{File: tc.file}
			err := j.Validate()
			if tc.wantErr == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, "dispatch_payload.file")
			must.ErrorContains(t, err, tc.wantErr)
		})
	}
}
