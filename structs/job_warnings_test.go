package structs

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// Every field of the official client's Job, TaskGroup and Task has a rule: acted on, set by
// the server, refused, or warned. A field the client library gains fails here until someone
// decides which.
func TestJobWarnings_EveryFieldHasARule(t *testing.T) {
	for _, tc := range []struct {
		typ   reflect.Type
		rules map[string]fieldRule
	}{
		{reflect.TypeFor[api.Job](), jobFieldRules},
		{reflect.TypeFor[api.TaskGroup](), groupFieldRules},
		{reflect.TypeFor[api.Task](), taskFieldRules},
	} {
		for i := 0; i < tc.typ.NumField(); i++ {
			name := tc.typ.Field(i).Name
			_, ok := tc.rules[name]
			must.True(t, ok, must.Sprintf("api.%s.%s has no rule in structs/job_warnings.go", tc.typ.Name(), name))
		}
		for name := range tc.rules {
			_, ok := tc.typ.FieldByName(name)
			must.True(t, ok, must.Sprintf("rule for api.%s.%s names no field", tc.typ.Name(), name))
		}
	}
}

// Every warned field, set on a job, yields exactly its line; fields acted on yield none.
func TestJobWarnings_EachWarnedFieldWarns(t *testing.T) {
	must.SliceEmpty(t, validJob().Warnings())

	cases := []struct {
		name   string
		mutate func(j *Job)
		want   string
	}{
		{"multiregion", func(j *Job) { j.Multiregion = &api.Multiregion{} }, "multiregion: multi-region deployments are not built"},
		{"consul namespace", func(j *Job) { j.ConsulNamespace = "x" }, "consul_namespace: there is no Consul integration"},
		{"bidirectional volume_mount", func(j *Job) {
			j.TaskGroups[0].Volumes = map[string]*api.VolumeRequest{"v": {Type: "host", Source: "s"}}
			j.TaskGroups[0].Tasks[0].VolumeMounts = []*api.VolumeMount{{Volume: new("v"), Destination: new("/v"), PropagationMode: new("bidirectional")}}
		}, `task "t": volume_mount: propagation_mode other than private and selinux_label are not acted on`},
		{"csi volume", func(j *Job) { j.TaskGroups[0].Volumes = map[string]*api.VolumeRequest{"v": {Type: "csi"}} }, "volume: CSI volumes are not supported"},
		{"cni network mode", func(j *Job) { j.TaskGroups[0].Networks = []*api.NetworkResource{{Mode: "cni/mynet"}} },
			`network: only modes "host" and "bridge" are built`},
		{"none network mode", func(j *Job) { j.TaskGroups[0].Networks = []*api.NetworkResource{{Mode: "none"}} },
			`network: only modes "host" and "bridge" are built`},
		{"network hostname", func(j *Job) { j.TaskGroups[0].Networks = []*api.NetworkResource{{Mode: "bridge", Hostname: "h"}} },
			`network: only modes`},
		{"dns in host mode", func(j *Job) {
			j.TaskGroups[0].Networks = []*api.NetworkResource{{Mode: "host", DNS: &api.DNSConfig{Servers: []string{"192.0.2.1"}}}}
		}, `dns outside bridge mode are not acted on`},
		{"consul service", func(j *Job) { j.TaskGroups[0].Services = []*api.Service{{Name: "web"}} },
			`group "g": service "web": provider "consul": there is no Consul integration`},
		{"grpc check", func(j *Job) {
			j.TaskGroups[0].Tasks[0].Services = []*api.Service{{Name: "web", Provider: "nomad", Checks: []api.ServiceCheck{{Name: "g", Type: "grpc"}}}}
		}, `task "t": service "web": check "g": type "grpc": not run`},
		{"group check_restart without task", func(j *Job) {
			j.TaskGroups[0].Services = []*api.Service{{Name: "web", Provider: "nomad", CheckRestart: &api.CheckRestart{Limit: 2},
				Checks: []api.ServiceCheck{{Name: "h", Type: "http"}}}}
		}, `group "g": service "web": check "h": check_restart: not acted on`},
		{"check thresholds", func(j *Job) {
			j.TaskGroups[0].Tasks[0].Services = []*api.Service{{Name: "web", Provider: "nomad", Checks: []api.ServiceCheck{{Name: "h", Type: "http", SuccessBeforePassing: 2}}}}
		}, `task "t": service "web": check "h": success_before_passing: not acted on`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := validJob()
			tc.mutate(j)
			got := j.Warnings()
			must.SliceLen(t, 1, got)
			must.StrContains(t, got[0], tc.want)
		})
	}

	t.Run("bridge mode with ports and dns, and host mode, are acted on", func(t *testing.T) {
		j := validJob()
		j.TaskGroups[0].Networks = []*api.NetworkResource{{Mode: "bridge", DNS: &api.DNSConfig{Servers: []string{"192.0.2.1"}},
			DynamicPorts: []api.Port{{Label: "http", To: 8080}}}}
		must.SliceEmpty(t, j.Warnings())
		j.TaskGroups[0].Networks = []*api.NetworkResource{{Mode: "host", ReservedPorts: []api.Port{{Label: "http", Value: 8080}}}}
		must.SliceEmpty(t, j.Warnings())
	})

	t.Run("host volumes and their mounts are acted on", func(t *testing.T) {
		j := validJob()
		j.TaskGroups[0].Volumes = map[string]*api.VolumeRequest{"v": {Type: "host", Source: "s"}, "w": {Source: "s"}}
		j.TaskGroups[0].Tasks[0].VolumeMounts = []*api.VolumeMount{{Volume: new("v"), Destination: new("/v"), PropagationMode: new("private")}}
		must.SliceEmpty(t, j.Warnings())
	})

	t.Run("a sticky, migrating ephemeral disk, an exec user, disabled logs, lifecycle, leader, a nomad service with http, tcp and script checks and templates are acted on", func(t *testing.T) {
		j := validJob()
		j.TaskGroups[0].Tasks[0].Templates = []*api.Template{{ChangeMode: new("restart")}, {ChangeMode: new("signal")}, {ChangeMode: new("script"), ChangeScript: &api.ChangeScript{RunOnFirstRender: new(true)}}, {Once: new(true)}, {}}
		j.TaskGroups[0].Tasks[0].Lifecycle = &api.TaskLifecycle{Hook: "prestart"}
		j.TaskGroups[0].Tasks[0].Leader = true
		j.TaskGroups[0].Services = []*api.Service{{Name: "web", Provider: "nomad", Checks: []api.ServiceCheck{
			{Name: "h", Type: "http", Path: "/", Method: "POST", Header: map[string][]string{"X": {"y"}}, Interval: time.Second, Timeout: time.Second,
				OnUpdate: "ignore_warnings", TaskName: "t", CheckRestart: &api.CheckRestart{Limit: 3, Grace: new(time.Second), IgnoreWarnings: true}},
			{Name: "t", Type: "tcp", InitialStatus: "passing"},
			{Name: "s", Type: "script", Command: "/bin/true", Args: []string{"x"}, TaskName: "t"},
		}}}
		j.TaskGroups[0].EphemeralDisk = &api.EphemeralDisk{SizeMB: new(300), Sticky: new(true), Migrate: new(true)}
		j.TaskGroups[0].Tasks[0].Driver = "exec"
		j.TaskGroups[0].Tasks[0].User = "nobody"
		j.TaskGroups[0].Tasks[0].LogConfig = &api.LogConfig{Disabled: new(true)}
		must.SliceEmpty(t, j.Warnings(), must.Sprint(strings.Join(j.Warnings(), "\n")))
	})
}
