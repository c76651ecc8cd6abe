package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func TestRun_BadInvocation(t *testing.T) {
	dir := t.TempDir()
	badKey := filepath.Join(dir, "bad.hcl")
	must.NoError(t, os.WriteFile(badKey, []byte("region = \"eu\"\nbogus_key = 1\n"), 0o600))
	badDuration := filepath.Join(dir, "dur.hcl")
	must.NoError(t, os.WriteFile(badDuration, []byte("server {\n  job_gc_interval = \"soon\"\n}\n"), 0o600))

	cases := []struct {
		name    string
		args    []string
		wantErr []string
	}{
		{name: "unknown key", args: []string{"-dev", "-config", badKey}, wantErr: []string{badKey + ":2,", "bogus_key"}},
		{name: "bad value", args: []string{"-dev", "-config", badDuration}, wantErr: []string{badDuration + ":2,", "job_gc_interval"}},
		{name: "missing file", args: []string{"-config", filepath.Join(dir, "nope.hcl")}, wantErr: []string{"nope.hcl"}},
		{name: "unknown flag", args: []string{"-nonsense"}, wantErr: []string{"-nonsense"}},
		{name: "stray argument", args: []string{"-dev", "extra"}, wantErr: []string{`"extra"`}},
		{name: "invalid value", args: []string{"-dev", "-log-level", "LOUD"}, wantErr: []string{"Invalid configuration", "log_level"}},
		{name: "no data dir outside dev", args: []string{"-server"}, wantErr: []string{"data_dir"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ui := cli.NewMockUi()
			code := run(tc.args, ui, nil)
			must.Eq(t, 1, code)
			for _, want := range tc.wantErr {
				must.StrContains(t, ui.ErrorWriter.String(), want)
			}
			must.StrNotContains(t, ui.OutputWriter.String(), "agent started")
		})
	}
}

func TestRun_Help(t *testing.T) {
	ui := cli.NewMockUi()
	must.Eq(t, 0, run([]string{"-h"}, ui, nil))
	must.StrContains(t, ui.OutputWriter.String(), "Usage: nomad agent")
}

func TestReadConfig_Precedence(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "a.hcl")
	must.NoError(t, os.WriteFile(first, []byte(`
region = "from-a"
datacenter = "dc-a"
server {
  enabled = true
  retry_join = ["10.0.0.1"]
}`), 0o600))
	second := filepath.Join(dir, "b.hcl")
	must.NoError(t, os.WriteFile(second, []byte(`datacenter = "dc-b"`), 0o600))

	cases := []struct {
		name  string
		args  []string
		check func(*testing.T, *Config)
	}{
		{name: "later config wins", args: []string{"-dev", "-config", first, "-config", second}, check: func(t *testing.T, c *Config) {
			must.Eq(t, "from-a", c.Region)
			must.Eq(t, "dc-b", c.Datacenter)
			must.True(t, c.DevMode)
		}},
		{name: "flags win over files", args: []string{"-dev", "-config", first, "-region", "eu", "-dc", "x", "-node", "n1"}, check: func(t *testing.T, c *Config) {
			must.Eq(t, "eu", c.Region)
			must.Eq(t, "x", c.Datacenter)
			must.Eq(t, "n1", c.Name)
		}},
		{name: "false flag still wins", args: []string{"-dev", "-client=false", "-log-json"}, check: func(t *testing.T, c *Config) {
			must.False(t, c.Client.Enabled)
			must.True(t, c.LogJSON)
		}},
		{name: "repeated retry-join replaces the file's", args: []string{"-dev", "-config", first, "-retry-join", "a", "-retry-join", "b:1"}, check: func(t *testing.T, c *Config) {
			must.Eq(t, []string{"a", "b:1"}, c.Server.RetryJoin)
		}},
		{name: "server flags", args: []string{"-server", "-data-dir", dir, "-bootstrap-expect", "3", "-acl-enabled", "-bind", "127.0.0.1"}, check: func(t *testing.T, c *Config) {
			must.True(t, c.Server.Enabled)
			must.Eq(t, dir, c.DataDir)
			must.Eq(t, 3, c.Server.BootstrapExpect)
			must.True(t, c.ACL.Enabled)
			must.Eq(t, "127.0.0.1", c.Addresses.HTTP)
			must.Eq(t, "127.0.0.1:4647", c.Advertise.RPC)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := readConfig(tc.args)
			must.NoError(t, err)
			tc.check(t, cfg)
		})
	}
}

// TestReadConfig_ClientIntroToken: -client-intro-token sets the token, NOMAD_CLIENT_INTRO_TOKEN
// wins over it (upstream's order), and the token never appears in what /v1/agent/self shows.
func TestReadConfig_ClientIntroToken(t *testing.T) {
	cases := []struct {
		name, env string
		args      []string
		want      string
	}{
		{name: "none", args: []string{"-dev"}, want: ""},
		{name: "flag", args: []string{"-dev", "-client-intro-token", "eyJ.flag.x"}, want: "eyJ.flag.x"},
		{name: "env wins over flag", env: "eyJ.env.x", args: []string{"-dev", "-client-intro-token", "eyJ.flag.x"}, want: "eyJ.env.x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NOMAD_CLIENT_INTRO_TOKEN", tc.env)
			cfg, err := readConfig(tc.args)
			must.NoError(t, err)
			must.Eq(t, tc.want, cfg.Client.IntroToken)
			if tc.want != "" {
				b, err := json.Marshal(cfg)
				must.NoError(t, err)
				must.StrNotContains(t, string(b), tc.want)
			}
		})
	}
}

func TestServerConfig(t *testing.T) {
	cases := []struct {
		name         string
		cfg          func() *Config
		wantRaftBind string
		wantSerfBind string
		wantJoin     []string
		wantFastRaft bool
	}{
		{name: "dev single node is in memory", cfg: DevConfig, wantFastRaft: true},
		{name: "dev joining others uses TCP", cfg: func() *Config {
			c := DevConfig()
			c.Server.RetryJoin = []string{"10.0.0.2"}
			return c
		}, wantRaftBind: "127.0.0.1:4647", wantSerfBind: "127.0.0.1:4648", wantJoin: []string{"10.0.0.2:4648"}, wantFastRaft: true},
		{name: "server uses the RPC address", cfg: func() *Config {
			c := DefaultConfig()
			c.BindAddr = "127.0.0.1"
			c.Server.Enabled = true
			c.Ports.RPC = 5000
			return c
		}, wantRaftBind: "127.0.0.1:5000", wantSerfBind: "127.0.0.1:4648"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg()
			cfg.NormalizeAddrs()
			sc := serverConfig(cfg, nil)
			must.Eq(t, tc.wantRaftBind, sc.RaftBindAddr)
			must.Eq(t, tc.wantSerfBind, sc.SerfBindAddr)
			must.Eq(t, tc.wantJoin, sc.RetryJoin)
			must.Eq(t, tc.wantFastRaft, sc.FastRaft)
			must.Eq(t, cfg.Server.JobTrackedVersions, sc.JobTrackedVersions)
			must.Eq(t, int64(cfg.Server.EventBufferSize), sc.EventBufferSize)
		})
	}
}

// TestRun_Dev starts `nomad agent -dev` with a configuration file choosing the HTTP port,
// talks to it with the official client and stops it with SIGTERM.
func TestRun_Dev(t *testing.T) {
	port := freePort(t)
	cfgPath := filepath.Join(t.TempDir(), "ports.hcl")
	must.NoError(t, os.WriteFile(cfgPath, []byte(fmt.Sprintf("ports {\n  http = %d\n}\nlog_level = \"WARN\"\n", port)), 0o600))

	ui := cli.NewMockUi()
	signals := make(chan os.Signal, 1)
	done := make(chan int, 1)
	go func() { done <- run([]string{"-dev", "-config", cfgPath, "-region", "eu"}, ui, signals) }()
	t.Cleanup(func() {
		select {
		case signals <- syscall.SIGTERM:
		default:
		}
	})

	c, err := api.NewClient(&api.Config{Address: fmt.Sprintf("http://127.0.0.1:%d", port)})
	must.NoError(t, err)
	defer c.Close()
	waitForWrites(t, c)

	leader, err := c.Status().Leader()
	must.NoError(t, err)
	must.Eq(t, "127.0.0.1:4647", leader)
	regions, err := c.Regions().List()
	must.NoError(t, err)
	must.Eq(t, []string{"eu"}, regions)

	signals <- syscall.SIGTERM
	select {
	case code := <-done:
		must.Eq(t, 0, code)
	case <-time.After(20 * time.Second):
		t.Fatal("agent did not stop after SIGTERM")
	}
	out := ui.OutputWriter.String()
	must.StrContains(t, out, "==> Nomad agent configuration:")
	must.StrContains(t, out, fmt.Sprintf("HTTP: [127.0.0.1:%d]", port))
	must.StrContains(t, out, "Region: eu (DC: dc1)")
	// -dev runs a client, and the banner says so.
	must.StrContains(t, out, "Client: true")
	must.StrContains(t, out, "==> Nomad agent started! Log data will stream in below:")
	must.Eq(t, "", ui.ErrorWriter.String())
	// Logs written while starting are held until the banner is out.
	warning := strings.Index(out, "raw_exec driver is enabled")
	must.Positive(t, warning)
	must.Less(t, warning, strings.Index(out, "agent started!"))

	_, err = c.Status().Leader()
	must.Error(t, err)
}
