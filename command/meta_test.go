package command

import (
	"strings"
	"testing"

	"github.com/hashicorp/cli"
	"github.com/shoenig/test/must"
)

func TestMeta_Parse(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		wantPos  []string
		wantJSON bool
		wantNS   string
		wantOK   bool
	}{
		{name: "flags first", args: []string{"-json", "a"}, wantPos: []string{"a"}, wantJSON: true, wantOK: true},
		{name: "flags last", args: []string{"a", "-json", "b"}, wantPos: []string{"a", "b"}, wantJSON: true, wantOK: true},
		{name: "common flag", args: []string{"a", "-namespace", "dev"}, wantPos: []string{"a"}, wantNS: "dev", wantOK: true},
		{name: "double dash", args: []string{"--", "-json"}, wantPos: []string{"-json"}, wantOK: true},
		{name: "negative number", args: []string{"web", "-1"}, wantPos: []string{"web", "-1"}, wantOK: true},
		{name: "unknown flag", args: []string{"-nope"}, wantOK: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := Meta{Ui: cli.NewMockUi()}
			var asJSON bool
			fs := m.FlagSet("test")
			fs.BoolVar(&asJSON, "json", false, "")
			pos, code, ok := m.parse(fs, tc.args)
			must.Eq(t, tc.wantOK, ok)
			if !ok {
				must.Eq(t, 1, code)
				return
			}
			must.Eq(t, tc.wantPos, pos)
			must.Eq(t, tc.wantJSON, asJSON)
			must.Eq(t, tc.wantNS, m.namespace)
		})
	}
}

func TestFormat(t *testing.T) {
	cases := []struct {
		name string
		got  string
		want string
	}{
		{
			name: "list pads all but the last column",
			got:  formatList([]string{"ID|Type|Status", "a-long-id|batch|dead", "b||running"}),
			want: "ID         Type   Status\na-long-id  batch  dead\nb                 running",
		},
		{
			name: "kv aligns the equals signs",
			got:  formatKV([]string{"ID|web", "Submit Date|now", "Empty|"}),
			want: "ID          = web\nSubmit Date = now\nEmpty       =",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, tc.got)
		})
	}
}

// Every command must explain itself: the CLI prints Synopsis in listings
// and Help for -h.
func TestCommands_Help(t *testing.T) {
	for name, factory := range Commands(cli.NewMockUi()) {
		t.Run(name, func(t *testing.T) {
			cmd, err := factory()
			must.NoError(t, err)
			must.NotEq(t, "", cmd.Synopsis())
			must.StrHasPrefix(t, "Usage: nomad "+name, cmd.Help())
			if sub, ok := strings.CutPrefix(cmd.Help(), "Usage: nomad "+name); ok {
				must.True(t, sub == "" || sub[0] == ' ' || sub[0] == '\n')
			}
		})
	}
}

func TestVersion(t *testing.T) {
	ui := cli.NewMockUi()
	cmd := &VersionCommand{Ui: ui}
	must.Eq(t, 0, cmd.Run(nil))
	must.Eq(t, "Nomad v"+Version+"\n", ui.OutputWriter.String())
}
