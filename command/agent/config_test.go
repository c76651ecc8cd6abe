package agent

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// writeConfigFile writes content to dir/name and returns the path.
func writeConfigFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	must.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

// loadConfigString loads content from a file of the given name in a fresh
// temporary directory.
func loadConfigString(t *testing.T, name, content string) (*Config, error) {
	t.Helper()
	return LoadConfig(writeConfigFile(t, t.TempDir(), name, content))
}

// exported returns a copy of c without the replay closures, which
// comparisons cannot look inside.
func exported(c *Config) *Config {
	out := c.Copy()
	out.assignments = nil
	return out
}

func TestConfig_Defaults(t *testing.T) {
	c := DefaultConfig()
	host, _ := os.Hostname()

	cases := []struct {
		name string
		got  any
		want any
	}{
		{name: "name is hostname", got: c.Name, want: host},
		{name: "region", got: c.Region, want: "global"},
		{name: "datacenter", got: c.Datacenter, want: "dc1"},
		{name: "bind_addr", got: c.BindAddr, want: "0.0.0.0"},
		{name: "log_level", got: c.LogLevel, want: "INFO"},
		{name: "ports", got: *c.Ports, want: Ports{HTTP: 4646, RPC: 4647, Serf: 4648}},
		{name: "server disabled", got: c.Server.Enabled, want: false},
		{name: "job_gc_interval", got: c.Server.JobGCInterval, want: 5 * time.Minute},
		{name: "job_gc_threshold", got: c.Server.JobGCThreshold, want: 4 * time.Hour},
		{name: "node_gc_threshold", got: c.Server.NodeGCThreshold, want: 24 * time.Hour},
		{name: "eval_gc_threshold", got: c.Server.EvalGCThreshold, want: time.Hour},
		{name: "job_tracked_versions", got: c.Server.JobTrackedVersions, want: 6},
		{name: "event_buffer_size", got: c.Server.EventBufferSize, want: 100},
		{name: "enable_event_broker", got: c.Server.EnableEventBroker, want: true},
		{name: "purge_history_retention", got: c.Server.PurgeHistoryRetention, want: 720 * time.Hour},
		{name: "heartbeat_grace", got: c.Server.HeartbeatGrace, want: 10 * time.Second},
		{name: "client_introduction", got: c.Server.ClientIntroduction,
			want: ClientIntroductionConfig{Enforcement: "warn", DefaultIdentityTTL: 5 * time.Minute, MaxIdentityTTL: 30 * time.Minute}},
		{name: "num_schedulers", got: c.Server.NumSchedulers, want: runtime.NumCPU()},
		{name: "client disabled", got: c.Client.Enabled, want: false},
		{name: "node_pool", got: c.Client.NodePool, want: "default"},
		{name: "acl disabled", got: c.ACL.Enabled, want: false},
		{name: "ui enabled", got: c.UI.Enabled, want: true},
		{name: "http_max_conns_per_client", got: c.Limits.HTTPMaxConnsPerClient, want: 100},
		{name: "not dev", got: c.DevMode, want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, tc.got)
		})
	}
}

func TestConfig_DevConfig(t *testing.T) {
	c := DevConfig()
	must.True(t, c.DevMode)
	must.Eq(t, "127.0.0.1", c.BindAddr)
	must.Eq(t, "", c.DataDir)
	must.Eq(t, "DEBUG", c.LogLevel)
	must.True(t, c.Server.Enabled)
	must.Eq(t, 1, c.Server.BootstrapExpect)
	must.True(t, c.Client.Enabled)
	must.Eq(t, DefaultConfig().Ports, c.Ports)
	must.NoError(t, c.Validate())

	c.NormalizeAddrs()
	must.Eq(t, AdvertiseAddrs{HTTP: "127.0.0.1:4646", RPC: "127.0.0.1:4647", Serf: "127.0.0.1:4648"}, *c.Advertise)
}

// fullHCL sets every key the loader knows, each to a value that differs from
// DefaultConfig, so TestConfig_FullFile can demand that every field changed.
const fullHCL = `
name                 = "node-a"
region               = "eu"
datacenter           = "dc9"
data_dir             = "/var/lib/nomad"
plugin_dir           = "/opt/nomad/plugins"
bind_addr            = "10.0.0.5"
log_level            = "TRACE"
log_json             = true
enable_debug         = true
leave_on_interrupt   = true
leave_on_terminate   = true
disable_update_check = true

ports {
  http = 5646
  rpc  = 5647
  serf = 5648
}

addresses {
  http = "10.0.0.6"
  rpc  = "10.0.0.7"
  serf = "10.0.0.8"
}

advertise {
  http = "1.2.3.4:5646"
  rpc  = "1.2.3.4"
  serf = "1.2.3.4:6000"
}

server {
  enabled                 = true
  bootstrap_expect        = 3
  num_schedulers          = 123
  job_gc_interval         = "10m"
  job_gc_threshold        = "8h"
  node_gc_threshold       = "48h"
  eval_gc_threshold       = "2h"
  job_tracked_versions    = 9
  job_max_count           = 1234
  job_max_total_size      = "48MiB"
  event_buffer_size       = 250
  enable_event_broker     = false
  purge_history_retention = "48h"
  heartbeat_grace         = "30s"
  raft_snapshot_threshold = 64
  raft_snapshot_interval  = "2s"
  raft_trailing_logs      = 32
  encrypt                 = "c2VjcmV0"

  client_introduction {
    enforcement          = "strict"
    default_identity_ttl = "10m"
    max_identity_ttl     = "2h"
  }
  raft_protocol           = 3
  authoritative_region    = "us"

  server_join {
    retry_join     = ["10.0.0.1", "10.0.0.2"]
    retry_max      = 5
    retry_interval = "15s"
  }

  default_scheduler_config {
    scheduler_algorithm = "spread"
    preemption_config {
      system_scheduler_enabled   = false
      sysbatch_scheduler_enabled = true
      batch_scheduler_enabled    = true
      service_scheduler_enabled  = true
    }
  }
}

client {
  enabled             = true
  servers             = ["10.0.0.1:4647"]
  node_class          = "gpu"

  server_join {
    retry_join = ["10.0.0.9:4647"]
  }

  node_pool           = "batch"
  disable_remote_exec = true
  state_dir           = "/var/lib/nomad/client"
  alloc_dir           = "/var/lib/nomad/alloc"
  network_interface   = "eth1"
  cni_path            = "/opt/cni/bin"
  bridge_network_name = "nomad0"
  bridge_network_subnet = "172.26.80.0/20"
  cpu_total_compute   = 8000
  memory_total_mb     = 4096
  min_dynamic_port    = 25000
  max_dynamic_port    = 26000

  artifact {
    http_read_timeout              = "5m"
    http_max_size                  = "1GiB"
    git_timeout                    = "2m"
    decompression_file_count_limit = 100
    decompression_size_limit       = "2GiB"
  }

  reserved {
    cpu            = 500
    memory         = 512
    disk           = 1024
    reserved_ports = "22"
  }

  meta {
    rack = "r1"
  }

  options = {
    "driver.raw_exec.enable" = "1"
  }

  chroot_env = {
    "/bin" = "/bin"
  }

  host_volume "mysql" {
    path      = "/opt/mysql"
    read_only = true
  }

  host_network "public" {
    cidr           = "10.0.0.0/8"
    interface      = "eth1"
    reserved_ports = "22,80-90"
  }
}

acl {
  enabled                  = true
  token_ttl                = "1m"
  policy_ttl               = "2m"
  role_ttl                 = "3m"
  token_min_expiration_ttl = "5m"
  token_max_expiration_ttl = "48h"
}

ui {
  enabled = false
  content_security_policy {
    default_src = ["'none'"]
  }
}

limits {
  http_max_conns_per_client = 7
  rpc_max_conns_per_client  = 8
  https_handshake_timeout   = "9s"
  rpc_handshake_timeout     = "11s"
}

tls {
  http                   = true
  rpc                    = true
  ca_file                = "/etc/nomad/ca.pem"
  cert_file              = "/etc/nomad/server.pem"
  key_file               = "/etc/nomad/server-key.pem"
  verify_server_hostname = true
  verify_https_client    = true
  tls_min_version        = "tls13"
  rpc_upgrade_mode       = true
}

plugin "docker" {
  args = ["-v"]
  config {
    allow_privileged = true
    extra_labels     = ["job_name"]
    volumes {
      enabled = true
    }
    auth "registry" {
      helper = "ecr"
    }
  }
}

telemetry {
  collection_interval        = "1s"
  publish_allocation_metrics = true
}

consul {
  address = "127.0.0.1:8500"
}

vault {
  enabled = false
}
`

// fullJSON is fullHCL in HCL's JSON syntax.
const fullJSON = `{
  "name": "node-a", "region": "eu", "datacenter": "dc9",
  "data_dir": "/var/lib/nomad", "plugin_dir": "/opt/nomad/plugins",
  "bind_addr": "10.0.0.5", "log_level": "TRACE", "log_json": true,
  "enable_debug": true, "leave_on_interrupt": true, "leave_on_terminate": true,
  "disable_update_check": true,
  "ports": {"http": 5646, "rpc": 5647, "serf": 5648},
  "addresses": {"http": "10.0.0.6", "rpc": "10.0.0.7", "serf": "10.0.0.8"},
  "advertise": {"http": "1.2.3.4:5646", "rpc": "1.2.3.4", "serf": "1.2.3.4:6000"},
  "server": {
    "enabled": true, "bootstrap_expect": 3, "num_schedulers": 123,
    "job_gc_interval": "10m", "job_gc_threshold": "8h", "node_gc_threshold": "48h", "eval_gc_threshold": "2h",
    "job_tracked_versions": 9, "job_max_count": 1234, "job_max_total_size": 50331648, "event_buffer_size": 250, "enable_event_broker": false,
    "purge_history_retention": "48h", "heartbeat_grace": "30s",
    "raft_snapshot_threshold": 64, "raft_snapshot_interval": "2s", "raft_trailing_logs": 32,
    "client_introduction": {"enforcement": "strict", "default_identity_ttl": "10m", "max_identity_ttl": "2h"},
    "encrypt": "c2VjcmV0", "raft_protocol": 3, "authoritative_region": "us",
    "server_join": {"retry_join": ["10.0.0.1", "10.0.0.2"], "retry_max": 5, "retry_interval": "15s"},
    "default_scheduler_config": {"scheduler_algorithm": "spread", "preemption_config": {"system_scheduler_enabled": false, "sysbatch_scheduler_enabled": true, "batch_scheduler_enabled": true, "service_scheduler_enabled": true}}
  },
  "client": {
    "enabled": true, "servers": ["10.0.0.1:4647"], "server_join": {"retry_join": ["10.0.0.9:4647"]}, "node_class": "gpu", "node_pool": "batch",
    "disable_remote_exec": true, "state_dir": "/var/lib/nomad/client",
    "alloc_dir": "/var/lib/nomad/alloc", "network_interface": "eth1",
    "cni_path": "/opt/cni/bin", "bridge_network_name": "nomad0", "bridge_network_subnet": "172.26.80.0/20",
    "cpu_total_compute": 8000, "memory_total_mb": 4096, "min_dynamic_port": 25000, "max_dynamic_port": 26000,
    "reserved": {"cpu": 500, "memory": 512, "disk": 1024, "reserved_ports": "22"},
    "artifact": {"http_read_timeout": "5m", "http_max_size": "1GiB", "git_timeout": "2m", "decompression_file_count_limit": 100, "decompression_size_limit": "2GiB"},
    "meta": {"rack": "r1"},
    "options": {"driver.raw_exec.enable": "1"},
    "chroot_env": {"/bin": "/bin"},
    "host_volume": {"mysql": {"path": "/opt/mysql", "read_only": true}},
    "host_network": {"public": {"cidr": "10.0.0.0/8", "interface": "eth1", "reserved_ports": "22,80-90"}}
  },
  "acl": {
    "enabled": true, "token_ttl": "1m", "policy_ttl": "2m", "role_ttl": "3m",
    "token_min_expiration_ttl": "5m", "token_max_expiration_ttl": "48h"
  },
  "ui": {"enabled": false, "content_security_policy": {"default_src": ["'none'"]}},
  "limits": {
    "http_max_conns_per_client": 7, "rpc_max_conns_per_client": 8,
    "https_handshake_timeout": "9s", "rpc_handshake_timeout": "11s"
  },
  "tls": {
    "http": true, "rpc": true, "ca_file": "/etc/nomad/ca.pem", "cert_file": "/etc/nomad/server.pem",
    "key_file": "/etc/nomad/server-key.pem", "verify_server_hostname": true, "verify_https_client": true,
    "tls_min_version": "tls13", "rpc_upgrade_mode": true
  },
  "plugin": {"docker": {"args": ["-v"], "config": {
    "allow_privileged": true, "extra_labels": ["job_name"],
    "volumes": {"enabled": true}, "auth": {"registry": {"helper": "ecr"}}
  }}},
  "telemetry": {"collection_interval": "1s", "publish_allocation_metrics": true},
  "consul": {"address": "127.0.0.1:8500"},
  "vault": {"enabled": false}
}`

func TestConfig_FullFile(t *testing.T) {
	loaded, err := loadConfigString(t, "full.hcl", fullHCL)
	must.NoError(t, err)
	got := DefaultConfig().Merge(loaded)

	must.Eq(t, "node-a", got.Name)
	must.Eq(t, "/opt/nomad/plugins", got.PluginDir)
	must.Eq(t, Ports{HTTP: 5646, RPC: 5647, Serf: 5648}, *got.Ports)
	must.Eq(t, Addresses{HTTP: "10.0.0.6", RPC: "10.0.0.7", Serf: "10.0.0.8"}, *got.Addresses)
	must.Eq(t, ServerConfig{
		Enabled:               true,
		BootstrapExpect:       3,
		NumSchedulers:         123,
		RetryJoin:             []string{"10.0.0.1", "10.0.0.2"},
		RetryMaxAttempts:      5,
		RetryInterval:         15 * time.Second,
		JobGCInterval:         10 * time.Minute,
		JobGCThreshold:        8 * time.Hour,
		NodeGCThreshold:       48 * time.Hour,
		EvalGCThreshold:       2 * time.Hour,
		JobTrackedVersions:    9,
		JobMaxCount:           1234,
		JobMaxTotalSize:       48 << 20,
		SchedulerAlgorithm:    "spread",
		PreemptionConfig:      structs.PreemptionConfig{SysBatchSchedulerEnabled: true, BatchSchedulerEnabled: true, ServiceSchedulerEnabled: true},
		EventBufferSize:       250,
		EnableEventBroker:     false,
		PurgeHistoryRetention: 48 * time.Hour,
		HeartbeatGrace:        30 * time.Second,
		RaftSnapshotThreshold: 64,
		RaftSnapshotInterval:  2 * time.Second,
		RaftTrailingLogs:      32,
		AuthoritativeRegion:   "us",
		ClientIntroduction:    ClientIntroductionConfig{Enforcement: "strict", DefaultIdentityTTL: 10 * time.Minute, MaxIdentityTTL: 2 * time.Hour},
		EncryptKey:            "c2VjcmV0",
	}, *got.Server)
	must.Eq(t, ClientConfig{
		Enabled:           true,
		Servers:           []string{"10.0.0.1:4647"},
		RetryJoin:         []string{"10.0.0.9:4647"},
		NodeClass:         "gpu",
		NodePool:          "batch",
		Meta:              map[string]string{"rack": "r1"},
		Options:           map[string]string{"driver.raw_exec.enable": "1"},
		DisableRemoteExec: true,
		StateDir:          "/var/lib/nomad/client",
		AllocDir:          "/var/lib/nomad/alloc",
		NetworkInterface:  "eth1", CNIPath: "/opt/cni/bin", BridgeNetworkName: "nomad0", BridgeNetworkSubnet: "172.26.80.0/20",
		HostVolumes:     []*HostVolumeConfig{{Name: "mysql", Path: "/opt/mysql", ReadOnly: true}},
		HostNetworks:    []*HostNetworkConfig{{Name: "public", CIDR: "10.0.0.0/8", Interface: "eth1", ReservedPorts: "22,80-90"}},
		CPUTotalCompute: 8000,
		MemoryTotalMB:   4096,
		MinDynamicPort:  25000,
		MaxDynamicPort:  26000,
		Reserved:        &ReservedConfig{CPU: 500, MemoryMB: 512, DiskMB: 1024, ReservedPorts: "22"},
		Artifact: &ArtifactConfig{HTTPReadTimeout: 5 * time.Minute, HTTPMaxSize: 1 << 30, GitTimeout: 2 * time.Minute,
			DecompressionFileCountLimit: 100, DecompressionSizeLimit: 2 << 30},
		ChrootEnv: map[string]string{"/bin": "/bin"},
	}, *got.Client)
	must.Eq(t, ACLConfig{
		Enabled:               true,
		TokenTTL:              time.Minute,
		PolicyTTL:             2 * time.Minute,
		RoleTTL:               3 * time.Minute,
		TokenMinExpirationTTL: 5 * time.Minute,
		TokenMaxExpirationTTL: 48 * time.Hour,
	}, *got.ACL)
	must.Eq(t, Limits{
		HTTPMaxConnsPerClient: 7,
		RPCMaxConnsPerClient:  8,
		HTTPSHandshakeTimeout: 9 * time.Second,
		RPCHandshakeTimeout:   11 * time.Second,
	}, *got.Limits)
	must.Eq(t, TLSConfig{
		EnableHTTP: true, EnableRPC: true,
		CAFile: "/etc/nomad/ca.pem", CertFile: "/etc/nomad/server.pem", KeyFile: "/etc/nomad/server-key.pem",
		VerifyServerHostname: true, VerifyHTTPSClient: true, TLSMinVersion: "tls13", RPCUpgradeMode: true,
	}, *got.TLS)
	must.Eq(t, []*PluginConfig{{
		Name: "docker",
		Args: []string{"-v"},
		Config: map[string]any{
			"allow_privileged": true,
			"extra_labels":     []any{"job_name"},
			"volumes":          map[string]any{"enabled": true},
			"auth":             map[string]any{"registry": map[string]any{"helper": "ecr"}},
		},
	}}, got.Plugins)

	// Every field must be reachable from a file key: a field added to Config
	// without an assignment keeps its default and fails here.
	for _, path := range unchangedFields(reflect.ValueOf(DefaultConfig()), reflect.ValueOf(got), "Config") {
		switch path {
		case "Config.DevMode": // set by -dev only
		case "Config.Client.IntroToken": // a secret: flag or environment only, as upstream
		default:
			t.Errorf("%s is not set by any key of the full configuration file", path)
		}
	}
}

// unchangedFields lists the exported leaf fields equal in a and b.
func unchangedFields(a, b reflect.Value, path string) []string {
	if a.Kind() == reflect.Pointer && a.Elem().Kind() == reflect.Struct {
		if a.IsNil() || b.IsNil() {
			return nil
		}
		a, b = a.Elem(), b.Elem()
	}
	if a.Kind() != reflect.Struct {
		if reflect.DeepEqual(a.Interface(), b.Interface()) {
			return []string{path}
		}
		return nil
	}
	var out []string
	for i := range a.NumField() {
		f := a.Type().Field(i)
		if f.IsExported() {
			out = append(out, unchangedFields(a.Field(i), b.Field(i), path+"."+f.Name)...)
		}
	}
	return out
}

func TestConfig_JSONMatchesHCL(t *testing.T) {
	fromHCL, err := loadConfigString(t, "full.hcl", fullHCL)
	must.NoError(t, err)
	fromJSON, err := loadConfigString(t, "full.json", fullJSON)
	must.NoError(t, err)

	hclCfg, jsonCfg := exported(fromHCL), exported(fromJSON)
	hclCfg.Files, jsonCfg.Files = nil, nil
	must.Eq(t, hclCfg, jsonCfg)
}

func TestConfig_LoadDirectory(t *testing.T) {
	dir := t.TempDir()
	// Lexical order: 01 < 02 < 10, so "10-last" wins although it sorts after
	// "02" only as text.
	a := writeConfigFile(t, dir, "01-base.hcl", `
region = "r1"
datacenter = "d1"
server {
  enabled = true
  job_tracked_versions = 3
}
client {
  meta { a = "1" }
}
plugin "raw_exec" {
  config { enabled = true }
}
`)
	b := writeConfigFile(t, dir, "02-override.json", `{
  "region": "r2",
  "server": {"job_tracked_versions": 4},
  "client": {"meta": {"b": "2"}},
  "plugin": {"raw_exec": {"config": {"enabled": false}}}
}`)
	c := writeConfigFile(t, dir, "10-last.hcl", `region = "r3"`)
	writeConfigFile(t, dir, "README.md", "not config")
	writeConfigFile(t, dir, ".#editor.hcl", "not = config = at all")
	must.NoError(t, os.Mkdir(filepath.Join(dir, "sub.hcl"), 0o755))

	loaded, err := LoadConfig(dir)
	must.NoError(t, err)
	got := DefaultConfig().Merge(loaded)

	must.Eq(t, []string{a, b, c}, got.Files)
	must.Eq(t, "r3", got.Region)
	must.Eq(t, "d1", got.Datacenter)
	must.True(t, got.Server.Enabled)
	must.Eq(t, 4, got.Server.JobTrackedVersions)
	must.Eq(t, map[string]string{"a": "1", "b": "2"}, got.Client.Meta)
	must.Eq(t, []*PluginConfig{{Name: "raw_exec", Config: map[string]any{"enabled": false}}}, got.Plugins)
}

func TestConfig_LoadEmptyDirectory(t *testing.T) {
	loaded, err := LoadConfig(t.TempDir())
	must.NoError(t, err)
	must.Eq(t, DefaultConfig().Region, DefaultConfig().Merge(loaded).Region)
	must.SliceEmpty(t, loaded.Files)
}

// TestConfig_ConfigFlagTwice is -config a.hcl -config b.hcl: later wins,
// including where b turns something off.
func TestConfig_ConfigFlagTwice(t *testing.T) {
	dir := t.TempDir()
	first := writeConfigFile(t, dir, "a.hcl", `
data_dir = "/data"
server {
  enabled = true
  num_schedulers = 2
  retry_join = ["10.0.0.1"]
}
client { enabled = true }
`)
	second := writeConfigFile(t, dir, "b.hcl", `
log_level = "WARN"
server { num_schedulers = 4 }
client { enabled = false }
`)
	cfg := DefaultConfig()
	for _, path := range []string{first, second} {
		loaded, err := LoadConfig(path)
		must.NoError(t, err)
		cfg = cfg.Merge(loaded)
	}
	must.Eq(t, []string{first, second}, cfg.Files)
	must.Eq(t, "/data", cfg.DataDir)
	must.Eq(t, "WARN", cfg.LogLevel)
	must.True(t, cfg.Server.Enabled)
	must.Eq(t, 4, cfg.Server.NumSchedulers)
	must.Eq(t, []string{"10.0.0.1"}, cfg.Server.RetryJoin)
	must.True(t, cfg.Client.Enabled) // a later file cannot turn a role off; see TestConfig_RoleOnlyTurnsOn
	must.NoError(t, cfg.Validate())
}

func TestConfig_BoolOverride(t *testing.T) {
	cases := []struct {
		name string
		base *Config
		file string
		got  func(*Config) bool
	}{
		{
			name: "enable_event_broker default true",
			base: DefaultConfig(),
			file: "server { enable_event_broker = false }",
			got:  func(c *Config) bool { return c.Server.EnableEventBroker },
		},
		{
			name: "ui default true",
			base: DefaultConfig(),
			file: "ui { enabled = false }",
			got:  func(c *Config) bool { return c.UI.Enabled },
		},
		{
			name: "enable_debug by dev, json",
			base: DevConfig(),
			file: `{"enable_debug": false}`,
			got:  func(c *Config) bool { return c.EnableDebug },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.True(t, tc.got(tc.base))
			name := "off.hcl"
			if strings.HasPrefix(tc.file, "{") {
				name = "off.json"
			}
			loaded, err := loadConfigString(t, name, tc.file)
			must.NoError(t, err)
			must.False(t, tc.got(tc.base.Merge(loaded)))

			// The explicit false survives being merged again, as a directory
			// load merges each file into an empty Config first.
			wrapped := (&Config{}).Merge(loaded)
			must.False(t, tc.got(tc.base.Merge(wrapped)))
		})
	}
}

// TestConfig_RoleOnlyTurnsOn: server.enabled and client.enabled in a file turn a role on but
// never off, as in Nomad. The official client's test harness depends on it: it passes -dev
// with a JSON file that says "client":{"enabled":false} and then waits for a node.
func TestConfig_RoleOnlyTurnsOn(t *testing.T) {
	cases := []struct {
		name       string
		base       *Config
		file       string
		wantServer bool
		wantClient bool
	}{
		{name: "dev keeps client", base: DevConfig(), file: `{"client":{"enabled":false}}`, wantServer: true, wantClient: true},
		{name: "dev keeps server", base: DevConfig(), file: "server { enabled = false }", wantServer: true, wantClient: true},
		{name: "file turns client on", base: DefaultConfig(), file: "client { enabled = true }", wantClient: true},
		{name: "false on default stays off", base: DefaultConfig(), file: "client { enabled = false }"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := "role.hcl"
			if strings.HasPrefix(tc.file, "{") {
				name = "role.json"
			}
			loaded, err := loadConfigString(t, name, tc.file)
			must.NoError(t, err)
			got := tc.base.Merge(loaded)
			must.Eq(t, tc.wantServer, got.Server != nil && got.Server.Enabled)
			must.Eq(t, tc.wantClient, got.Client != nil && got.Client.Enabled)
			// Through an intermediate empty Config, as a directory load does.
			got = tc.base.Merge((&Config{}).Merge(loaded))
			must.Eq(t, tc.wantClient, got.Client != nil && got.Client.Enabled)
		})
	}
}

// TestReadConfig_DevWithHarnessFile: the whole command line the official harness uses.
func TestReadConfig_DevWithHarnessFile(t *testing.T) {
	dir := t.TempDir()
	path := writeConfigFile(t, dir, "nomad123", `{"name":"node-1","data_dir":"`+dir+`",`+
		`"server":{"enabled":true,"bootstrap_expect":1},"client":{"enabled":false,`+
		`"options":{"test.tighten_network_timeouts":"true"}},"acl":{"enabled":false}}`)
	cfg, err := readConfig([]string{"-config", path, "-dev"})
	must.NoError(t, err)
	must.True(t, cfg.Client.Enabled)
	must.True(t, cfg.Server.Enabled)

	// The flag still turns the client off.
	cfg, err = readConfig([]string{"-config", path, "-dev", "-client=false"})
	must.NoError(t, err)
	must.False(t, cfg.Client.Enabled)
}

// TestConfig_MergeInCode covers Configs built in code (the flags): only
// non-zero values override.
func TestConfig_MergeInCode(t *testing.T) {
	base := DefaultConfig()
	flags := &Config{
		Region: "flag-region",
		Server: &ServerConfig{Enabled: true},
		Client: &ClientConfig{Meta: map[string]string{"k": "v"}},
	}
	got := base.Merge(flags)
	must.Eq(t, "flag-region", got.Region)
	must.Eq(t, base.Datacenter, got.Datacenter)
	must.True(t, got.Server.Enabled)
	must.True(t, got.Server.EnableEventBroker)
	must.Eq(t, base.Server.JobGCInterval, got.Server.JobGCInterval)
	must.Eq(t, map[string]string{"k": "v"}, got.Client.Meta)

	// Neither input changed.
	must.Eq(t, exported(DefaultConfig()).Server, base.Server)
	must.MapEmpty(t, base.Client.Meta)
	must.Eq(t, "global", base.Region)
}

func TestConfig_MergeDoesNotAlias(t *testing.T) {
	loaded, err := loadConfigString(t, "a.hcl", `
client {
  meta { a = "1" }
  servers = ["s1"]
}
plugin "p" {
  config { x = 1 }
}
`)
	must.NoError(t, err)
	base := DefaultConfig()
	one := base.Merge(loaded)
	two := base.Merge(loaded)

	one.Client.Meta["a"] = "changed"
	one.Client.Servers[0] = "changed"
	one.Plugins[0].Config["x"] = "changed"

	must.Eq(t, "1", two.Client.Meta["a"])
	must.Eq(t, "s1", two.Client.Servers[0])
	must.Eq(t, any(1), two.Plugins[0].Config["x"])
	must.Eq(t, "1", loaded.Client.Meta["a"])
	must.MapEmpty(t, base.Client.Meta)
}

func TestConfig_RetryJoinSpellings(t *testing.T) {
	cases := []struct {
		name string
		file string
		want []string
	}{
		{name: "server retry_join", file: `server { retry_join = ["a"] }`, want: []string{"a"}},
		{name: "server_join block", file: "server {\n server_join { retry_join = [\"b\"] }\n}", want: []string{"b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			loaded, err := loadConfigString(t, "join.hcl", tc.file)
			must.NoError(t, err)
			must.Eq(t, tc.want, loaded.Server.RetryJoin)
		})
	}
}

func TestConfig_LoadErrors(t *testing.T) {
	cases := []struct {
		name    string
		file    string
		content string
		want    []string // substrings of the error
	}{
		{
			name:    "unknown top-level key",
			file:    "config.hcl",
			content: "region = \"x\"\nfoo = 1\n",
			want:    []string{"config.hcl:2,", `"foo"`, "Unsupported argument"},
		},
		{
			name:    "unknown block",
			file:    "config.hcl",
			content: "bogus {\n}\n",
			want:    []string{"config.hcl:1,", `"bogus"`},
		},
		{
			name:    "unknown server key",
			file:    "config.hcl",
			content: "server {\n  enabled = true\n  job_gc_thresold = \"1h\"\n}\n",
			want:    []string{"config.hcl:3,", `"job_gc_thresold"`},
		},
		{
			name:    "unknown client key",
			file:    "config.hcl",
			content: "client {\n  meta { a = \"b\" }\n  nodeclass = \"x\"\n}\n",
			want:    []string{"config.hcl:3,", `"nodeclass"`},
		},
		{
			name:    "unknown tls key",
			file:    "config.hcl",
			content: "tls {\n  rpc = true\n  verify_incoming = true\n}\n",
			want:    []string{"config.hcl:3,", `"verify_incoming"`},
		},
		{
			name:    "unknown json key",
			file:    "config.json",
			content: "{\n  \"server\": {\"enabled\": true},\n  \"foo\": 1\n}",
			want:    []string{"config.json:3,", `"foo"`},
		},
		{
			name:    "bad duration",
			file:    "config.hcl",
			content: "server {\n  enabled = true\n  job_gc_threshold = \"soon\"\n}\n",
			want:    []string{"config.hcl:3,22-28: invalid duration for job_gc_threshold: \"soon\""},
		},
		{
			name:    "bad duration in json",
			file:    "config.json",
			content: "{\n\"acl\": {\n\"token_ttl\": \"1 hour\"}}",
			want:    []string{"config.json:3,", `invalid duration for token_ttl: "1 hour"`},
		},
		{
			name:    "number for duration",
			file:    "config.hcl",
			content: "limits {\n  rpc_handshake_timeout = 5\n}\n",
			want:    []string{"config.hcl:2,", `invalid duration for rpc_handshake_timeout: "5"`},
		},
		{
			name:    "wrong type",
			file:    "config.hcl",
			content: "ports {\n  http = \"abc\"\n}\n",
			want:    []string{"config.hcl:2,"},
		},
		{
			name:    "syntax error",
			file:    "config.hcl",
			content: "server {\n",
			want:    []string{"config.hcl:"},
		},
		{
			name:    "duplicate plugin",
			file:    "config.hcl",
			content: "plugin \"a\" {}\nplugin \"a\" {}\n",
			want:    []string{"config.hcl: duplicate plugin \"a\" block"},
		},
		{
			name:    "retry_join twice",
			file:    "config.hcl",
			content: "server {\n  retry_join = [\"a\"]\n  server_join { retry_join = [\"b\"] }\n}\n",
			want:    []string{"config.hcl: retry_join is set in both"},
		},
		{
			name:    "meta as block and argument",
			file:    "config.hcl",
			content: "client {\n  meta = { a = \"1\" }\n  meta { b = \"2\" }\n}\n",
			want:    []string{"config.hcl:3,", "duplicate meta"},
		},
		{
			name:    "variables are not allowed",
			file:    "config.hcl",
			content: "region = var.region\n",
			want:    []string{"config.hcl:1,", "Variables not allowed"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadConfigString(t, tc.file, tc.content)
			must.Error(t, err)
			for _, want := range tc.want {
				must.StrContains(t, err.Error(), want)
			}
		})
	}
}

func TestConfig_LoadMissing(t *testing.T) {
	_, err := LoadConfig(filepath.Join(t.TempDir(), "nope.hcl"))
	must.ErrorIs(t, err, os.ErrNotExist)
}

func TestConfig_Validate(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Config)
		want   string // substring of the error; "" means valid
	}{
		{name: "dev is valid", mutate: func(*Config) {}},
		{name: "http port too large", mutate: func(c *Config) { c.Ports.HTTP = 70000 }, want: "ports.http: must be between 1 and 65535, got 70000"},
		{name: "rpc port zero", mutate: func(c *Config) { c.Ports.RPC = 0 }, want: "ports.rpc: must be between"},
		{name: "ports collide", mutate: func(c *Config) { c.Ports.Serf = 4646 }, want: "ports.serf: 4646 is already used by ports.http"},
		{
			name:   "same port on different addresses",
			mutate: func(c *Config) { c.Ports.Serf = 4646; c.Addresses.Serf = "127.0.0.2" },
		},
		{name: "job_tracked_versions zero", mutate: func(c *Config) { c.Server.JobTrackedVersions = 0 }, want: "server.job_tracked_versions: must be at least 1, got 0"},
		{name: "negative bootstrap_expect", mutate: func(c *Config) { c.Server.BootstrapExpect = -1 }, want: "server.bootstrap_expect: must not be negative"},
		{name: "negative event_buffer_size", mutate: func(c *Config) { c.Server.EventBufferSize = -5 }, want: "server.event_buffer_size"},
		{name: "negative num_schedulers", mutate: func(c *Config) { c.Server.NumSchedulers = -1 }, want: "server.num_schedulers"},
		{name: "zero job_gc_interval", mutate: func(c *Config) { c.Server.JobGCInterval = 0 }, want: "server.job_gc_interval: must be positive"},
		{name: "negative heartbeat_grace", mutate: func(c *Config) { c.Server.HeartbeatGrace = -time.Second }, want: "server.heartbeat_grace"},
		{name: "negative raft_snapshot_threshold", mutate: func(c *Config) { c.Server.RaftSnapshotThreshold = -1 }, want: "server.raft_snapshot_threshold"},
		{name: "negative raft_snapshot_interval", mutate: func(c *Config) { c.Server.RaftSnapshotInterval = -time.Second }, want: "server.raft_snapshot_interval"},
		{name: "negative raft_trailing_logs", mutate: func(c *Config) { c.Server.RaftTrailingLogs = -1 }, want: "server.raft_trailing_logs"},
		{name: "client_introduction enforcement", mutate: func(c *Config) { c.Server.ClientIntroduction.Enforcement = "loud" },
			want: `server.client_introduction.enforcement: must be "none", "warn" or "strict", got "loud"`},
		{name: "client_introduction max below default", mutate: func(c *Config) { c.Server.ClientIntroduction.MaxIdentityTTL = time.Minute },
			want: "server.client_introduction.max_identity_ttl: must be at least default_identity_ttl"},
		{name: "negative token_ttl", mutate: func(c *Config) { c.ACL.TokenTTL = -time.Second }, want: "acl.token_ttl"},
		{
			name:   "min expiration above max",
			mutate: func(c *Config) { c.ACL.TokenMinExpirationTTL = 48 * time.Hour },
			want:   "acl.token_min_expiration_ttl: must not exceed",
		},
		{name: "negative limit", mutate: func(c *Config) { c.Limits.RPCMaxConnsPerClient = -1 }, want: "limits.rpc_max_conns_per_client"},
		{name: "bad log level", mutate: func(c *Config) { c.LogLevel = "LOUD" }, want: "log_level: must be one of"},
		{name: "empty region", mutate: func(c *Config) { c.Region = "" }, want: "region: must not be empty"},
		{name: "bind_addr not ip", mutate: func(c *Config) { c.BindAddr = "localhost" }, want: "bind_addr: must be an IP address"},
		{name: "address not ip", mutate: func(c *Config) { c.Addresses.RPC = "host" }, want: "addresses.rpc: must be an IP address"},
		{name: "nothing enabled", mutate: func(c *Config) { c.Server.Enabled, c.Client.Enabled = false, false }, want: "at least one of server.enabled and client.enabled"},
		{name: "data_dir required outside dev", mutate: func(c *Config) { c.DevMode = false }, want: "data_dir: must be set"},
		{name: "data_dir relative", mutate: func(c *Config) { c.DevMode = false; c.DataDir = "data" }, want: "data_dir: must be an absolute path"},
		{name: "tls rpc without files", mutate: func(c *Config) { c.TLS.EnableRPC = true }, want: "tls.cert_file: must be set"},
		{name: "tls rpc without ca", mutate: func(c *Config) { c.TLS = &TLSConfig{EnableRPC: true, CertFile: "/c", KeyFile: "/k"} },
			want: "tls.ca_file: must be set"},
		{name: "tls https without ca", mutate: func(c *Config) { c.TLS = &TLSConfig{EnableHTTP: true, CertFile: "/c", KeyFile: "/k"} }},
		{name: "tls verify_https_client without ca",
			mutate: func(c *Config) {
				c.TLS = &TLSConfig{EnableHTTP: true, VerifyHTTPSClient: true, CertFile: "/c", KeyFile: "/k"}
			},
			want: "tls.ca_file: must be set"},
		{name: "tls upgrade mode without rpc", mutate: func(c *Config) { c.TLS.RPCUpgradeMode = true }, want: "tls.rpc_upgrade_mode: needs tls.rpc = true"},
		{name: "tls 1.0", mutate: func(c *Config) { c.TLS.TLSMinVersion = "tls10" }, want: "tls.tls_min_version: \"tls10\" is deprecated"},
		{
			name:   "host network without cidr or interface",
			mutate: func(c *Config) { c.Client.HostNetworks = []*HostNetworkConfig{{Name: "public"}} },
			want:   `client.host_network "public": needs cidr or interface`,
		},
		{
			name:   "host network bad cidr",
			mutate: func(c *Config) { c.Client.HostNetworks = []*HostNetworkConfig{{Name: "public", CIDR: "10.0.0.0/40"}} },
			want:   `client.host_network "public" cidr: `,
		},
		{
			name: "host network bad reserved ports",
			mutate: func(c *Config) {
				c.Client.HostNetworks = []*HostNetworkConfig{{Name: "public", Interface: "eth1", ReservedPorts: "ssh"}}
			},
			want: `client.host_network "public" reserved_ports: `,
		},
		{
			name:   "host volume relative",
			mutate: func(c *Config) { c.Client.HostVolumes = []*HostVolumeConfig{{Name: "v", Path: "rel"}} },
			want:   `client.host_volume "v" path: must be an absolute path`,
		},
		{
			name: "host volume inside data_dir",
			mutate: func(c *Config) {
				c.DataDir = "/var/lib/nomad"
				c.Client.HostVolumes = []*HostVolumeConfig{{Name: "logs", Path: "/var/lib/nomad/alloc"}}
			},
			want: `client.host_volume "logs" path: must neither contain nor lie inside data_dir "/var/lib/nomad"`,
		},
		{
			name: "host volume containing data_dir",
			mutate: func(c *Config) {
				c.DataDir = "/var/lib/nomad"
				c.Client.HostVolumes = []*HostVolumeConfig{{Name: "varlib", Path: "/var/lib"}}
			},
			want: `client.host_volume "varlib" path: must neither contain nor lie inside data_dir "/var/lib/nomad"`,
		},
		{
			name: "host volume inside a separate alloc_dir",
			mutate: func(c *Config) {
				c.Client.AllocDir = "/srv/allocs"
				c.Client.HostVolumes = []*HostVolumeConfig{{Name: "all", Path: "/srv/allocs/"}}
			},
			want: `client.host_volume "all" path: must neither contain nor lie inside client.alloc_dir "/srv/allocs"`,
		},
		{
			name: "host volume beside data_dir",
			mutate: func(c *Config) {
				c.DataDir = "/var/lib/nomad"
				c.Client.HostVolumes = []*HostVolumeConfig{{Name: "mysql", Path: "/var/lib/nomad-mysql"}}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := DevConfig()
			tc.mutate(c)
			err := c.Validate()
			if tc.want == "" {
				must.NoError(t, err)
				return
			}
			must.Error(t, err)
			must.StrContains(t, err.Error(), tc.want)
		})
	}
}

func TestConfig_ValidateReportsAll(t *testing.T) {
	c := DevConfig()
	c.Ports.HTTP = -1
	c.Server.JobTrackedVersions = 0
	err := c.Validate()
	must.Error(t, err)
	must.StrContains(t, err.Error(), "ports.http")
	must.StrContains(t, err.Error(), "server.job_tracked_versions")

	// An empty Config reports problems rather than panicking on nil blocks.
	must.Error(t, (&Config{}).Validate())
}

func TestConfig_NormalizeAddrs(t *testing.T) {
	cases := []struct {
		name      string
		mutate    func(*Config)
		wantAddrs Addresses
		wantAdv   AdvertiseAddrs
	}{
		{
			name:      "from bind_addr",
			mutate:    func(c *Config) { c.BindAddr = "10.1.2.3" },
			wantAddrs: Addresses{HTTP: "10.1.2.3", RPC: "10.1.2.3", Serf: "10.1.2.3"},
			wantAdv:   AdvertiseAddrs{HTTP: "10.1.2.3:4646", RPC: "10.1.2.3:4647", Serf: "10.1.2.3:4648"},
		},
		{
			name: "explicit addresses and advertise",
			mutate: func(c *Config) {
				c.BindAddr = "127.0.0.1"
				c.Addresses.RPC = "10.0.0.9"
				c.Advertise.HTTP = "example.com"
				c.Advertise.Serf = "[::1]:9000"
			},
			wantAddrs: Addresses{HTTP: "127.0.0.1", RPC: "10.0.0.9", Serf: "127.0.0.1"},
			wantAdv:   AdvertiseAddrs{HTTP: "example.com:4646", RPC: "10.0.0.9:4647", Serf: "[::1]:9000"},
		},
		{
			name:      "ipv6",
			mutate:    func(c *Config) { c.BindAddr = "::1" },
			wantAddrs: Addresses{HTTP: "::1", RPC: "::1", Serf: "::1"},
			wantAdv:   AdvertiseAddrs{HTTP: "[::1]:4646", RPC: "[::1]:4647", Serf: "[::1]:4648"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.mutate(c)
			c.NormalizeAddrs()
			must.Eq(t, tc.wantAddrs, *c.Addresses)
			must.Eq(t, tc.wantAdv, *c.Advertise)

			// Idempotent.
			c.NormalizeAddrs()
			must.Eq(t, tc.wantAdv, *c.Advertise)
		})
	}
}

func TestConfig_NormalizeAddrsUnspecified(t *testing.T) {
	c := DefaultConfig() // bind_addr 0.0.0.0
	c.NormalizeAddrs()
	must.Eq(t, "0.0.0.0", c.Addresses.HTTP)
	for _, adv := range []string{c.Advertise.HTTP, c.Advertise.RPC, c.Advertise.Serf} {
		must.StrNotContains(t, adv, "0.0.0.0")
	}
	must.StrHasSuffix(t, ":4646", c.Advertise.HTTP)
}

func TestConfig_PluginConfigShapes(t *testing.T) {
	loaded, err := loadConfigString(t, "p.hcl", `
plugin "docker" {
  config {
    n     = 2
    f     = 1.5
    obj   = { a = "b" }
    mount {
      src = "x"
    }
    mount {
      src = "y"
    }
  }
}
plugin "exec" {}
`)
	must.NoError(t, err)
	must.Len(t, 2, loaded.Plugins)
	must.Eq(t, map[string]any{
		"n":     2,
		"f":     1.5,
		"obj":   map[string]any{"a": "b"},
		"mount": []any{map[string]any{"src": "x"}, map[string]any{"src": "y"}},
	}, loaded.Plugins[0].Config)
	must.MapEmpty(t, loaded.Plugins[1].Config)
}
