package jobspec

import (
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func TestParseJSONJob(t *testing.T) {
	const bare = `{
  "ID": "example",
  "Name": "example",
  "Type": "service",
  "TaskGroups": [{
    "Name": "web",
    "Count": 1,
    "Tasks": [{
      "Name": "server",
      "Driver": "raw_exec",
      "Config": {"command": "/bin/sh", "args": ["-c", "sleep 1"]},
      "KillTimeout": 5000000000
    }]
  }]
}`
	want := &api.Job{
		ID:   new("example"),
		Name: new("example"),
		Type: new("service"),
		TaskGroups: []*api.TaskGroup{{
			Name:  new("web"),
			Count: new(1),
			Tasks: []*api.Task{{
				Name:        "server",
				Driver:      "raw_exec",
				Config:      map[string]any{"command": "/bin/sh", "args": []any{"-c", "sleep 1"}},
				KillTimeout: new(5 * time.Second),
			}},
		}},
	}

	cases := []struct {
		name    string
		src     string
		want    *api.Job
		wantErr string
	}{
		{name: "bare", src: bare, want: want},
		{name: "wrapped", src: `{"Job": ` + bare + `}`, want: want},
		{name: "wrapped with request fields", src: `{"EnforceIndex": false, "Job": ` + bare + `}`, want: want},
		{name: "null job", src: `{"Job": null}`, wantErr: `invalid JSON job: "Job" is null`},
		{name: "no job", src: `{}`, wantErr: "invalid JSON job: no job found"},
		{name: "not an object", src: `[1]`, wantErr: "invalid JSON job: json: cannot unmarshal array"},
		{name: "wrong field type", src: `{"Job": {"ID": 3}}`, wantErr: "invalid JSON job: json: cannot unmarshal number"},
		{name: "syntax", src: `{"Job": `, wantErr: "invalid JSON job: unexpected end of JSON input"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job, err := ParseJSONJob([]byte(tc.src))
			if tc.wantErr != "" {
				must.ErrorContains(t, err, tc.wantErr)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.want, job)
		})
	}
}
