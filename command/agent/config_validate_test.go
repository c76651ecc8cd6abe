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
