package template

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func render(t *testing.T, dir string, env map[string]string, tmpls ...*api.Template) (map[string]string, error) {
	t.Helper()
	m, err := New(&Config{Templates: tmpls, TaskDir: dir, Env: env})
	if err != nil {
		return nil, err
	}
	t.Cleanup(m.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return m.Render(ctx)
}

func TestRender(t *testing.T) {
	cases := []struct {
		name    string
		setup   func(t *testing.T, dir string)
		tmpl    *api.Template
		env     map[string]string
		want    string
		wantEnv map[string]string
		perm    os.FileMode
	}{
		{
			name: "data with the task's env",
			tmpl: &api.Template{EmbeddedTmpl: new(`port={{ env "NOMAD_PORT_http" }} home={{ env "HOME" }}`), DestPath: new("local/out.txt")},
			env:  map[string]string{"NOMAD_PORT_http": "8080"},
			// HOME is the agent's, not the task's: it renders empty.
			want: "port=8080 home=", perm: 0o644,
		},
		{
			name: "source inside the task directory, perms",
			setup: func(t *testing.T, dir string) {
				must.NoError(t, os.WriteFile(filepath.Join(dir, "local", "in.tpl"), []byte(`{{ "from source" }}`), 0o600))
			},
			tmpl: &api.Template{SourcePath: new("local/in.tpl"), DestPath: new("local/out.txt"), Perms: new("0600")},
			want: "from source", perm: 0o600,
		},
		{
			name: "delimiters",
			tmpl: &api.Template{EmbeddedTmpl: new(`[[ "x" ]] {{ kept }}`), DestPath: new("local/out.txt"), LeftDelim: new("[["), RightDelim: new("]]")},
			want: "x {{ kept }}", perm: 0o644,
		},
		{
			name: "missing key renders no value by default",
			tmpl: &api.Template{EmbeddedTmpl: new(`{{ $m := parseJSON "{}" }}v={{ $m.absent }}`), DestPath: new("local/out.txt")},
			want: "v=<no value>", perm: 0o644,
		},
		{
			name: "env template",
			tmpl: &api.Template{EmbeddedTmpl: new("# comment\nA=1\nexport B=\"two words\"\n\nC='3'\n"), DestPath: new("secrets/file.env"), Envvars: new(true)},
			want: "# comment\nA=1\nexport B=\"two words\"\n\nC='3'\n", perm: 0o644,
			wantEnv: map[string]string{"A": "1", "B": "two words", "C": "3"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			must.NoError(t, os.MkdirAll(filepath.Join(dir, "local"), 0o755))
			must.NoError(t, os.MkdirAll(filepath.Join(dir, "secrets"), 0o755))
			if tc.setup != nil {
				tc.setup(t, dir)
			}
			env, err := render(t, dir, tc.env, tc.tmpl)
			must.NoError(t, err)
			b, err := os.ReadFile(filepath.Join(dir, *tc.tmpl.DestPath))
			must.NoError(t, err)
			must.Eq(t, tc.want, string(b))
			fi, err := os.Stat(filepath.Join(dir, *tc.tmpl.DestPath))
			must.NoError(t, err)
			must.Eq(t, tc.perm, fi.Mode().Perm())
			if tc.wantEnv == nil {
				tc.wantEnv = map[string]string{}
			}
			must.Eq(t, tc.wantEnv, env)
		})
	}
}

func TestRenderRefused(t *testing.T) {
	outside := t.TempDir()
	must.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("outside"), 0o644))
	cases := []struct {
		name    string
		setup   func(t *testing.T, dir string)
		tmpl    *api.Template
		wantErr string
	}{
		{
			name:    "destination escapes by ..",
			tmpl:    &api.Template{EmbeddedTmpl: new("x"), DestPath: new("../../etc/x")},
			wantErr: "path would leave its directory",
		},
		{
			name: "destination through a link out",
			setup: func(t *testing.T, dir string) {
				must.NoError(t, os.Symlink(outside, filepath.Join(dir, "out")))
			},
			tmpl:    &api.Template{EmbeddedTmpl: new("x"), DestPath: new("out/x")},
			wantErr: "template destination",
		},
		{
			name:    "source escapes by ..",
			tmpl:    &api.Template{SourcePath: new("../x.tpl"), DestPath: new("local/x")},
			wantErr: "path would leave its directory",
		},
		{
			name: "source through a link out",
			setup: func(t *testing.T, dir string) {
				must.NoError(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "in.tpl")))
			},
			tmpl:    &api.Template{SourcePath: new("in.tpl"), DestPath: new("local/x")},
			wantErr: "template source",
		},
		{
			name:    "file outside the task directory",
			tmpl:    &api.Template{EmbeddedTmpl: new(`{{ file "` + filepath.Join(outside, "secret") + `" }}`), DestPath: new("local/x")},
			wantErr: "outside of sandbox",
		},
		{
			name:    "missing key with error_on_missing_key",
			tmpl:    &api.Template{EmbeddedTmpl: new(`{{ $m := parseJSON "{}" }}{{ $m.absent }}`), DestPath: new("local/x"), ErrMissingKey: new(true)},
			wantErr: "map has no entry for key",
		},
		{
			name:    "consul function",
			tmpl:    &api.Template{EmbeddedTmpl: new(`{{ if true }}{{ key "a/b" }}{{ end }}`), DestPath: new("local/x")},
			wantErr: `template function "key" needs Consul, and no Consul is configured`,
		},
		{
			name:    "consul function in a range",
			tmpl:    &api.Template{EmbeddedTmpl: new(`{{ range service "db" }}{{ .Address }}{{ end }}`), DestPath: new("local/x")},
			wantErr: `template function "service" needs Consul`,
		},
		{
			name:    "vault function",
			tmpl:    &api.Template{EmbeddedTmpl: new(`{{ with secret "kv/x" }}{{ .Data }}{{ end }}`), DestPath: new("local/x")},
			wantErr: `template function "secret" needs Vault, and no Vault is configured`,
		},
		{
			name:    "writeToFile is denied",
			tmpl:    &api.Template{EmbeddedTmpl: new(`{{ "x" | writeToFile "/tmp/x" "" "" "0644" }}`), DestPath: new("local/x")},
			wantErr: "disabled",
		},
		{
			name:    "env template line that is no KEY=VALUE, its text not echoed",
			tmpl:    &api.Template{EmbeddedTmpl: new("A=1\nhunter2\n"), DestPath: new("local/x.env"), Envvars: new(true)},
			wantErr: "env template line 2 is not KEY=VALUE",
		},
		{
			name:    "change_mode script without a script",
			tmpl:    &api.Template{EmbeddedTmpl: new("x"), DestPath: new("local/x"), ChangeMode: new("script")},
			wantErr: `change_mode "script" needs a change_script with a command`,
		},
		{
			name:    "bad perms",
			tmpl:    &api.Template{EmbeddedTmpl: new("x"), DestPath: new("local/x"), Perms: new("rw")},
			wantErr: "not an octal file mode",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.setup != nil {
				tc.setup(t, dir)
			}
			_, err := render(t, dir, nil, tc.tmpl)
			must.ErrorContains(t, err, tc.wantErr)
			must.StrNotContains(t, err.Error(), "hunter2")
			_, err = os.Stat(filepath.Join(outside, "x"))
			must.ErrorIs(t, err, os.ErrNotExist)
		})
	}
}

func TestRenderNomadWithoutAddress(t *testing.T) {
	// No API address: a Nomad function fails the render rather than waiting forever.
	dir := t.TempDir()
	_, err := render(t, dir, nil, &api.Template{EmbeddedTmpl: new(`{{ with nomadVar "nomad/jobs/x" }}{{ .a }}{{ end }}`), DestPath: new("x")})
	must.ErrorContains(t, err, `template function "nomadVar" needs the Nomad API: this agent does not offer`)
}

func TestRenderNomadWithoutToken(t *testing.T) {
	// Without the task's identity the API client would use the agent's NOMAD_TOKEN.
	t.Setenv("NOMAD_TOKEN", "agent-token")
	m, err := New(&Config{
		Templates: []*api.Template{{EmbeddedTmpl: new(`{{ nomadVarExists "nomad/jobs/x" }}`), DestPath: new("x")}},
		TaskDir:   t.TempDir(),
		Nomad:     NomadAPI{Address: "http://127.0.0.1:1"},
	})
	must.Nil(t, m)
	must.ErrorContains(t, err, "the task has no workload identity to read it with")
}

func TestRenderOwner(t *testing.T) {
	// As root any IDs will do; otherwise only the agent's own (and another of its groups,
	// when it has one) can be given without privilege.
	uid, gid := os.Getuid(), os.Getgid()
	if uid == 0 {
		uid, gid = 4242, 4343
	} else if groups, err := os.Getgroups(); err == nil {
		for _, g := range groups {
			if g != gid {
				gid = g
				break
			}
		}
	}
	dir := t.TempDir()
	_, err := render(t, dir, nil, &api.Template{EmbeddedTmpl: new("x"), DestPath: new("x"), Uid: new(uid), Gid: new(gid)})
	must.NoError(t, err)
	fi, err := os.Stat(filepath.Join(dir, "x"))
	must.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	must.Eq(t, uint32(uid), st.Uid)
	must.Eq(t, uint32(gid), st.Gid)
}

// TestRenderPaths: destinations are the task directory's when relative, and may reach the
// allocation's directory (as upstream's sandbox), also as exec and docker tasks name it.
func TestRenderPaths(t *testing.T) {
	cases := []struct {
		name    string
		dest    func(allocDir string) string
		want    string // relative to the allocation directory
		wantErr string
	}{
		{name: "relative", dest: func(string) string { return "local/a" }, want: "task/local/a"},
		{name: "as the task sees the shared directory", dest: func(string) string { return "/alloc/data/a" }, want: "alloc/data/a"},
		{name: "as the task sees its secrets", dest: func(string) string { return "/secrets/a" }, want: "task/secrets/a"},
		{name: "host path in the allocation", dest: func(d string) string { return filepath.Join(d, "alloc", "b") }, want: "alloc/b"},
		{name: "another task's directory", dest: func(string) string { return "../other/a" }, want: "other/a"},
		{name: "out of the allocation", dest: func(string) string { return "../../etc/x" }, wantErr: "path would leave its directory"},
		{name: "out by an absolute path", dest: func(string) string { return "/../../../etc/x" }, wantErr: "path would leave its directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			allocDir := t.TempDir()
			taskDir := filepath.Join(allocDir, "task")
			must.NoError(t, os.MkdirAll(taskDir, 0o755))
			m, err := New(&Config{TaskDir: taskDir, AllocDir: allocDir,
				Templates: []*api.Template{{EmbeddedTmpl: new("x"), DestPath: new(tc.dest(allocDir))}}})
			if tc.wantErr != "" {
				must.ErrorContains(t, err, tc.wantErr)
				return
			}
			must.NoError(t, err)
			t.Cleanup(m.Stop)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err = m.Render(ctx)
			must.NoError(t, err)
			b, err := os.ReadFile(filepath.Join(allocDir, tc.want))
			must.NoError(t, err)
			must.Eq(t, "x", string(b))
		})
	}
}
