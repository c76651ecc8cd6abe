package agent

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// TestConfig_ClientResources: the client block's resource keys reach the client config, in
// HCL and in JSON, and a reserved block sets only what it names.
func TestConfig_ClientResources(t *testing.T) {
	cases := []struct {
		name, file, body string
	}{
		{name: "hcl", file: "c.hcl", body: `
client {
  enabled           = true
  cpu_total_compute = 8000
  memory_total_mb   = 4096
  min_dynamic_port  = 25000
  max_dynamic_port  = 26000
  reserved {
    cpu            = 500
    memory         = 512
    disk           = 1024
    reserved_ports = "22,80-90"
  }
}`},
		{name: "json", file: "c.json", body: `{"client": {"enabled": true, "cpu_total_compute": 8000, "memory_total_mb": 4096,
  "min_dynamic_port": 25000, "max_dynamic_port": 26000,
  "reserved": {"cpu": 500, "memory": 512, "disk": 1024, "reserved_ports": "22,80-90"}}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			loaded, err := loadConfigString(t, tc.file, tc.body)
			must.NoError(t, err)
			got := DefaultConfig().Merge(loaded).Client
			must.Eq(t, 8000, got.CPUTotalCompute)
			must.Eq(t, 4096, got.MemoryTotalMB)
			must.Eq(t, 25000, got.MinDynamicPort)
			must.Eq(t, 26000, got.MaxDynamicPort)
			must.Eq(t, &ReservedConfig{CPU: 500, MemoryMB: 512, DiskMB: 1024, ReservedPorts: "22,80-90"}, got.Reserved)
			fp := clientResources(got)
			must.Eq(t, 500, fp.ReservedCPU)
			must.Eq(t, "22,80-90", fp.ReservedPorts)
		})
	}
}

func TestConfig_ValidateClientResources(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{name: "defaults", mutate: func(*Config) {}},
		{name: "negative cpu_total_compute", mutate: func(c *Config) { c.Client.CPUTotalCompute = -1 }, want: "client.cpu_total_compute"},
		{name: "negative memory_total_mb", mutate: func(c *Config) { c.Client.MemoryTotalMB = -1 }, want: "client.memory_total_mb"},
		{name: "port too large", mutate: func(c *Config) { c.Client.MaxDynamicPort = 70000 }, want: "client.max_dynamic_port: must be a port"},
		{name: "range backwards", mutate: func(c *Config) { c.Client.MinDynamicPort = 31000; c.Client.MaxDynamicPort = 30000 }, want: "client.min_dynamic_port: must not exceed"},
		{name: "min above default max", mutate: func(c *Config) { c.Client.MinDynamicPort = 40000 }, want: "client.min_dynamic_port: must not exceed client.max_dynamic_port (32000)"},
		{name: "bad reserved port", mutate: func(c *Config) { c.Client.Reserved = &ReservedConfig{ReservedPorts: "22,99999"} }, want: "client.reserved.reserved_ports"},
		{name: "spread algorithm", mutate: func(c *Config) { c.Server.SchedulerAlgorithm = "spread" }},
		{name: "unknown algorithm", mutate: func(c *Config) { c.Server.SchedulerAlgorithm = "random" },
			want: `server.default_scheduler_config.scheduler_algorithm: must be "binpack" or "spread", got "random"`},
		{name: "negative reserved memory", mutate: func(c *Config) { c.Client.Reserved = &ReservedConfig{MemoryMB: -1} }, want: "client.reserved.memory"},
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
			must.ErrorContains(t, err, tc.want)
		})
	}
}

// TestConfig_ChrootEnv: client.chroot_env is read in upstream's HCL1 block form with quoted
// keys, as an HCL2 map and in JSON; unset it stays nil, which the exec driver reads as its
// default list.
func TestConfig_ChrootEnv(t *testing.T) {
	want := map[string]string{"/bin/sh": "/bin/sh", "/usr/lib": "/usr/lib"}
	cases := []struct {
		name, file, body string
	}{
		{name: "hcl1 block", file: "c.hcl", body: `
client {
  enabled = true
  chroot_env {
    "/bin/sh"  = "/bin/sh"
    "/usr/lib" = "/usr/lib"
  }
}`},
		{name: "hcl2 map", file: "c.hcl", body: `
client {
  enabled    = true
  chroot_env = { "/bin/sh" = "/bin/sh", "/usr/lib" = "/usr/lib" }
}`},
		{name: "json", file: "c.json", body: `{"client": {"enabled": true, "chroot_env": {"/bin/sh": "/bin/sh", "/usr/lib": "/usr/lib"}}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			loaded, err := loadConfigString(t, tc.file, tc.body)
			must.NoError(t, err)
			must.Eq(t, want, DefaultConfig().Merge(loaded).Client.ChrootEnv)
		})
	}
	loaded, err := loadConfigString(t, "c.hcl", "client {\n  enabled = true\n}\n")
	must.NoError(t, err)
	must.Nil(t, DefaultConfig().Merge(loaded).Client.ChrootEnv)
}

// TestConfig_ClientArtifact: the client's artifact block reaches the client's artifact
// fetcher, in HCL and in JSON; a getter this build does not have is refused by name.
func TestConfig_ClientArtifact(t *testing.T) {
	cases := []struct {
		name, file, body string
	}{
		{name: "hcl", file: "c.hcl", body: `
client {
  enabled = true
  artifact {
    http_read_timeout              = "5m"
    http_max_size                  = "1GiB"
    git_timeout                    = "2m"
    decompression_file_count_limit = 100
    decompression_size_limit       = "2GB"
  }
}`},
		{name: "json", file: "c.json", body: `{"client": {"enabled": true, "artifact": {"http_read_timeout": "5m",
  "http_max_size": "1GiB", "git_timeout": "2m", "decompression_file_count_limit": 100, "decompression_size_limit": "2GB"}}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			loaded, err := loadConfigString(t, tc.file, tc.body)
			must.NoError(t, err)
			got := artifactConfig(DefaultConfig().Merge(loaded).Client.Artifact)
			must.Eq(t, 5*time.Minute, got.HTTPReadTimeout)
			must.Eq(t, int64(1<<30), got.HTTPMaxSize)
			must.Eq(t, 2*time.Minute, got.GitTimeout)
			must.Eq(t, 100, got.DecompressionFileCountLimit)
			must.Eq(t, int64(2<<30), got.DecompressionSizeLimit)
		})
	}
	_, err := loadConfigString(t, "c.hcl", `client { artifact { s3_timeout = "1m" } }`)
	must.ErrorContains(t, err, "s3_timeout")
}
