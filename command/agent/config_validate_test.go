package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/cli"
	"github.com/shoenig/test/must"
)

func TestRunConfigValidate(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		must.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	good := write("good.hcl", "region = \"east\"\ndata_dir = \"/var/lib/nomad\"\nserver {\n  enabled = true\n  bootstrap_expect = 1\n}\n")
	jsonNoExt := write("harness", `{"datacenter": "dc9"}`)
	unknown := write("unknown.hcl", "server {\n  enabld = true\n}\n")
	syntax := write("syntax.hcl", "server {\n")
	badValue := write("bad.hcl", "data_dir = \"relative/dir\"\nserver {\n  enabled = true\n}\n")
	ignored := write("ignored.hcl", "data_dir = \"/var/lib/nomad\"\nserver {\n  enabled = true\n}\nconsul {\n  address = \"127.0.0.1:8500\"\n}\n")

	cases := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{name: "valid", args: []string{good}, wantOut: "Configuration is valid!"},
		{name: "valid, several files", args: []string{good, jsonNoExt}, wantOut: "Configuration is valid!"},
		{name: "directory", args: []string{dir + "/none"}, wantCode: 1, wantErr: "Error loading configuration"},
		{name: "valid, with an ignored block", args: []string{ignored}, wantOut: "Configuration is valid!",
			wantErr: "config: consul block is ignored: this build has no Consul integration"},
		{name: "unknown key", args: []string{unknown}, wantCode: 1, wantErr: "enabld"},
		{name: "syntax error", args: []string{syntax}, wantCode: 1, wantErr: "syntax.hcl"},
		{name: "bad value", args: []string{badValue}, wantCode: 1, wantErr: "data_dir"},
		{name: "no path", args: nil, wantCode: 1, wantErr: "at least one config file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ui := cli.NewMockUi()
			code := RunConfigValidate(tc.args, ui)
			must.Eq(t, tc.wantCode, code, must.Sprint(ui.ErrorWriter.String()))
			must.StrContains(t, ui.OutputWriter.String(), tc.wantOut)
			must.StrContains(t, ui.ErrorWriter.String(), tc.wantErr)
		})
	}
}

// A host volume is a host path every task that mounts it can read: one reaching the agent's
// data directory, even through a link, hands tasks other allocations' secrets and the
// client's state, so the agent refuses to start with it.
func TestSecurity_HostVolumeOverDataDirRefused(t *testing.T) {
	base := t.TempDir()
	dataDir := filepath.Join(base, "data")
	must.NoError(t, os.MkdirAll(filepath.Join(dataDir, "alloc"), 0o755))
	must.NoError(t, os.Symlink(filepath.Join(dataDir, "alloc"), filepath.Join(base, "innocent")))
	// An alloc_dir or state_dir moved out of data_dir is kept out of host volumes as well.
	allocDir, stateDir := filepath.Join(base, "allocs"), filepath.Join(base, "state")
	cases := []struct {
		name, path string
		wantKey    string
	}{
		{name: "allocation directories", path: filepath.Join(dataDir, "alloc"), wantKey: "data_dir"},
		{name: "link to them", path: filepath.Join(base, "innocent"), wantKey: "data_dir"},
		{name: "parent of data_dir", path: base, wantKey: "data_dir"},
		{name: "inside alloc_dir", path: filepath.Join(allocDir, "a1", "t", "secrets"), wantKey: "client.alloc_dir"},
		{name: "inside state_dir", path: filepath.Join(stateDir, "x"), wantKey: "client.state_dir"},
		{name: "elsewhere", path: filepath.Join(base, "elsewhere")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := DevConfig()
			c.DevMode, c.DataDir = false, dataDir
			c.Client.AllocDir, c.Client.StateDir = allocDir, stateDir
			c.Client.HostVolumes = []*HostVolumeConfig{{Name: "shared", Path: tc.path}}
			err := c.Validate()
			if tc.wantKey == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, `client.host_volume "shared" path: must neither contain nor lie inside `+tc.wantKey+` "`)
		})
	}
}

func TestConfig_JobMaxTotalSize(t *testing.T) {
	cases := []struct {
		name    string
		value   string
		want    int64
		wantErr string
	}{
		{name: "bytes", value: `1048576`, want: 1 << 20},
		{name: "mebibytes", value: `"32MiB"`, want: 32 << 20},
		{name: "short unit", value: `"512K"`, want: 512 << 10},
		{name: "megabytes count in 1024s", value: `"2MB"`, want: 2 << 20},
		{name: "gibibytes", value: `"1 GiB"`, want: 1 << 30},
		{name: "unknown unit", value: `"3 parsecs"`, wantErr: "invalid size for job_max_total_size"},
		{name: "no number", value: `"big"`, wantErr: "invalid size for job_max_total_size"},
		{name: "negative", value: `-1`, wantErr: "invalid size for job_max_total_size"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := loadConfigString(t, "server.hcl", "server {\n  job_max_total_size = "+tc.value+"\n}\n")
			if tc.wantErr != "" {
				must.ErrorContains(t, err, tc.wantErr)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.want, c.Server.JobMaxTotalSize)
		})
	}
}
