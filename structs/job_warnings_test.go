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
		{reflect.TypeFor[api.Resources](), resourcesFieldRules},
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
		{"numa", func(j *Job) {
			j.TaskGroups[0].Tasks[0].Resources = &api.Resources{NUMA: &api.NUMAResource{Affinity: "require"}}
		}, `group "g": task "t": resources: numa: NUMA-aware placement is not built`},
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
		// What the client library fills and upstream's exported jobs carry asks nothing.
		j.TaskGroups[0].Tasks[0].Resources = &api.Resources{CPU: new(100), MemoryMB: new(64), NUMA: &api.NUMAResource{Affinity: "none"},
			SecretsMB: new(1), DiskMB: new(0), IOPS: new(0)}
		must.SliceEmpty(t, j.Warnings(), must.Sprint(strings.Join(j.Warnings(), "\n")))
	})
}

// fillValue sets v to a non-zero value all the way down (to a bounded depth): strings "x",
// numbers 2 (above any default a narrowed rule leaves alone), booleans true, one element in each slice and map. "x" is no value a narrowed
// rule (a host volume, a private mount, NUMA affinity none) treats as acted on.
func fillValue(v reflect.Value, depth int) {
	if depth > 4 || !v.CanSet() {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillValue(v.Elem(), depth+1)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fillValue(v.Field(i), depth+1)
			}
		}
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(2)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(2)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(2)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fillValue(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fillValue(k, depth+1)
		fillValue(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Interface:
		v.Set(reflect.ValueOf("x"))
	}
}

// One test walks every field of the official client's Job, TaskGroup and Task, and of a
// task's resources: each is set in turn, all the way down, on a job that otherwise warns of
// nothing, and goes through the client library's canonicalisation and JobFromAPI as a
// registration does. A field whose row says warned must yield its line; refused must fail
// validation naming it; acted on or set by the server must yield no line of its own. So a
// field is never accepted in silence: it is acted on, or this test or the one above fails.
func TestJobWarnings_EverySetFieldIsActedOnRefusedOrWarned(t *testing.T) {
	base := func() (*api.Job, *api.TaskGroup, *api.Task) {
		task := api.NewTask("t", "raw_exec")
		tg := api.NewTaskGroup("g", 1).AddTask(task)
		job := api.NewServiceJob("web", "web", "global", 50).AddTaskGroup(tg)
		job.Datacenters = []string{"dc1"}
		return job, tg, task
	}
	check := func(t *testing.T, job *api.Job) ([]string, error) {
		func() {
			defer func() { _ = recover() }() // a value canonicalisation cannot take: checked as sent
			job.Canonicalize()
		}()
		j := JobFromAPI(job)
		return j.Warnings(), j.Validate()
	}
	{
		job, _, _ := base()
		warnings, err := check(t, job)
		must.SliceEmpty(t, warnings)
		must.NoError(t, err)
	}

	levels := []struct {
		typ    reflect.Type
		rules  map[string]fieldRule
		prefix string
		target func(job *api.Job, tg *api.TaskGroup, task *api.Task) reflect.Value
	}{
		{reflect.TypeFor[api.Job](), jobFieldRules, "",
			func(job *api.Job, _ *api.TaskGroup, _ *api.Task) reflect.Value { return reflect.ValueOf(job).Elem() }},
		{reflect.TypeFor[api.TaskGroup](), groupFieldRules, `group "g": `,
			func(_ *api.Job, tg *api.TaskGroup, _ *api.Task) reflect.Value { return reflect.ValueOf(tg).Elem() }},
		{reflect.TypeFor[api.Task](), taskFieldRules, `group "g": task "t": `,
			func(_ *api.Job, _ *api.TaskGroup, task *api.Task) reflect.Value { return reflect.ValueOf(task).Elem() }},
		{reflect.TypeFor[api.Resources](), resourcesFieldRules, `group "g": task "t": resources: `,
			func(_ *api.Job, _ *api.TaskGroup, task *api.Task) reflect.Value {
				task.Resources = &api.Resources{}
				return reflect.ValueOf(task.Resources).Elem()
			}},
	}
	for _, level := range levels {
		for i := 0; i < level.typ.NumField(); i++ {
			name := level.typ.Field(i).Name
			t.Run(level.typ.Name()+"."+name, func(t *testing.T) {
				rule, ok := level.rules[name]
				must.True(t, ok, must.Sprint("no row: see TestJobWarnings_EveryFieldHasARule"))
				job, tg, task := base()
				fillValue(level.target(job, tg, task).Field(i), 0)
				warnings, err := check(t, job)
				own := level.prefix + hclName(level.typ, name) + ": "
				var lines []string
				for _, w := range warnings {
					if strings.HasPrefix(w, own) {
						lines = append(lines, w)
					}
				}
				switch rule.support {
				case fieldWarned:
					must.SliceLen(t, 1, lines, must.Sprintf("warnings: %q", warnings))
					must.StrContains(t, lines[0], rule.why)
				case fieldRefused:
					must.Error(t, err)
					must.StrContains(t, err.Error(), own)
				default:
					if level.typ == reflect.TypeFor[api.Task]() && name == "Resources" {
						return // its fields are walked one by one below
					}
					must.SliceEmpty(t, lines, must.Sprintf("warnings: %q", warnings))
				}
			})
		}
	}
}
