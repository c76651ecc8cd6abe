package jobspec

import (
	"reflect"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func TestParse_Config(t *testing.T) {
	cases := []struct {
		name   string
		config string // the task's config block or argument
		want   map[string]any
	}{
		{
			name: "brief example",
			config: `config {
				  command = "x"
				  args = ["a"]
				  port_map { http = 80 }
				}`,
			want: map[string]any{
				"command":  "x",
				"args":     []any{"a"},
				"port_map": []map[string]any{{"http": 80}},
			},
		},
		{
			name: "numbers",
			config: `config {
				  int = 3
				  float = 1.5
				  big = 12345678901
				  neg = -2
				}`,
			want: map[string]any{"int": 3, "float": 1.5, "big": 12345678901, "neg": -2},
		},
		{
			name: "repeated blocks append",
			config: `config {
				  mount {
				    type = "bind"
				  }
				  mount {
				    type = "volume"
				    readonly = true
				  }
				}`,
			want: map[string]any{"mount": []map[string]any{
				{"type": "bind"},
				{"type": "volume", "readonly": true},
			}},
		},
		{
			name: "nested blocks and object arguments",
			config: `config {
				  logging {
				    type = "syslog"
				    config {
				      tag = "web"
				    }
				  }
				  sysctl = { "net.core.somaxconn" = "16384" }
				}`,
			want: map[string]any{
				"logging": []map[string]any{{
					"type":   "syslog",
					"config": []map[string]any{{"tag": "web"}},
				}},
				"sysctl": map[string]any{"net.core.somaxconn": "16384"},
			},
		},
		{
			name: "labelled block",
			config: `config {
				  volume "a" { size = 1 }
				}`,
			want: map[string]any{"volume": []map[string]any{{"a": []map[string]any{{"size": 1}}}}},
		},
		{
			name:   "config as an argument",
			config: `config = { image = "x", opts = { a = 1 } }`,
			want:   map[string]any{"image": "x", "opts": map[string]any{"a": 1}},
		},
		{
			name: "null and booleans",
			config: `config {
				  x = null
				  y = false
				}`,
			want: map[string]any{"x": nil, "y": false},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := "job \"j\" {\n group \"g\" {\n task \"t\" {\n" + tc.config + "\n}\n}\n}\n"
			job, err := Parse("config.hcl", []byte(src), nil)
			must.NoError(t, err)
			must.Eq(t, tc.want, job.TaskGroups[0].Tasks[0].Config)
		})
	}
}

func TestParse_Durations(t *testing.T) {
	cases := []struct {
		name    string
		value   string
		want    time.Duration
		wantErr string
	}{
		{name: "seconds", value: `"30s"`, want: 30 * time.Second},
		{name: "hours", value: `"1h"`, want: time.Hour},
		{name: "compound", value: `"1h30m5s"`, want: time.Hour + 30*time.Minute + 5*time.Second},
		{name: "sub-second", value: `"250ms"`, want: 250 * time.Millisecond},
		{name: "nanoseconds as number", value: `5000000000`, want: 5 * time.Second},
		{name: "from function", value: `format("%ds", 7)`, want: 7 * time.Second},
		{name: "missing unit", value: `"30"`, wantErr: `input.hcl:4,16-20: Invalid value; Inappropriate value for argument "kill_timeout": a duration such as "30s" is required: time: missing unit in duration "30"`},
		{name: "not a duration", value: `true`, wantErr: `a duration such as "30s" is required`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := `job "j" {
group "g" {
task "t" {
kill_timeout = ` + tc.value + `
shutdown_delay = ` + tc.value + `
}
}
}`
			job, err := Parse("input.hcl", []byte(src), nil)
			if tc.wantErr != "" {
				must.ErrorContains(t, err, tc.wantErr)
				return
			}
			must.NoError(t, err)
			task := job.TaskGroups[0].Tasks[0]
			must.Eq(t, tc.want, *task.KillTimeout)
			must.Eq(t, tc.want, task.ShutdownDelay)
		})
	}
}

func TestParse_Shorthands(t *testing.T) {
	cases := []struct {
		name    string
		body    string
		want    api.Constraint
		wantErr string
	}{
		{name: "version", body: `attribute = "${attr.os.version}"
			version = ">= 1.2"`, want: api.Constraint{LTarget: "${attr.os.version}", Operand: "version", RTarget: ">= 1.2"}},
		{name: "regexp", body: `attribute = "${attr.os.name}"
			regexp = "^ub"`, want: api.Constraint{LTarget: "${attr.os.name}", Operand: "regexp", RTarget: "^ub"}},
		{name: "distinct_property", body: `distinct_property = "${meta.rack}"
			value = "2"`, want: api.Constraint{LTarget: "${meta.rack}", Operand: "distinct_property", RTarget: "2"}},
		{name: "distinct_hosts false is no operator", body: `distinct_hosts = false`, want: api.Constraint{Operand: "="}},
		{name: "conflict", body: `operator = "="
			semver = "1.0"`, wantErr: `Conflicting operators`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := "job \"j\" {\n constraint {\n" + tc.body + "\n }\n}\n"
			job, err := Parse("input.hcl", []byte(src), nil)
			if tc.wantErr != "" {
				must.ErrorContains(t, err, tc.wantErr)
				return
			}
			must.NoError(t, err)
			must.Eq(t, &tc.want, job.Constraints[0])
		})
	}
}

func TestParse_Dynamic(t *testing.T) {
	src := `
variable "ports" {
  default = { http = 0, admin = 9090 }
}
job "j" {
  group "g" {
    network {
      dynamic "port" {
        for_each = var.ports
        labels   = [port.key]
        content {
          static = port.value
        }
      }
    }
    dynamic "task" {
      for_each = ["a", "b"]
      iterator = name
      labels   = [name.value]
      content {
        driver = "exec"
        env {
          WHO = "${name.value}-${NOMAD_ALLOC_ID}"
        }
        config {
          dynamic "mount" {
            for_each = [1, 2]
            content {
              n = mount.value
            }
          }
        }
      }
    }
  }
}
`
	job, err := Parse("input.hcl", []byte(src), nil)
	must.NoError(t, err)
	tg := job.TaskGroups[0]
	must.Eq(t, []api.Port{{Label: "http"}}, tg.Networks[0].DynamicPorts)
	must.Eq(t, []api.Port{{Label: "admin", Value: 9090}}, tg.Networks[0].ReservedPorts)
	must.SliceLen(t, 2, tg.Tasks)
	must.Eq(t, "b", tg.Tasks[1].Name)
	must.Eq(t, map[string]string{"WHO": "b-${NOMAD_ALLOC_ID}"}, tg.Tasks[1].Env)
	must.Eq(t, map[string]any{"mount": []map[string]any{{"n": 1}, {"n": 2}}}, tg.Tasks[0].Config)
}

func TestParse_TaskScaling(t *testing.T) {
	src := `job "j" {
  group "g" {
    task "t" {
      scaling "cpu" {
        enabled = true
        max     = 500
        policy {
          cooldown = "5m"
        }
      }
      scaling "mem" {
        min = 64
      }
    }
  }
}`
	job, err := Parse("input.hcl", []byte(src), nil)
	must.NoError(t, err)
	must.Eq(t, []*api.ScalingPolicy{
		{Type: "vertical_cpu", Enabled: new(true), Max: new(int64(500)), Policy: map[string]any{"cooldown": "5m"}},
		{Type: "vertical_mem", Min: new(int64(64))},
	}, job.TaskGroups[0].Tasks[0].ScalingPolicies)
}

// TestSpecsCoverAPI builds the decoder spec of every struct reachable from
// api.Job through HCL blocks, so a new api field of a shape the decoder does
// not know fails here rather than at a user's parse.
func TestSpecsCoverAPI(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var visit func(reflect.Type)
	visit = func(st reflect.Type) {
		if seen[st] {
			return
		}
		seen[st] = true
		spec := specFor(st)
		for _, f := range spec.blocks {
			sf := st.FieldByIndex(f.index)
			ft := sf.Type
			for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice || ft.Kind() == reflect.Map {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				visit(ft)
			}
		}
	}
	visit(reflect.TypeFor[api.Job]())
	must.True(t, seen[reflect.TypeFor[api.ConsulUpstream]()])
	must.True(t, seen[reflect.TypeFor[api.TaskCSIPluginConfig]()])
}
