package agent

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// actedOnKeys are the keys whose value reaches the running agent, server or client (or, for
// the blocks, whose content does). Each must be accepted by the decoder; every other key it
// accepts must warn when set (TestConfig_EveryKeyActedOnOrWarned).
var actedOnKeys = []string{
	"name", "region", "datacenter", "data_dir", "bind_addr", "log_level", "log_json", "enable_debug",
	"leave_on_interrupt", "leave_on_terminate",
	"ports.http", "ports.rpc", "ports.serf",
	"addresses.http", "addresses.rpc", "addresses.serf",
	"advertise.http", "advertise.rpc", "advertise.serf",
	"server.enabled", "server.bootstrap_expect", "server.num_schedulers",
	"server.retry_join", "server.retry_max", "server.retry_interval",
	"server.server_join.retry_join", "server.server_join.retry_max", "server.server_join.retry_interval",
	"server.job_gc_interval", "server.job_gc_threshold", "server.node_gc_threshold", "server.eval_gc_threshold",
	"server.job_tracked_versions", "server.job_max_count", "server.job_max_total_size",
	"server.event_buffer_size", "server.enable_event_broker", "server.purge_history_retention",
	"server.heartbeat_grace", "server.encrypt",
	"server.raft_snapshot_threshold", "server.raft_snapshot_interval", "server.raft_trailing_logs",
	"server.client_introduction.enforcement", "server.client_introduction.default_identity_ttl",
	"server.client_introduction.max_identity_ttl",
	"server.default_scheduler_config.scheduler_algorithm",
	"server.default_scheduler_config.preemption_config.system_scheduler_enabled",
	"server.default_scheduler_config.preemption_config.sysbatch_scheduler_enabled",
	"server.default_scheduler_config.preemption_config.batch_scheduler_enabled",
	"server.default_scheduler_config.preemption_config.service_scheduler_enabled",
	"client.enabled", "client.servers", "client.server_join.retry_join", "client.node_class", "client.node_pool",
	"client.disable_remote_exec", "client.state_dir", "client.alloc_dir", "client.network_interface",
	"client.cni_path", "client.bridge_network_name", "client.bridge_network_subnet",
	"client.host_volume.path", "client.host_volume.read_only",
	"client.host_network.cidr", "client.host_network.interface", "client.host_network.reserved_ports",
	"client.cpu_total_compute", "client.memory_total_mb", "client.min_dynamic_port", "client.max_dynamic_port",
	"client.reserved.cpu", "client.reserved.memory", "client.reserved.disk", "client.reserved.reserved_ports",
	"client.artifact.http_read_timeout", "client.artifact.http_max_size", "client.artifact.git_timeout",
	"client.artifact.decompression_file_count_limit", "client.artifact.decompression_size_limit",
	"client.meta", "client.options", "client.chroot_env",
	"acl.enabled", "acl.token_min_expiration_ttl", "acl.token_max_expiration_ttl",
	"ui.enabled",
	"limits.http_max_conns_per_client", "limits.rpc_max_conns_per_client",
	"limits.https_handshake_timeout", "limits.rpc_handshake_timeout",
	"tls.http", "tls.rpc", "tls.ca_file", "tls.cert_file", "tls.key_file", "tls.verify_server_hostname",
	"tls.verify_https_client", "tls.tls_min_version", "tls.rpc_upgrade_mode",
	"plugin.config",
	"telemetry.prometheus_metrics", "telemetry.collection_interval",
	"telemetry.publish_node_metrics", "telemetry.publish_allocation_metrics",
}

// refusedKeys are accepted by the schema and then refused with an error when set, which is
// as honest as acting on them.
var refusedKeys = []string{"client.server_join.retry_max", "client.server_join.retry_interval"}

// remainKeys are the keys a ",remain" body decodes by hand; any other remain body takes keys
// this build does not know, probed here with unlistedKey.
var remainKeys = map[reflect.Type][]string{
	reflect.TypeFor[fileClient](): {"meta", "options", "chroot_env"},
}

const unlistedKey = "unlisted_key"

// configKey is one key the decoder accepts: its path of block types and its own name.
type configKey struct {
	path []string
	// wholeBlock marks a block taken with any content (ignoredBlock).
	wholeBlock bool
}

func (k configKey) String() string { return strings.Join(k.path, ".") }

// decoderKeys lists every key the decode structs accept, from their hcl tags, recursively
// through blocks.
func decoderKeys(t reflect.Type, prefix []string) []configKey {
	var out []configKey
	for i := range t.NumField() {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("hcl")
		if !ok {
			continue
		}
		name, kind, _ := strings.Cut(tag, ",")
		path := append(slices.Clone(prefix), name)
		switch kind {
		case "label":
		case "remain":
			names, known := remainKeys[t]
			if !known {
				names = []string{unlistedKey}
			}
			for _, n := range names {
				out = append(out, configKey{path: append(slices.Clone(prefix), n)})
			}
		case "block":
			elem := blockType(f.Type)
			if elem == reflect.TypeFor[ignoredBlock]() {
				out = append(out, configKey{path: path, wholeBlock: true})
				continue
			}
			out = append(out, decoderKeys(elem, path)...)
		default:
			out = append(out, configKey{path: path})
		}
	}
	return out
}

func blockType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	return t
}

// keyFile writes a configuration that sets only key (and what its blocks require: labels and
// required arguments) to value.
func keyFile(t reflect.Type, path []string, wholeBlock bool, value string) string {
	name := path[0]
	var field reflect.StructField
	found := false
	for i := range t.NumField() {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("hcl"), ",")
		if tag == name && t.Field(i).Tag.Get("hcl") != ",remain" {
			field, found = t.Field(i), true
		}
	}
	if len(path) == 1 {
		if wholeBlock {
			return fmt.Sprintf("%s {\n  anything = %s\n}\n", name, value)
		}
		return fmt.Sprintf("%s = %s\n", name, value)
	}
	if !found {
		panic("no block " + name + " in " + t.Name())
	}
	elem := blockType(field.Type)
	var head, required strings.Builder
	head.WriteString(name)
	for i := range elem.NumField() {
		tag := elem.Field(i).Tag.Get("hcl")
		n, kind, _ := strings.Cut(tag, ",")
		switch {
		case kind == "label" && name == "plugin":
			// A driver this build has, so that only the key itself can warn.
			head.WriteString(` "docker"`)
		case kind == "label":
			head.WriteString(` "l"`)
		case kind == "" && n != "" && n != path[1]:
			fmt.Fprintf(&required, "%s = \"/required\"\n", n)
		}
	}
	return fmt.Sprintf("%s {\n%s%s}\n", head.String(), required.String(), keyFile(elem, path[1:], wholeBlock, value))
}

// keyValues are tried in turn until the decoder takes one: a bool, a number, a duration, a
// string, a list and a map cover every key's type.
var keyValues = []string{`true`, `1`, `"1s"`, `"x"`, `["x"]`, `{ a = "b" }`}

func TestConfig_EveryKeyActedOnOrWarned(t *testing.T) {
	keys := decoderKeys(reflect.TypeFor[fileConfig](), nil)
	walked := map[string]bool{}
	for _, k := range keys {
		walked[k.String()] = true
	}
	for _, k := range slices.Concat(actedOnKeys, refusedKeys) {
		if !walked[k] {
			t.Errorf("%s is listed as acted on or refused but the decoder has no such key", k)
		}
	}

	for _, k := range keys {
		key := k.String()
		var loaded *Config
		var errs []string
		for _, v := range keyValues {
			cfg, err := loadConfigString(t, "key.hcl", keyFile(reflect.TypeFor[fileConfig](), k.path, k.wholeBlock, v))
			if err == nil {
				loaded = cfg
				break
			}
			errs = append(errs, err.Error())
		}
		switch {
		case slices.Contains(refusedKeys, key):
			if loaded != nil {
				t.Errorf("%s is listed as refused but loads", key)
			}
			continue
		case loaded == nil:
			t.Errorf("%s: no value loads: %s", key, strings.Join(errs, " | "))
			continue
		}
		warned := slices.ContainsFunc(loaded.Warnings, func(w string) bool { return strings.Contains(w, key) })
		acted := slices.Contains(actedOnKeys, key)
		switch {
		case acted && len(loaded.Warnings) > 0:
			t.Errorf("%s is acted on yet the file setting it warns: %q", key, loaded.Warnings)
		case !acted && !warned:
			t.Errorf("%s is accepted, not acted on and set without a warning (warnings: %q)", key, loaded.Warnings)
		}
	}
}

// TestConfig_ActedOnKeysReachServer checks a sample of actedOnKeys really reaches the server's
// configuration.
func TestConfig_ActedOnKeysReachServer(t *testing.T) {
	loaded, err := loadConfigString(t, "sample.hcl", `
server {
  enabled            = true
  job_gc_interval    = "7m"
  heartbeat_grace    = "17s"
  job_max_total_size = "3MiB"
  default_scheduler_config {
    scheduler_algorithm = "spread"
    preemption_config {
      batch_scheduler_enabled = true
    }
  }
  client_introduction {
    enforcement = "strict"
  }
}
acl {
  enabled                  = true
  token_max_expiration_ttl = "5h"
}
limits {
  rpc_max_conns_per_client = 9
}
`)
	must.NoError(t, err)
	must.SliceEmpty(t, loaded.Warnings)
	sc := serverConfig(DefaultConfig().Merge(loaded), hclog.NewNullLogger())
	must.Eq(t, 7*time.Minute, sc.JobGCInterval)
	must.Eq(t, 17*time.Second, sc.HeartbeatGrace)
	must.Eq(t, int64(3<<20), sc.JobMaxTotalSize)
	must.Eq(t, "spread", sc.SchedulerAlgorithm)
	must.True(t, sc.PreemptionConfig.BatchSchedulerEnabled)
	must.Eq(t, "strict", sc.ClientIntroduction.Enforcement)
	must.True(t, sc.ACLEnabled)
	must.Eq(t, 5*time.Hour, sc.ACLTokenMaxExpirationTTL)
	must.Eq(t, 9, sc.RPCMaxConnsPerClient)
}

func TestConfig_WarningsNameEachIgnoredKeyOnce(t *testing.T) {
	dir := t.TempDir()
	writeConfigFile(t, dir, "a.hcl", `
plugin_dir = "/opt/plugins"
consul { address = "127.0.0.1:8500" }
server {
  raft_protocol = 3
  default_scheduler_config {
    memory_oversubscription_enabled = true
  }
}
acl { token_ttl = "30s" }
telemetry {
  statsd_address = "127.0.0.1:8125"
}
ui {
  label { text = "prod" }
}
plugin "java" {}
plugin "raw_exec" {
  args = ["-v"]
  config {
    enabled    = true
    no_cgroups = true
  }
}
`)
	writeConfigFile(t, dir, "b.json", `{"consul": {"address": "127.0.0.1:8500"}, "vault": {"enabled": false},
  "telemetry": {"statsd_address": "127.0.0.1:8125", "disable_hostname": true}}`)
	loaded, err := LoadConfig(dir)
	must.NoError(t, err)
	got := DefaultConfig().Merge(loaded)
	must.Eq(t, []string{
		"config: plugin_dir is ignored: this build loads no external plugins; its drivers are built in",
		"config: consul block is ignored: this build has no Consul integration",
		"config: server.raft_protocol is ignored: this build speaks only Raft protocol 3",
		"config: server.default_scheduler_config.memory_oversubscription_enabled is ignored: only scheduler_algorithm and preemption_config are read from the file; set the rest with `nomad operator scheduler set-config`",
		"config: telemetry.statsd_address is ignored: this build serves its metrics only at /v1/metrics, with no external sinks or filters",
		"config: acl.token_ttl is ignored: this build keeps no timed ACL cache: servers read tokens, policies and roles from their state on every request",
		"config: ui.label is ignored: the web UI is served as built",
		`config: plugin "java" is ignored: this build has no such driver (its drivers are built in: docker, exec, mock_driver, raw_exec)`,
		`config: plugin.args of plugin "raw_exec" is ignored: its drivers are built in, so there is no plugin binary to pass them to`,
		`config: plugin "raw_exec" config.no_cgroups is ignored: this build reads no such option`,
		"config: vault block is ignored: this build has no Vault integration",
		"config: telemetry.disable_hostname is ignored: this build serves its metrics only at /v1/metrics, with no external sinks or filters",
	}, got.Warnings)
}

func TestAgent_LogsAndReportsConfigWarnings(t *testing.T) {
	loaded, err := loadConfigString(t, "agent.hcl", "vault {\n  enabled = true\n}\n")
	must.NoError(t, err)
	cfg := DevConfig().Merge(loaded)
	cfg.Client.Enabled = false
	cfg.Server.NumSchedulers = 0
	cfg.Ports.HTTP = 0
	var logs logCapture
	a, err := NewAgent(cfg, hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: &logs}))
	must.NoError(t, err)
	t.Cleanup(a.Shutdown)

	const want = "config: vault block is ignored: this build has no Vault integration"
	must.StrContains(t, logs.String(), want)
	must.Eq(t, 1, strings.Count(logs.String(), want))

	c, err := api.NewClient(&api.Config{Address: "http://" + a.HTTPAddr()})
	must.NoError(t, err)
	t.Cleanup(c.Close)
	self, err := c.Agent().Self()
	must.NoError(t, err)
	must.Eq[any](t, []any{want}, self.Config["Warnings"])
}
