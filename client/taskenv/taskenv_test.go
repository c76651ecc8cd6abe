package taskenv

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func testInput() Input {
	return Input{
		Alloc: &structs.Allocation{
			ID: "4c1c8a4e-0000-4000-8000-0000000000aa", Name: "web.api[2]", Namespace: "prod", TaskGroup: "api",
			Job: &structs.Job{ID: "web", Name: "web-name", ParentID: "web-parent", Meta: map[string]string{"owner": "job", "team": "a"}},
		},
		Group: &api.TaskGroup{Meta: map[string]string{"team": "group"}},
		Task: &api.Task{
			Name: "server",
			Meta: map[string]string{"build.id": "b-7"},
			Env: map[string]string{
				"RACK":     "${meta.rack}",
				"KERNEL":   "${attr.kernel.name}",
				"WHO":      "${NOMAD_TASK_NAME}@${node.unique.name}",
				"LITERAL":  "${nope} and ${attr.missing}",
				"BY_INDEX": `${env["NOMAD_ALLOC_INDEX"]}`,
			},
			Resources: &api.Resources{CPU: new(500), MemoryMB: new(256), MemoryMaxMB: new(512)},
		},
		Node: &structs.Node{
			ID: "node-1", Name: "box1", Datacenter: "dc2", NodeClass: "big", NodePool: "gpu",
			Attributes: map[string]string{"kernel.name": "linux", "unique.network.ip-address": "10.0.0.5"},
			Meta:       map[string]string{"rack": "r42"},
		},
		Region:   "eu",
		AllocDir: "/data/alloc/x/alloc", TaskDir: "/data/alloc/x/server/local", SecretsDir: "/data/alloc/x/server/secrets",
		Ports: []Port{
			{Label: "http", Value: 23456, HostIP: "10.0.0.9"},
			{Label: "db-port", Value: 24000, To: 5432},
		},
	}
}

func TestNew_Variables(t *testing.T) {
	env := New(testInput()).Map()
	want := map[string]string{
		"NOMAD_ALLOC_ID":           "4c1c8a4e-0000-4000-8000-0000000000aa",
		"NOMAD_SHORT_ALLOC_ID":     "4c1c8a4e",
		"NOMAD_ALLOC_NAME":         "web.api[2]",
		"NOMAD_ALLOC_INDEX":        "2",
		"NOMAD_JOB_ID":             "web",
		"NOMAD_JOB_NAME":           "web-name",
		"NOMAD_JOB_PARENT_ID":      "web-parent",
		"NOMAD_GROUP_NAME":         "api",
		"NOMAD_TASK_NAME":          "server",
		"NOMAD_NAMESPACE":          "prod",
		"NOMAD_REGION":             "eu",
		"NOMAD_DC":                 "dc2",
		"NOMAD_ALLOC_DIR":          "/data/alloc/x/alloc",
		"NOMAD_TASK_DIR":           "/data/alloc/x/server/local",
		"NOMAD_SECRETS_DIR":        "/data/alloc/x/server/secrets",
		"NOMAD_CPU_LIMIT":          "500",
		"NOMAD_MEMORY_LIMIT":       "256",
		"NOMAD_MEMORY_MAX_LIMIT":   "512",
		"NOMAD_PORT_http":          "23456",
		"NOMAD_HOST_PORT_http":     "23456",
		"NOMAD_IP_http":            "10.0.0.9",
		"NOMAD_ADDR_http":          "10.0.0.9:23456",
		"NOMAD_PORT_db_port":       "5432",
		"NOMAD_HOST_PORT_db_port":  "24000",
		"NOMAD_IP_db_port":         "10.0.0.5",
		"NOMAD_ADDR_db_port":       "10.0.0.5:24000",
		"NOMAD_META_owner":         "job",
		"NOMAD_META_team":          "group",
		"NOMAD_META_build.id":      "b-7",
		"NOMAD_META_build_id":      "b-7",
		"RACK":                     "r42",
		"KERNEL":                   "linux",
		"WHO":                      "server@box1",
		"LITERAL":                  "${nope} and ${attr.missing}",
		"BY_INDEX":                 "2",
		"NOMAD_NODE_ID":            "node-1",
		"NOMAD_NODE_NAME":          "box1",
		"NOMAD_ALLOC_PORT_http":    "23456",
		"NOMAD_ALLOC_PORT_db_port": "5432",
		"NOMAD_HOST_IP_http":       "10.0.0.9",
		"NOMAD_HOST_ADDR_http":     "10.0.0.9:23456",
		"NOMAD_HOST_IP_db_port":    "10.0.0.5",
		"NOMAD_HOST_ADDR_db_port":  "10.0.0.5:24000",
	}
	must.Eq(t, want, env)
}

func TestReplace(t *testing.T) {
	e := New(testInput())
	cases := []struct {
		name, in, want string
	}{
		{name: "no reference", in: "plain", want: "plain"},
		{name: "alloc ID", in: "id=${NOMAD_ALLOC_ID}", want: "id=4c1c8a4e-0000-4000-8000-0000000000aa"},
		{name: "node", in: "${node.unique.id}/${node.unique.name}/${node.datacenter}/${node.class}/${node.pool}/${node.region}",
			want: "node-1/box1/dc2/big/gpu/eu"},
		{name: "attribute", in: "${attr.kernel.name}", want: "linux"},
		{name: "node meta", in: "rack-${meta.rack}", want: "rack-r42"},
		{name: "task env", in: "${RACK}", want: "r42"},
		{name: "env index", in: `${env["NOMAD_JOB_ID"]}-${env['RACK']}`, want: "web-r42"},
		{name: "spaces inside", in: "${ NOMAD_JOB_ID }", want: "web"},
		{name: "unknown stays", in: "${NOMAD_NOPE}:${attr.nope}:${meta.nope}", want: "${NOMAD_NOPE}:${attr.nope}:${meta.nope}"},
		{name: "unclosed stays", in: "a ${NOMAD_JOB_ID", want: "a ${NOMAD_JOB_ID"},
		{name: "dollar alone", in: "$HOME and $ {x}", want: "$HOME and $ {x}"},
		{name: "adjacent", in: "${NOMAD_JOB_ID}${NOMAD_TASK_NAME}", want: "webserver"},
		{name: "no recursion", in: "${LITERAL}", want: "${nope} and ${attr.missing}"},
		{name: "port", in: "127.0.0.1:${NOMAD_PORT_http}", want: "127.0.0.1:23456"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, e.Replace(tc.in))
		})
	}
}

func TestReplaceConfig_Recursive(t *testing.T) {
	e := New(testInput())
	cfg := map[string]any{
		"command": "/bin/echo",
		"args":    []any{"${NOMAD_ALLOC_ID}", "${attr.kernel.name}", 3},
		"strs":    []string{"${meta.rack}"},
		"nested": []map[string]any{{
			"deeper": map[string]any{"x": "${node.unique.name}", "n": 1.5, "ok": true},
		}},
		"labels": map[string]string{"${NOMAD_JOB_ID}": "${NOMAD_JOB_ID}"},
	}
	got := e.ReplaceConfig(cfg)
	must.Eq(t, map[string]any{
		"command": "/bin/echo",
		"args":    []any{"4c1c8a4e-0000-4000-8000-0000000000aa", "linux", 3},
		"strs":    []string{"r42"},
		"nested": []map[string]any{{
			"deeper": map[string]any{"x": "box1", "n": 1.5, "ok": true},
		}},
		// Keys are left alone, values interpolated.
		"labels": map[string]string{"${NOMAD_JOB_ID}": "web"},
	}, got)
	// The job's configuration is not changed in place.
	must.Eq(t, "${NOMAD_ALLOC_ID}", cfg["args"].([]any)[0])
	must.Nil(t, e.ReplaceConfig(nil))
}

func TestNew_EnvBlockOverrides(t *testing.T) {
	in := testInput()
	in.Task.Env = map[string]string{"NOMAD_REGION": "mine", "PATH_LIKE": "${NOMAD_TASK_DIR}/bin"}
	env := New(in).Map()
	must.Eq(t, "mine", env["NOMAD_REGION"])
	must.Eq(t, "/data/alloc/x/server/local/bin", env["PATH_LIKE"])
}
