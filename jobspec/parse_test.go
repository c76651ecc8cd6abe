package jobspec

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func parseFile(t *testing.T, path string, vars map[string]string) *api.Job {
	t.Helper()
	src, err := os.ReadFile(path)
	must.NoError(t, err)
	job, err := Parse(filepath.Base(path), src, vars)
	must.NoError(t, err)
	return job
}

// The README quick start submits example.nomad.hcl from the repository
// root; it must stay a copy of the fixture tested here.
func TestParse_Example(t *testing.T) {
	job := parseFile(t, "testdata/example.nomad.hcl", nil)

	must.Eq(t, &api.Job{
		ID:   new("example"),
		Name: new("example"),
		Type: new("service"),
		TaskGroups: []*api.TaskGroup{{
			Name:  new("web"),
			Count: new(1),
			Tasks: []*api.Task{{
				Name:   "server",
				Driver: "raw_exec",
				Config: map[string]any{
					"command": "/bin/sh",
					"args":    []any{"-c", "while true; do sleep 1; done"},
				},
				Resources: &api.Resources{CPU: new(50), MemoryMB: new(32)},
			}},
		}},
	}, job)

	fixture, err := os.ReadFile("testdata/example.nomad.hcl")
	must.NoError(t, err)
	root, err := os.ReadFile("../example.nomad.hcl")
	must.NoError(t, err)
	must.Eq(t, string(fixture), string(root))
}

func TestParse_Full(t *testing.T) {
	job := parseFile(t, "testdata/full.nomad.hcl", nil)

	want := &api.Job{
		ID:          new("full"),
		Name:        new("full-name"),
		Region:      new("global"),
		Namespace:   new("apps"),
		Type:        new("service"),
		Priority:    new(70),
		Datacenters: []string{"dc1", "dc2"},
		NodePool:    new("prod"),
		AllAtOnce:   new(true),
		Meta:        map[string]string{"owner": "ops"},
		Constraints: []*api.Constraint{
			{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "linux"},
			{Operand: "distinct_hosts"},
		},
		Affinities: []*api.Affinity{
			{LTarget: "${node.datacenter}", RTarget: "dc1", Weight: new(int8(50))},
		},
		Spreads: []*api.Spread{{
			Attribute: "${node.datacenter}",
			Weight:    new(int8(80)),
			SpreadTarget: []*api.SpreadTarget{
				{Value: "dc1", Percent: 60},
				{Value: "dc2", Percent: 40},
			},
		}},
		Update: &api.UpdateStrategy{
			Stagger:          new(30 * time.Second),
			MaxParallel:      new(2),
			HealthCheck:      new("checks"),
			MinHealthyTime:   new(10 * time.Second),
			HealthyDeadline:  new(5 * time.Minute),
			ProgressDeadline: new(10 * time.Minute),
			Canary:           new(1),
			AutoRevert:       new(true),
			AutoPromote:      new(false),
		},
		Periodic: &api.PeriodicConfig{
			Specs:           []string{"*/15 * * * *"},
			SpecType:        new("cron"),
			ProhibitOverlap: new(true),
			TimeZone:        new("Europe/Paris"),
			Enabled:         new(true),
		},
		ParameterizedJob: &api.ParameterizedJobConfig{
			Payload:      "optional",
			MetaRequired: []string{"release"},
			MetaOptional: []string{"note"},
		},
		Reschedule: &api.ReschedulePolicy{
			Attempts:      new(3),
			Interval:      new(time.Hour),
			Delay:         new(30 * time.Second),
			DelayFunction: new("exponential"),
			MaxDelay:      new(10 * time.Minute),
			Unlimited:     new(false),
		},
		Migrate: &api.MigrateStrategy{
			MaxParallel:     new(1),
			HealthCheck:     new("task_states"),
			MinHealthyTime:  new(15 * time.Second),
			HealthyDeadline: new(4 * time.Minute),
		},
		Multiregion: &api.Multiregion{
			Strategy: &api.MultiregionStrategy{MaxParallel: new(1), OnFailure: new("fail_all")},
			Regions: []*api.MultiregionRegion{{
				Name:        "west",
				Count:       new(1),
				Datacenters: []string{"west-1"},
				NodePool:    "default",
				Meta:        map[string]string{"tier": "a"},
			}},
		},
		UI: &api.JobUIConfig{
			Description: "A job with everything",
			Links:       []*api.JobUILink{{Label: "Docs", URL: "https://example.com"}},
		},
		TaskGroups: []*api.TaskGroup{{
			Name:                      new("web"),
			Count:                     new(2),
			ShutdownDelay:             new(6 * time.Second),
			StopAfterClientDisconnect: new(time.Minute),
			MaxClientDisconnect:       new(2 * time.Hour),
			PreventRescheduleOnLost:   new(true),
			Constraints:               []*api.Constraint{{LTarget: "${meta.rack}", Operand: "!=", RTarget: "r1"}},
			Affinities: []*api.Affinity{
				{LTarget: "${node.class}", Operand: "version", RTarget: ">= 1.0", Weight: new(int8(-20))},
			},
			Spreads: []*api.Spread{{Attribute: "${meta.rack}"}},
			Update:  &api.UpdateStrategy{Canary: new(2)},
			Migrate: &api.MigrateStrategy{MaxParallel: new(3)},
			RestartPolicy: &api.RestartPolicy{
				Attempts:        new(2),
				Interval:        new(30 * time.Minute),
				Delay:           new(15 * time.Second),
				Mode:            new("fail"),
				RenderTemplates: new(true),
			},
			ReschedulePolicy: &api.ReschedulePolicy{Attempts: new(0)},
			Disconnect: &api.DisconnectStrategy{
				LostAfter: new(time.Hour),
				Replace:   new(false),
				Reconcile: new("best_score"),
			},
			EphemeralDisk: &api.EphemeralDisk{Sticky: new(true), Migrate: new(true), SizeMB: new(300)},
			Networks: []*api.NetworkResource{{
				Mode:          "bridge",
				DynamicPorts:  []api.Port{{Label: "http", To: 8080}},
				ReservedPorts: []api.Port{{Label: "admin", Value: 9090, To: 9091}},
				DNS:           &api.DNSConfig{Servers: []string{"1.1.1.1"}},
			}},
			Services: []*api.Service{{
				Name:      "web",
				PortLabel: "http",
				Tags:      []string{"urlprefix-/", "v7"},
				Provider:  "nomad",
				Checks: []api.ServiceCheck{{
					Type:     "http",
					Path:     "/health",
					Interval: 10 * time.Second,
					Timeout:  2 * time.Second,
					Header:   map[string][]string{"Authorization": {"Basic x"}},
					CheckRestart: &api.CheckRestart{
						Limit: 3,
						Grace: new(90 * time.Second),
					},
				}},
			}},
			Volumes: map[string]*api.VolumeRequest{
				"data": {Name: "data", Type: "host", Source: "data-vol", ReadOnly: true},
			},
			Meta: map[string]string{"group_meta": "yes"},
			Scaling: &api.ScalingPolicy{
				Min:     new(int64(1)),
				Max:     new(int64(10)),
				Enabled: new(true),
				Type:    "horizontal",
				Policy: map[string]any{
					"cooldown": "1m",
					"check": []map[string]any{{
						"cpu": []map[string]any{{
							"source": "prometheus",
							"query":  "avg(cpu)",
							"strategy": []map[string]any{{
								"target-value": []map[string]any{{"target": 70.5}},
							}},
						}},
					}},
				},
			},
			Tasks: []*api.Task{{
				Name:   "server",
				Driver: "docker",
				User:   "nobody",
				Leader: true,
				Config: map[string]any{
					"image":    "redis:7",
					"command":  "redis-server",
					"args":     []any{"--port", "${NOMAD_PORT_http}"},
					"ports":    []any{"http"},
					"port_map": []map[string]any{{"http": 80}},
					"labels":   map[string]any{"ratio": 0.5},
				},
				Env: map[string]string{
					"DATA_DIR": "${NOMAD_ALLOC_DIR}/data",
					"NODE":     "${node.unique.id}",
					"UPPER":    "X",
				},
				Meta: map[string]string{"task_meta": "1"},
				Resources: &api.Resources{
					CPU:         new(500),
					Cores:       new(0),
					MemoryMB:    new(256),
					MemoryMaxMB: new(512),
					Devices:     []*api.RequestedDevice{{Name: "nvidia/gpu", Count: new(uint64(2))}},
				},
				Templates: []*api.Template{{
					EmbeddedTmpl: new(`KEY={{ key "k" }}`),
					DestPath:     new("local/env"),
					ChangeMode:   new("signal"),
					ChangeSignal: new("SIGHUP"),
					Envvars:      new(true),
					Splay:        new(5 * time.Second),
					Perms:        new("0644"),
					Wait:         &api.WaitConfig{Min: new(2 * time.Second), Max: new(10 * time.Second)},
				}},
				Artifacts: []*api.TaskArtifact{{
					GetterSource:  new("https://example.com/file.tgz"),
					RelativeDest:  new("local/file"),
					GetterOptions: map[string]string{"checksum": "sha256:abc"},
				}},
				Services:        []*api.Service{{Name: "server-admin", PortLabel: "admin"}},
				RestartPolicy:   &api.RestartPolicy{Attempts: new(5)},
				LogConfig:       &api.LogConfig{MaxFiles: new(3), MaxFileSizeMB: new(10), Disabled: new(false)},
				KillTimeout:     new(20 * time.Second),
				KillSignal:      "SIGTERM",
				ShutdownDelay:   3 * time.Second,
				Lifecycle:       &api.TaskLifecycle{Hook: "poststart", Sidecar: true},
				VolumeMounts:    []*api.VolumeMount{{Volume: new("data"), Destination: new("/srv"), ReadOnly: new(true)}},
				DispatchPayload: &api.DispatchPayloadConfig{File: "input.json"},
				Identity:        &api.WorkloadIdentity{Env: true, File: true},
				Identities: []*api.WorkloadIdentity{
					{Name: "vault", Audience: []string{"vault.io"}, TTL: time.Hour},
				},
				Vault:   &api.Vault{Policies: []string{"read"}, ChangeMode: new("restart"), Env: new(true)},
				Consul:  &api.Consul{Namespace: "team"},
				Actions: []*api.Action{{Name: "echo", Command: "/bin/echo", Args: []string{"hi"}}},
			}},
		}},
	}
	must.Eq(t, want, job)
}

func TestParse_Errors(t *testing.T) {
	cases := []struct {
		name    string
		src     string
		wantErr string // exact text
	}{
		{
			name:    "syntax",
			src:     `job "p" { group`,
			wantErr: `input.hcl:1,11-16: Argument or block definition required; An argument or block definition is required here. To set an argument, use the equals sign "=" to introduce the argument value.`,
		},
		{
			name:    "unknown argument",
			src:     "job \"p\" {\n  regoin = \"x\"\n}",
			wantErr: `input.hcl:2,3-9: Unsupported argument; An argument named "regoin" is not expected here. Did you mean "region"?`,
		},
		{
			name:    "unknown block",
			src:     "job \"p\" {\n  group \"g\" {\n    tsak \"t\" {}\n  }\n}",
			wantErr: `input.hcl:3,5-9: Unsupported block type; Blocks of type "tsak" are not expected here. Did you mean "task"?`,
		},
		{
			name:    "id is the label",
			src:     "job \"p\" {\n  id = \"q\"\n}",
			wantErr: `input.hcl:2,3-5: Unsupported argument; An argument named "id" is not expected here.`,
		},
		{
			name:    "no job",
			src:     "variable \"x\" {\n  default = 1\n}\n",
			wantErr: `input.hcl:1,1-1: Missing job block; A job file must contain exactly one job "<id>" { ... } block.`,
		},
		{
			name:    "two jobs",
			src:     "job \"a\" {}\njob \"b\" {}\n",
			wantErr: `input.hcl:2,1-8: Duplicate job block; Only one job block is allowed in a file; the first was defined at input.hcl:1,1-8.`,
		},
		{
			name:    "unknown top-level block",
			src:     "jobs \"a\" {}\n",
			wantErr: `input.hcl:1,1-5: Unsupported block type; Blocks of type "jobs" are not expected here. Did you mean "job"?`,
		},
		{
			name:    "wrong type",
			src:     "job \"a\" {\n  priority = \"high\"\n}",
			wantErr: `input.hcl:2,14-20: Invalid value; Inappropriate value for argument "priority": a number is required.`,
		},
		{
			name:    "out of range",
			src:     "job \"a\" {\n  affinity {\n    weight = 200\n  }\n}",
			wantErr: `input.hcl:3,14-17: Invalid value; Inappropriate value for argument "weight": 200 is out of range.`,
		},
		{
			name:    "duplicate single block",
			src:     "job \"a\" {\n  update {}\n  update {}\n}",
			wantErr: `input.hcl:3,3-9: Duplicate update block; Only one update block is allowed here; another was defined at input.hcl:2,3-9.`,
		},
		{
			name:    "meta as block and argument",
			src:     "job \"a\" {\n  meta {}\n  meta = {}\n}",
			wantErr: `input.hcl:3,3-7: Duplicate meta definition; "meta" is set both as an argument and as a block (at input.hcl:2,3-7).`,
		},
		{
			name:    "function of a runtime value",
			src:     "job \"a\" {\n  region = \"${upper(node.region)}\"\n}",
			wantErr: `input.hcl:2,21-25: Unknown variable; There is no variable named "node".`,
		},
		{
			name:    "required argument",
			src:     "job \"a\" {\n  group \"g\" {\n    task \"t\" {\n      lifecycle {}\n    }\n  }\n}",
			wantErr: `input.hcl:4,17-17: Missing required argument; The argument "hook" is required, but no definition was found.`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("input.hcl", []byte(tc.src), nil)
			must.EqError(t, err, tc.wantErr)
		})
	}
}

// A task written directly in the job becomes a group of the task's name, as upstream
// reads such files.
func TestParse_TaskDirectlyInJob(t *testing.T) {
	job, err := Parse("direct.hcl", []byte(`job "direct" {
  group "explicit" {
    task "a" {
      driver = "raw_exec"
    }
  }
  task "solo" {
    driver = "raw_exec"
    config { command = "/bin/true" }
  }
}
`), nil)
	must.NoError(t, err)
	must.Len(t, 2, job.TaskGroups)
	must.Eq(t, "explicit", *job.TaskGroups[0].Name)
	must.Eq(t, "solo", *job.TaskGroups[1].Name)
	must.Len(t, 1, job.TaskGroups[1].Tasks)
	must.Eq(t, "solo", job.TaskGroups[1].Tasks[0].Name)
	must.Eq(t, "/bin/true", job.TaskGroups[1].Tasks[0].Config["command"].(string))
}
