package agent

import (
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

// The official client's test harness writes its agent configuration as JSON
// into a file named like "nomad123456", with no extension.
func TestConfig_JSONContentWithoutExtension(t *testing.T) {
	cases := []struct {
		name, file, content string
	}{
		{"no extension", "nomad3172", `{"name":"n1","server":{"enabled":true,"bootstrap_expect":1},"ports":{"http":24646}}`},
		{"leading space and BOM", "agent.conf", "\xef\xbb\xbf \n {\"name\":\"n1\",\"server\":{\"enabled\":true,\"bootstrap_expect\":1},\"ports\":{\"http\":24646}}"},
		{"hcl name, json content", "agent.hcl", `{"name":"n1","server":{"enabled":true,"bootstrap_expect":1},"ports":{"http":24646}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			loaded, err := loadConfigString(t, tc.file, tc.content)
			must.NoError(t, err)
			got := DefaultConfig().Merge(loaded)
			must.Eq(t, "n1", got.Name)
			must.True(t, got.Server.Enabled)
			must.Eq(t, 1, got.Server.BootstrapExpect)
			must.Eq(t, 24646, got.Ports.HTTP)
		})
	}
}

// The harness's own file, byte for byte as it marshals TestServerConfig.
func TestConfig_OfficialHarnessFile(t *testing.T) {
	content := `{"name":"node-1","data_dir":"/tmp/nomad1","disable_update_check":true,"log_level":"ERROR",` +
		`"ports":{"http":24646,"rpc":24647,"serf":24648},"server":{"enabled":true,"bootstrap_expect":1},` +
		`"client":{"enabled":true,"options":{"test.tighten_network_timeouts":"true"}},"vault":{"enabled":false},` +
		`"acl":{"enabled":true},"telemetry":{"prometheus_metrics":true}}`
	loaded, err := loadConfigString(t, "nomad98765", content)
	must.NoError(t, err)
	got := DefaultConfig().Merge(loaded)
	must.True(t, got.ACL.Enabled)
	must.True(t, got.Client.Enabled)
	must.Eq(t, "true", got.Client.Options["test.tighten_network_timeouts"])
}

func TestConfig_RepeatedBlocksMerge(t *testing.T) {
	loaded, err := loadConfigString(t, "two.hcl", `
data_dir = "/tmp/x"
server {
  enabled = true
  job_tracked_versions = 3
}
client {
  meta { a = "1" }
}
server {
  bootstrap_expect = 1
  job_tracked_versions = 5
}
client {
  meta { b = "2" }
}
ports { http = 5000 }
`)
	must.NoError(t, err)
	got := DefaultConfig().Merge(loaded)
	must.True(t, got.Server.Enabled)
	must.Eq(t, 1, got.Server.BootstrapExpect)
	must.Eq(t, 5, got.Server.JobTrackedVersions) // the later block wins
	must.Eq(t, map[string]string{"a": "1", "b": "2"}, got.Client.Meta)
	must.Eq(t, 5000, got.Ports.HTTP)
	must.Eq(t, "/tmp/x", got.DataDir)
	must.Eq(t, 1, len(got.Files))
}

func TestConfig_RepeatedBlocksAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	writeConfigFile(t, dir, "a.hcl", "server {\n  enabled = true\n}\n")
	writeConfigFile(t, dir, "b.hcl", "server {\n  bootstrap_expect = 3\n}\n")
	loaded, err := LoadConfig(dir)
	must.NoError(t, err)
	got := DefaultConfig().Merge(loaded)
	must.True(t, got.Server.Enabled)
	must.Eq(t, 3, got.Server.BootstrapExpect)
}

func TestConfig_QuotedKeysInBlocks(t *testing.T) {
	cases := []struct {
		name, content string
		want          map[string]string
	}{
		{"one line", `client {
  options { "driver.raw_exec.enable" = "1" }
}`, map[string]string{"driver.raw_exec.enable": "1"}},
		{"several lines", `client {
  enabled = true
  options {
    "driver.raw_exec.enable" = "1"
    "docker.privileged.enabled" = "true"
  }
}`, map[string]string{"driver.raw_exec.enable": "1", "docker.privileged.enabled": "true"}},
		{"with hcl1 one-line items", `client { enabled = true  options { "a.b" = "1" } }`, map[string]string{"a.b": "1"}},
		{"argument form still works", `client {
  options = { "a.b" = "1" }
}`, map[string]string{"a.b": "1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			loaded, err := loadConfigString(t, "q.hcl", tc.content)
			must.NoError(t, err)
			got := DefaultConfig().Merge(loaded)
			must.Eq(t, tc.want, got.Client.Options)
		})
	}
}

// A rewrite to accept quoted keys must keep errors pointing at what was written.
func TestConfig_QuotedKeysErrorPosition(t *testing.T) {
	_, err := loadConfigString(t, "q.hcl", "client {\n  options { \"a.b\" = \"1\" }\n  bogus = 1\n}\n")
	must.Error(t, err)
	must.StrContains(t, err.Error(), "q.hcl:3,")
	must.True(t, strings.Contains(err.Error(), "bogus"), must.Sprint(err))
}
