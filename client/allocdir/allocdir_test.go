package allocdir

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/shoenig/test/must"
)

func TestSecurity_AllocDirJoin(t *testing.T) {
	root := "/data/alloc"
	cases := []struct {
		name  string
		elems []string
		want  string // "" when refused
	}{
		{name: "plain", elems: []string{"a1", "web", "local"}, want: "/data/alloc/a1/web/local"},
		{name: "dots inside a name", elems: []string{"a1", "web..1"}, want: "/data/alloc/a1/web..1"},
		{name: "log file", elems: []string{"a1", "alloc", "logs", "web.stdout.0"}, want: "/data/alloc/a1/alloc/logs/web.stdout.0"},
		{name: "traversal task name", elems: []string{"a1", "../../../../../../../../tmp/x"}},
		{name: "dot dot", elems: []string{"a1", ".."}},
		{name: "dot dot as the allocation", elems: []string{".."}},
		{name: "dot", elems: []string{"."}},
		{name: "slash inside", elems: []string{"a1", "web/local"}},
		{name: "backslash is no separator here", elems: []string{"a1", `..\..`}, want: `/data/alloc/a1/..\..`},
		{name: "absolute", elems: []string{"/etc"}},
		{name: "NUL", elems: []string{"a1", "we\x00b"}},
		{name: "newline", elems: []string{"a1", "we\nb"}},
		{name: "empty", elems: []string{"a1", ""}},
		{name: "nothing", elems: nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Join(root, tc.elems...)
			if tc.want == "" {
				must.ErrorIs(t, err, ErrEscapes)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.want, got)
		})
	}
}

func TestSecurity_AllocDirRel(t *testing.T) {
	cases := []struct {
		name, path string
		ok         bool
	}{
		{name: "under", path: "/data/alloc/a1/x", ok: true},
		{name: "root itself", path: "/data/alloc"},
		{name: "sibling with the same prefix", path: "/data/alloc2/x"},
		{name: "cleaned out", path: "/data/alloc/a1/../../x"},
		{name: "elsewhere", path: "/tmp/x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Rel("/data/alloc", tc.path)
			if tc.ok {
				must.NoError(t, err)
			} else {
				must.ErrorIs(t, err, ErrEscapes)
			}
		})
	}
}

// A task can write to its allocation directory: a link it leaves where the agent creates a
// directory or opens a log must not lead the agent out.
func TestSecurity_AllocDirLinksStayInside(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "alloc")
	outside := filepath.Join(base, "outside")
	must.NoError(t, os.MkdirAll(filepath.Join(root, "logs"), 0o755))
	must.NoError(t, os.MkdirAll(outside, 0o755))
	must.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cret"), 0o600))
	must.NoError(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "logs", "web.stdout.0")))
	must.NoError(t, os.Symlink(outside, filepath.Join(root, "web")))

	_, err := OpenFile(root, filepath.Join(root, "logs", "web.stdout.0"), os.O_RDONLY, 0)
	must.Error(t, err)
	_, err = OpenFile(root, filepath.Join(root, "logs", "web.stdout.0"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	must.Error(t, err)
	must.Error(t, MkdirAll(root, filepath.Join(root, "web", "local"), 0o755))
	_, err = os.Stat(filepath.Join(outside, "local"))
	must.True(t, errors.Is(err, os.ErrNotExist), must.Sprint("a directory was created through the link"))
	got, err := os.ReadFile(filepath.Join(outside, "secret"))
	must.NoError(t, err)
	must.Eq(t, "s3cret", string(got))

	// What stays inside works.
	must.NoError(t, MkdirAll(root, filepath.Join(root, "api", "local"), 0o755))
	f, err := OpenFile(root, filepath.Join(root, "logs", "api.stdout.0"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	must.NoError(t, err)
	must.NoError(t, f.Close())
	must.ErrorIs(t, MkdirAll(root, filepath.Join(base, "x"), 0o755), ErrEscapes)
}

func TestSecurity_AllocDirOverlaps(t *testing.T) {
	base := t.TempDir()
	data := filepath.Join(base, "data")
	must.NoError(t, os.MkdirAll(filepath.Join(data, "alloc"), 0o755))
	must.NoError(t, os.MkdirAll(filepath.Join(base, "shared"), 0o755))
	must.NoError(t, os.Symlink(filepath.Join(data, "alloc"), filepath.Join(base, "link-to-alloc")))
	cases := []struct {
		name string
		path string
		want bool
	}{
		{name: "data dir itself", path: data, want: true},
		{name: "inside the data dir", path: filepath.Join(data, "alloc"), want: true},
		{name: "not yet created inside the data dir", path: filepath.Join(data, "later"), want: true},
		{name: "containing the data dir", path: base, want: true},
		{name: "root", path: "/", want: true},
		{name: "unclean path into the data dir", path: filepath.Join(base, "shared", "..", "data"), want: true},
		{name: "link into the data dir", path: filepath.Join(base, "link-to-alloc"), want: true},
		{name: "sibling", path: filepath.Join(base, "shared")},
		{name: "sibling sharing a name prefix", path: data + "2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, Overlaps(tc.path, data))
			must.Eq(t, tc.want, Overlaps(data, tc.path), must.Sprint("symmetric"))
		})
	}
}
