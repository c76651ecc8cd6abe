package structs

import (
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func TestJobValidate_ServiceChecks(t *testing.T) {
	ok := func() api.ServiceCheck {
		return api.ServiceCheck{Name: "c", Type: "http", Path: "/health", Interval: 10 * time.Second, Timeout: 2 * time.Second}
	}
	cases := []struct {
		name    string
		mutate  func(c *api.ServiceCheck)
		group   bool
		wantErr string
	}{
		{name: "valid http"},
		{name: "valid tcp", mutate: func(c *api.ServiceCheck) { c.Type, c.Path = "tcp", "" }},
		{name: "valid script", mutate: func(c *api.ServiceCheck) { c.Type, c.Path, c.Command = "script", "", "/bin/true" }},
		{name: "http without path", mutate: func(c *api.ServiceCheck) { c.Path = "" }, wantErr: `check "c": http checks need a path`},
		{name: "unknown type", mutate: func(c *api.ServiceCheck) { c.Type = "icmp" }, wantErr: `type must be http, tcp, script or grpc, got "icmp"`},
		{name: "no interval", mutate: func(c *api.ServiceCheck) { c.Interval = 0 }, wantErr: "missing interval"},
		{name: "interval too short", mutate: func(c *api.ServiceCheck) { c.Interval = 10 * time.Millisecond }, wantErr: "interval (10ms) must be at least 1s"},
		{name: "timeout too short", mutate: func(c *api.ServiceCheck) { c.Timeout = time.Millisecond }, wantErr: "timeout (1ms) must be at least 1s"},
		{name: "bad on_update", mutate: func(c *api.ServiceCheck) { c.OnUpdate = "never" }, wantErr: `on_update must be`},
		{name: "bad initial_status", mutate: func(c *api.ServiceCheck) { c.InitialStatus = "ok" }, wantErr: `initial_status must be`},
		{name: "negative check_restart limit", mutate: func(c *api.ServiceCheck) { c.CheckRestart = &api.CheckRestart{Limit: -1} },
			wantErr: "check_restart: limit must not be negative"},
		{name: "script without command", mutate: func(c *api.ServiceCheck) { c.Type, c.Path = "script", "" }, wantErr: "script checks need a command"},
		{name: "group script check without task", group: true, mutate: func(c *api.ServiceCheck) { c.Type, c.Path, c.Command = "script", "", "/bin/true" },
			wantErr: `group "g": service "web": check "c": a group service's script check needs task`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := validJob()
			c := ok()
			if tc.mutate != nil {
				tc.mutate(&c)
			}
			svc := &api.Service{Name: "web", Provider: "nomad", Checks: []api.ServiceCheck{c}}
			if tc.group {
				j.TaskGroups[0].Services = []*api.Service{svc}
			} else {
				j.TaskGroups[0].Tasks[0].Services = []*api.Service{svc}
			}
			err := j.Validate()
			if tc.wantErr == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, tc.wantErr)
		})
	}

	t.Run("a group script check naming its task", func(t *testing.T) {
		j := validJob()
		j.TaskGroups[0].Services = []*api.Service{{Name: "web", Provider: "nomad", Checks: []api.ServiceCheck{{Name: "s", Type: "script",
			Command: "/bin/true", TaskName: j.TaskGroups[0].Tasks[0].Name, Interval: time.Second, Timeout: time.Second}}}}
		must.NoError(t, j.Validate())
	})
	t.Run("consul checks are warned, not checked", func(t *testing.T) {
		j := validJob()
		j.TaskGroups[0].Services = []*api.Service{{Name: "web", Checks: []api.ServiceCheck{{Type: "http"}}}}
		must.NoError(t, j.Validate())
	})
}
