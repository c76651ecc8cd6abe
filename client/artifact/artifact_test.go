package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// artifactServer serves files by path and records each request's headers.
type artifactServer struct {
	*httptest.Server
	mu      sync.Mutex
	headers []http.Header
}

func newArtifactServer(t *testing.T, files map[string][]byte) *artifactServer {
	s := &artifactServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.headers = append(s.headers, r.Header.Clone())
		s.mu.Unlock()
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(b)
	}))
	t.Cleanup(s.Close)
	return s
}

func tarGz(t *testing.T, files map[string]string) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range files {
		must.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(body))
		must.NoError(t, err)
	}
	must.NoError(t, tw.Close())
	must.NoError(t, gz.Close())
	return buf.Bytes()
}

// allocWithTask makes an allocation directory holding task "web" with its local/ directory.
func allocWithTask(t *testing.T) string {
	dir := t.TempDir()
	must.NoError(t, os.MkdirAll(filepath.Join(dir, "web", "local"), 0o755))
	must.NoError(t, os.MkdirAll(filepath.Join(dir, "alloc", "data"), 0o755))
	return dir
}

func readFile(t *testing.T, p string) string {
	b, err := os.ReadFile(p)
	must.NoError(t, err)
	return string(b)
}

func TestFetch_Downloads(t *testing.T) {
	conf := []byte("listen = 8080\n")
	sum := sha256.Sum256(conf)
	srv := newArtifactServer(t, map[string][]byte{
		"/app.conf":      conf,
		"/bundle.tar.gz": tarGz(t, map[string]string{"bin/run.sh": "echo hi\n", "README": "read me\n"}),
	})
	cases := []struct {
		name     string
		artifact api.TaskArtifact
		// want maps paths under the allocation directory to their contents.
		want map[string]string
	}{
		{name: "a file into local/ by default",
			artifact: api.TaskArtifact{GetterSource: new(srv.URL + "/app.conf")},
			want:     map[string]string{"web/local/app.conf": string(conf)}},
		{name: "checksum that matches",
			artifact: api.TaskArtifact{GetterSource: new(srv.URL + "/app.conf"),
				GetterOptions: map[string]string{"checksum": "sha256:" + hex.EncodeToString(sum[:])}},
			want: map[string]string{"web/local/app.conf": string(conf)}},
		{name: "an archive is unpacked into the destination",
			artifact: api.TaskArtifact{GetterSource: new(srv.URL + "/bundle.tar.gz"), RelativeDest: new("local/app")},
			want:     map[string]string{"web/local/app/bin/run.sh": "echo hi\n", "web/local/app/README": "read me\n"}},
		{name: "file mode names the file",
			artifact: api.TaskArtifact{GetterSource: new(srv.URL + "/app.conf"), GetterMode: new("file"), RelativeDest: new("local/conf/renamed.conf")},
			want:     map[string]string{"web/local/conf/renamed.conf": string(conf)}},
		{name: "the shared alloc directory through ../alloc",
			artifact: api.TaskArtifact{GetterSource: new(srv.URL + "/app.conf"), RelativeDest: new("../alloc/data")},
			want:     map[string]string{"alloc/data/app.conf": string(conf)}},
		{name: "interpolated source and destination",
			artifact: api.TaskArtifact{GetterSource: new("${BASE}/app.conf"), RelativeDest: new("local/${NOMAD_TASK_NAME}")},
			want:     map[string]string{"web/local/web/app.conf": string(conf)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := allocWithTask(t)
			replace := strings.NewReplacer("${BASE}", srv.URL, "${NOMAD_TASK_NAME}", "web").Replace
			err := New(Config{}).Fetch(context.Background(), Request{Artifact: &tc.artifact, AllocDir: dir, TaskName: "web", Replace: replace})
			must.NoError(t, err)
			for p, body := range tc.want {
				must.Eq(t, body, readFile(t, filepath.Join(dir, p)), must.Sprint(p))
			}
			// Nothing of the download's own directory is left behind.
			entries, err := filepath.Glob(filepath.Join(dir, ".artifact-*"))
			must.NoError(t, err)
			must.SliceEmpty(t, entries)
		})
	}
}

func TestFetch_SendsHeaders(t *testing.T) {
	srv := newArtifactServer(t, map[string][]byte{"/f": []byte("x")})
	dir := allocWithTask(t)
	a := &api.TaskArtifact{GetterSource: new(srv.URL + "/f"), GetterHeaders: map[string]string{"X-Api-Key": "${KEY}"}}
	replace := strings.NewReplacer("${KEY}", "k123").Replace
	must.NoError(t, New(Config{}).Fetch(context.Background(), Request{Artifact: a, AllocDir: dir, TaskName: "web", Replace: replace}))
	srv.mu.Lock()
	defer srv.mu.Unlock()
	must.SliceNotEmpty(t, srv.headers)
	for _, h := range srv.headers {
		must.Eq(t, "k123", h.Get("X-Api-Key"))
	}
}

// TestFetch_Refuses: sources that would read the host, destinations that leave the
// allocation, links a task planted, and downloads past the limits all fail, and nothing is
// written outside the allocation directory.
func TestFetch_Refuses(t *testing.T) {
	secret := []byte("top secret")
	srv := newArtifactServer(t, map[string][]byte{
		"/app.conf": []byte("conf"),
		"/big":      bytes.Repeat([]byte("x"), 4096),
		"/many.tgz": tarGz(t, map[string]string{"a": "1", "b": "2", "c": "3"}),
	})
	outside := t.TempDir()
	hostFile := filepath.Join(outside, "host-secret")
	must.NoError(t, os.WriteFile(hostFile, secret, 0o600))

	cases := []struct {
		name     string
		cfg      Config
		artifact api.TaskArtifact
		// plant runs on the allocation directory before the fetch.
		plant   func(t *testing.T, dir string)
		wantErr string
	}{
		{name: "a host path", artifact: api.TaskArtifact{GetterSource: new(hostFile)}, wantErr: "local path is not allowed"},
		{name: "a file URL", artifact: api.TaskArtifact{GetterSource: new("file://" + hostFile)}, wantErr: `scheme "file" is not supported`},
		{name: "a forced file getter", artifact: api.TaskArtifact{GetterSource: new("file::" + hostFile)}, wantErr: `getter "file" is not supported`},
		{name: "s3", artifact: api.TaskArtifact{GetterSource: new("s3::https://bucket.s3.amazonaws.com/x")}, wantErr: `getter "s3" is not supported`},
		{name: "an absolute destination", artifact: api.TaskArtifact{GetterSource: new(srv.URL + "/app.conf"), RelativeDest: new(outside)},
			wantErr: "must be relative"},
		{name: "a destination past the allocation", artifact: api.TaskArtifact{GetterSource: new(srv.URL + "/app.conf"), RelativeDest: new("../../escape")},
			wantErr: "leaves the allocation directory"},
		{name: "a link the task planted", artifact: api.TaskArtifact{GetterSource: new(srv.URL + "/app.conf"), RelativeDest: new("local/evil")},
			plant: func(t *testing.T, dir string) {
				must.NoError(t, os.Symlink(outside, filepath.Join(dir, "web", "local", "evil")))
			}, wantErr: "artifact destination"},
		{name: "a link in place of the file", artifact: api.TaskArtifact{GetterSource: new(srv.URL + "/app.conf"), GetterMode: new("file"), RelativeDest: new("local/evil/app.conf")},
			plant: func(t *testing.T, dir string) {
				must.NoError(t, os.Symlink(outside, filepath.Join(dir, "web", "local", "evil")))
			}, wantErr: "artifact destination"},
		{name: "a checksum that does not match", artifact: api.TaskArtifact{GetterSource: new(srv.URL + "/app.conf"),
			GetterOptions: map[string]string{"checksum": "sha256:" + strings.Repeat("0", 64)}}, wantErr: "checksum"},
		{name: "past http_max_size", cfg: Config{HTTPMaxSize: 1024}, artifact: api.TaskArtifact{GetterSource: new(srv.URL + "/big")},
			wantErr: "downloading artifact"},
		{name: "past the decompression file count", cfg: Config{DecompressionFileCountLimit: 2},
			artifact: api.TaskArtifact{GetterSource: new(srv.URL + "/many.tgz")}, wantErr: "downloading artifact"},
		{name: "not found", artifact: api.TaskArtifact{GetterSource: new(srv.URL + "/missing")}, wantErr: "404"},
		{name: "an unknown mode", artifact: api.TaskArtifact{GetterSource: new(srv.URL + "/app.conf"), GetterMode: new("tree")}, wantErr: "want any, file or dir"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := allocWithTask(t)
			if tc.plant != nil {
				tc.plant(t, dir)
			}
			err := New(tc.cfg).Fetch(context.Background(), Request{Artifact: &tc.artifact, AllocDir: dir, TaskName: "web"})
			must.ErrorContains(t, err, tc.wantErr)
			entries, rerr := os.ReadDir(outside)
			must.NoError(t, rerr)
			must.Len(t, 1, entries, must.Sprint("nothing may be written outside the allocation"))
			must.Eq(t, string(secret), readFile(t, hostFile))
			leftovers, _ := filepath.Glob(filepath.Join(dir, ".artifact-*"))
			must.SliceEmpty(t, leftovers)
		})
	}
}

func TestFetch_ErrorsHideCredentials(t *testing.T) {
	srv := newArtifactServer(t, nil)
	dir := allocWithTask(t)
	src := strings.Replace(srv.URL, "http://", "http://user:hunter2@", 1) + "/missing?token=s3cr3t"
	err := New(Config{}).Fetch(context.Background(), Request{Artifact: &api.TaskArtifact{GetterSource: &src}, AllocDir: dir, TaskName: "web"})
	must.Error(t, err)
	must.StrNotContains(t, err.Error(), "hunter2")
	must.StrNotContains(t, err.Error(), "s3cr3t")
	must.StrContains(t, err.Error(), "/missing")
}

func TestRedact(t *testing.T) {
	cases := map[string]string{
		"https://u:p@example.com/a.tgz?sig=x#frag": "https://example.com/a.tgz",
		"git::https://example.com/r.git?ref=v1":    "git::https://example.com/r.git",
		"github.com/org/repo?ref=main":             "github.com/org/repo",
	}
	for in, want := range cases {
		must.Eq(t, want, redact(in), must.Sprint(in))
	}
}

// TestFetch_Chown: with an owner, every file and directory the artifact placed belongs to it
// (links never followed), while the destination directory that was already there keeps its own.
func TestFetch_Chown(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatalf("chown needs root in CI (euid %d)", os.Geteuid())
		}
		t.Skipf("chown needs root (euid %d)", os.Geteuid())
	}
	srv := newArtifactServer(t, map[string][]byte{
		"/bundle.tar.gz": tarGz(t, map[string]string{"bin/run.sh": "echo hi\n"}),
		"/one.conf":      []byte("x"),
	})
	dir := allocWithTask(t)
	owner := &Owner{UID: 65534, GID: 65534}
	f := New(Config{})
	must.NoError(t, f.Fetch(context.Background(), Request{Artifact: &api.TaskArtifact{GetterSource: new(srv.URL + "/bundle.tar.gz")},
		AllocDir: dir, TaskName: "web", Owner: owner}))
	must.NoError(t, f.Fetch(context.Background(), Request{Artifact: &api.TaskArtifact{GetterSource: new(srv.URL + "/one.conf")},
		AllocDir: dir, TaskName: "web", Owner: owner}))
	for _, p := range []string{"web/local/bin", "web/local/bin/run.sh", "web/local/one.conf"} {
		info, err := os.Lstat(filepath.Join(dir, p))
		must.NoError(t, err)
		st := info.Sys().(*syscall.Stat_t)
		must.Eq(t, uint32(65534), st.Uid, must.Sprint(p))
		must.Eq(t, uint32(65534), st.Gid, must.Sprint(p))
	}
	info, err := os.Lstat(filepath.Join(dir, "web", "local"))
	must.NoError(t, err)
	must.Eq(t, uint32(0), info.Sys().(*syscall.Stat_t).Uid)
}
