package client

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// fsTestClient is a client whose allocation directory holds one allocation "a1" with a task
// "web", a secret, a file outside the allocation directory, and links of every kind.
func fsTestClient(t *testing.T) (*Client, string) {
	t.Helper()
	base := t.TempDir()
	allocRoot := filepath.Join(base, "alloc")
	dir := filepath.Join(allocRoot, "a1")
	for _, d := range []string{"alloc/logs", "alloc/data", "web/local", "web/secrets", "web/tmp"} {
		must.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	write := func(p, s string) {
		must.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644))
	}
	write("web/local/hello.txt", "hello world\n")
	write("web/secrets/token", "s3cr3t-token")
	write("alloc/logs/web.stdout.0", "out\n")
	must.NoError(t, os.WriteFile(filepath.Join(base, "host-secret"), []byte("host"), 0o600))
	must.NoError(t, os.WriteFile(filepath.Join(allocRoot, "other-alloc-file"), []byte("x"), 0o600))
	link := func(target, name string) { must.NoError(t, os.Symlink(target, filepath.Join(dir, name))) }
	link(filepath.Join(base, "host-secret"), "web/local/abs-out")
	link("../../../host-secret", "web/local/rel-out")
	link("../../web/secrets", "alloc/data/to-secrets")
	link("../secrets/token", "web/local/to-token")
	link("hello.txt", "web/local/to-hello")
	link("/etc", "web/local/etc")
	link("missing", "web/local/dangling")
	must.NoError(t, syscall.Mkfifo(filepath.Join(dir, "web/local/fifo"), 0o644))
	return &Client{config: &Config{AllocDir: allocRoot}}, base
}

func TestAllocFS_ListStatCat(t *testing.T) {
	c, _ := fsTestClient(t)

	root, err := c.FSList("a1", "/")
	must.NoError(t, err)
	var names []string
	for _, f := range root {
		names = append(names, f.Name)
	}
	must.Eq(t, []string{"alloc", "web"}, names)
	must.True(t, root[0].IsDir)
	must.StrHasPrefix(t, "d", root[0].FileMode)

	task, err := c.FSList("a1", "web")
	must.NoError(t, err)
	must.Len(t, 3, task) // local, secrets, tmp: the secrets directory is listed, not opened

	st, err := c.FSStat("a1", "/web/local/hello.txt")
	must.NoError(t, err)
	must.Eq(t, "hello.txt", st.Name)
	must.Eq(t, int64(12), st.Size)
	must.False(t, st.IsDir)
	must.Eq(t, "-rw-r--r--", st.FileMode)
	must.StrHasPrefix(t, "text/plain", st.ContentType)

	st, err = c.FSStat("a1", "")
	must.NoError(t, err)
	must.Eq(t, "/", st.Name)
	must.True(t, st.IsDir)

	f, err := c.FSOpen("a1", "web/local/to-hello")
	must.NoError(t, err)
	body, err := io.ReadAll(f)
	f.Close()
	must.NoError(t, err)
	must.Eq(t, "hello world\n", string(body))
	must.Eq(t, "web/local/to-hello", f.Name)

	// ".." that stays inside is fine.
	f, err = c.FSOpen("a1", "web/tmp/../local/hello.txt")
	must.NoError(t, err)
	f.Close()
}

func TestAllocFS_RefusesEscapes(t *testing.T) {
	c, _ := fsTestClient(t)
	cases := []struct {
		name     string
		alloc    string
		path     string
		wantCode int
	}{
		{name: "dot dot", alloc: "a1", path: "../other-alloc-file", wantCode: http.StatusBadRequest},
		{name: "dot dot from root", alloc: "a1", path: "/../../host-secret", wantCode: http.StatusBadRequest},
		{name: "dot dot after descending", alloc: "a1", path: "web/../../host-secret", wantCode: http.StatusBadRequest},
		{name: "absolute path stays inside", alloc: "a1", path: "/etc/passwd", wantCode: http.StatusNotFound},
		{name: "absolute link out", alloc: "a1", path: "web/local/abs-out", wantCode: http.StatusBadRequest},
		{name: "relative link out", alloc: "a1", path: "web/local/rel-out", wantCode: http.StatusBadRequest},
		{name: "link to a host directory", alloc: "a1", path: "web/local/etc/passwd", wantCode: http.StatusBadRequest},
		{name: "dangling link", alloc: "a1", path: "web/local/dangling", wantCode: http.StatusBadRequest},
		{name: "secrets directory", alloc: "a1", path: "web/secrets", wantCode: http.StatusForbidden},
		{name: "secret file", alloc: "a1", path: "/web/secrets/token", wantCode: http.StatusForbidden},
		{name: "secret file by dot dot", alloc: "a1", path: "web/local/../secrets/token", wantCode: http.StatusForbidden},
		{name: "link to the secrets directory", alloc: "a1", path: "alloc/data/to-secrets/token", wantCode: http.StatusForbidden},
		{name: "link to a secret file", alloc: "a1", path: "web/local/to-token", wantCode: http.StatusForbidden},
		{name: "control character", alloc: "a1", path: "web/\x00local", wantCode: http.StatusBadRequest},
		{name: "allocation ID climbs", alloc: "..", path: "/", wantCode: http.StatusBadRequest},
		{name: "allocation ID with a slash", alloc: "a1/web", path: "/", wantCode: http.StatusBadRequest},
		{name: "unknown allocation", alloc: "nope", path: "/", wantCode: http.StatusNotFound},
		{name: "missing file", alloc: "a1", path: "web/local/nope", wantCode: http.StatusNotFound},
		{name: "below a file", alloc: "a1", path: "web/local/hello.txt/x", wantCode: http.StatusNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for op, fn := range map[string]func() error{
				"list": func() error { _, err := c.FSList(tc.alloc, tc.path); return err },
				"stat": func() error { _, err := c.FSStat(tc.alloc, tc.path); return err },
				"open": func() error {
					f, err := c.FSOpen(tc.alloc, tc.path)
					if err == nil {
						f.Close()
					}
					return err
				},
			} {
				err := fn()
				must.Error(t, err, must.Sprint(op))
				must.Eq(t, tc.wantCode, structs.ErrorCode(err), must.Sprintf("%s: %v", op, err))
				must.StrNotContains(t, err.Error(), "s3cr3t")
				if tc.wantCode == http.StatusForbidden {
					must.StrHasPrefix(t, "Permission denied", err.Error())
				}
			}
		})
	}
}

func TestAllocFS_OpenRefusesNonFiles(t *testing.T) {
	c, _ := fsTestClient(t)
	cases := []struct {
		name string
		path string
	}{
		// A FIFO would block a reader forever: refused without waiting for a writer.
		{name: "fifo", path: "web/local/fifo"},
		{name: "directory", path: "web/local"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.FSOpen("a1", tc.path)
			must.Error(t, err)
			must.Eq(t, http.StatusBadRequest, structs.ErrorCode(err))
		})
	}
	_, err := c.FSList("a1", "web/local/hello.txt")
	must.Eq(t, http.StatusBadRequest, structs.ErrorCode(err))
}
