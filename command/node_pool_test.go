package command

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func TestParseNodePoolSpec(t *testing.T) {
	cases := []struct {
		name    string
		src     string
		want    *api.NodePool
		wantErr string
	}{
		{
			name: "hcl",
			src: `node_pool "gpu" {
  description       = "GPUs"
  node_identity_ttl = "2h"
  meta {
    team = "ml"
  }
  scheduler_config {
    scheduler_algorithm = "spread"
  }
}`,
			want: &api.NodePool{Name: "gpu", Description: "GPUs", NodeIdentityTTL: 2 * time.Hour, Meta: map[string]string{"team": "ml"},
				SchedulerConfiguration: &api.NodePoolSchedulerConfiguration{SchedulerAlgorithm: "spread"}},
		},
		{name: "json", src: `{"Name":"gpu","Description":"GPUs","NodeIdentityTTL":"1h"}`,
			want: &api.NodePool{Name: "gpu", Description: "GPUs", NodeIdentityTTL: time.Hour}},
		{name: "unknown key", src: `node_pool "gpu" { colour = "red" }`, wantErr: "Unsupported argument"},
		{name: "bad ttl", src: `node_pool "gpu" { node_identity_ttl = "soon" }`, wantErr: "invalid node_identity_ttl"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseNodePoolSpec([]byte(tc.src))
			if tc.wantErr != "" {
				must.ErrorContains(t, err, tc.wantErr)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.want, got)
		})
	}
}

func TestNodePoolCommands(t *testing.T) {
	file := filepath.Join(t.TempDir(), "pool.hcl")
	must.NoError(t, os.WriteFile(file, []byte(`node_pool "gpu" { description = "GPUs" }`), 0o600))
	fa := newFakeAgent(t, map[string]route{
		"PUT /v1/node/pools":       jsonBody(`{}`),
		"GET /v1/node/pools":       jsonBody(`[{"Name":"all","Description":"every node"},{"Name":"default","Description":""}]`),
		"GET /v1/node/pool/gpu":    jsonBody(`{"Name":"gpu","Description":"GPUs","Meta":{"team":"ml"},"NodeIdentityTTL":"1h0m0s"}`),
		"DELETE /v1/node/pool/gpu": jsonBody(`{}`),
		"DELETE /v1/node/pool/all": textError(400, `deleting built-in node pool "all" is not allowed`),
	})
	cases := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{name: "apply", args: []string{"node", "pool", "apply", file}, wantOut: "Successfully applied node pool \"gpu\"!\n"},
		{name: "list", args: []string{"node", "pool", "list"}, wantOut: "Name     Description\nall      every node\ndefault\n"},
		{name: "info", args: []string{"node", "pool", "info", "gpu"},
			wantOut: "Name              = gpu\nDescription       = GPUs\nNode Identity TTL = 1h0m0s\nMeta team         = ml\n"},
		{name: "delete", args: []string{"node", "pool", "delete", "gpu"}, wantOut: "Successfully deleted node pool \"gpu\"!\n"},
		{name: "delete built-in", args: []string{"node", "pool", "delete", "all"}, wantCode: 1,
			wantErr: "Error deleting node pool: Unexpected response code: 400 (deleting built-in node pool \"all\" is not allowed)\n"},
		{name: "apply needs a file", args: []string{"node", "pool", "apply"}, wantCode: 1, wantErr: "This command takes one argument: <file>\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, fa.srv.URL, "", tc.args...)
			must.Eq(t, tc.wantCode, code, must.Sprint(errOut))
			must.Eq(t, tc.wantOut, out)
			must.Eq(t, tc.wantErr, errOut)
		})
	}
	reqs := fa.find("PUT", "/v1/node/pools")
	must.SliceLen(t, 1, reqs)
	var body api.NodePool
	must.NoError(t, json.Unmarshal([]byte(reqs[0].Body), &body))
	must.Eq(t, "gpu", body.Name)
	must.Eq(t, "GPUs", body.Description)
}
