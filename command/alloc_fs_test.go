package command

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// fakeFS is an allocation directory the fake agent serves: "/" and "web/local" are
// directories, "web/local/app.log" a file of three lines.
var (
	fsModTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	fsContent = "l1\nl2\nl3\n"
	fsFiles   = map[string]*api.AllocFileInfo{
		"/":                 {Name: "/", IsDir: true, Size: 4096, FileMode: "drwxrwxrwx", ModTime: fsModTime},
		"web/local":         {Name: "local", IsDir: true, Size: 4096, FileMode: "drwxr-xr-x", ModTime: fsModTime},
		"web/local/app.log": {Name: "app.log", Size: int64(len(fsContent)), FileMode: "-rw-r--r--", ModTime: fsModTime, ContentType: "text/plain; charset=utf-8"},
	}
	fsListing = []*api.AllocFileInfo{
		{Name: "alloc", IsDir: true, Size: 4096, FileMode: "drwxrwxrwx", ModTime: fsModTime},
		{Name: "big.bin", Size: 3 << 20, FileMode: "-rw-r--r--", ModTime: fsModTime},
		{Name: "web", IsDir: true, Size: 4096, FileMode: "drwxrwxrwx", ModTime: fsModTime},
	}
)

func fsRoutes() map[string]route {
	p := "/v1/client/fs/%s/" + execAllocID
	at := func(op string) string { return strings.Replace(p, "%s", op, 1) }
	return map[string]route{
		"GET /v1/allocations":               jsonBody(`[{"ID":"` + execAllocID + `"}]`),
		"GET /v1/allocation/" + execAllocID: jsonBody(execAllocJSON),
		"GET " + at("stat"): func(w http.ResponseWriter, r *http.Request) {
			f, ok := fsFiles[r.URL.Query().Get("path")]
			if !ok {
				textError(404, `file "`+r.URL.Query().Get("path")+`" not found in the allocation directory`)(w, r)
				return
			}
			_ = json.NewEncoder(w).Encode(f)
		},
		"GET " + at("ls"): func(w http.ResponseWriter, r *http.Request) {
			_ = json.NewEncoder(w).Encode(fsListing)
		},
		"GET " + at("readat"): func(w http.ResponseWriter, r *http.Request) {
			off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
			_, _ = w.Write([]byte(fsContent[min(off, len(fsContent)):]))
		},
		"GET " + at("stream"): func(w http.ResponseWriter, r *http.Request) {
			off, _ := strconv.ParseInt(r.URL.Query().Get("offset"), 10, 64)
			enc := json.NewEncoder(w)
			_ = enc.Encode(&api.StreamFrame{Offset: off + 4, Data: []byte("new\n"), File: "web/local/app.log"})
			_ = enc.Encode(&api.StreamFrame{File: "web/local/app.log", FileEvent: "file truncated"})
			_ = enc.Encode(&api.StreamFrame{Offset: 5, Data: []byte("more\n"), File: "web/local/app.log"})
			_ = enc.Encode(&api.StreamFrame{File: "web/local/app.log", FileEvent: "file deleted"})
		},
	}
}

func TestAllocFS_CLI(t *testing.T) {
	stamp := formatTime(fsModTime)
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
		// wantQuery is checked on the last request to the named fs operation.
		op        string
		wantQuery map[string]string
	}{
		{
			name: "list the root", args: []string{"5a7c"},
			stdout: "Mode        Size     Modified Time         Name\n" +
				"drwxrwxrwx  4.0 KiB  " + stamp + "  alloc/\n" +
				"-rw-r--r--  3.0 MiB  " + stamp + "  big.bin\n" +
				"drwxrwxrwx  4.0 KiB  " + stamp + "  web/\n",
			op: "ls", wantQuery: map[string]string{"path": "/", "namespace": "prod"},
		},
		{
			name: "list, machine friendly", args: []string{"-H", "5a7c", "web/local"},
			stdout: "Mode        Size     Modified Time         Name\n" +
				"drwxrwxrwx  4096     " + stamp + "  alloc/\n" +
				"-rw-r--r--  3145728  " + stamp + "  big.bin\n" +
				"drwxrwxrwx  4096     " + stamp + "  web/\n",
			op: "ls", wantQuery: map[string]string{"path": "web/local"},
		},
		{
			name: "stat a file", args: []string{"-stat", "5a7c", "web/local/app.log"},
			stdout: "Mode        Size  Modified Time         Name\n" +
				"-rw-r--r--  9 B   " + stamp + "  app.log\n",
		},
		{
			name: "stat verbose", args: []string{"-stat", "-verbose", "-H", "5a7c", "web/local/app.log"},
			stdout: "Mode        Size  Modified Time         Name     Content Type\n" +
				"-rw-r--r--  9     " + stamp + "  app.log  text/plain; charset=utf-8\n",
		},
		{
			name: "cat", args: []string{"5a7c", "web/local/app.log"}, stdout: fsContent,
			op: "readat", wantQuery: map[string]string{"offset": "0", "limit": "0"},
		},
		{
			name: "tail bytes", args: []string{"-tail", "-c", "3", "5a7c", "web/local/app.log"}, stdout: "l3\n",
			op: "readat", wantQuery: map[string]string{"offset": "6"},
		},
		{name: "tail lines", args: []string{"-tail", "-n", "2", "5a7c", "web/local/app.log"}, stdout: "l2\nl3\n"},
		{name: "tail defaults to 10 lines", args: []string{"-tail", "5a7c", "web/local/app.log"}, stdout: fsContent},
		{
			name: "follow through truncation until deleted", args: []string{"-f", "5a7c", "web/local/app.log"},
			stdout: fsContent + "new\nmore\n",
			op:     "stream", wantQuery: map[string]string{"offset": "9", "origin": "start"},
		},
		{name: "missing file", args: []string{"5a7c", "nope"}, code: 1,
			stderr: "Error reading \"nope\": Unexpected response code: 404 (file \"nope\" not found in the allocation directory)\n"},
		{name: "follow a directory", args: []string{"-f", "5a7c"}, code: 1, stderr: "\"/\" is a directory: -f and -tail print files\n"},
		{name: "no arguments", code: 1, stderr: "This command takes one or two arguments: <allocation> [<path>]\n"},
		{name: "-n without -tail", args: []string{"-n", "3", "5a7c"}, code: 1, stderr: "-n and -c need -tail\n"},
		{name: "-stat and -f", args: []string{"-stat", "-f", "5a7c"}, code: 1, stderr: "-stat cannot be used with -f or -tail\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fa := newFakeAgent(t, fsRoutes())
			ui := cli.NewMockUi()
			var stdout bytes.Buffer
			cmd := &AllocFSCommand{Meta: Meta{Ui: ui}, Stdout: &stdout}
			code := cmd.Run(append([]string{"-address=" + fa.srv.URL}, tc.args...))
			must.Eq(t, tc.code, code, must.Sprint(ui.ErrorWriter.String()))
			must.Eq(t, tc.stdout, stdout.String())
			must.Eq(t, tc.stderr, ui.ErrorWriter.String())
			if tc.op != "" {
				reqs := fa.find("GET", "/v1/client/fs/"+tc.op+"/"+execAllocID)
				must.SliceNotEmpty(t, reqs)
				last := reqs[len(reqs)-1]
				for k, v := range tc.wantQuery {
					must.Eq(t, v, strings.Join(last.Query[k], ","), must.Sprint(k))
				}
			}
		})
	}
}

func TestAllocFS_CLIRefused(t *testing.T) {
	routes := fsRoutes()
	routes["GET /v1/client/fs/stat/"+execAllocID] = textError(403, `Permission denied: read-fs capability required in namespace "prod"`)
	fa := newFakeAgent(t, routes)
	code, out, errOut := runCLI(t, fa.srv.URL, "", "alloc", "fs", "5a7c", "web")
	must.Eq(t, 1, code)
	must.Eq(t, "", out)
	must.Eq(t, "Error reading \"web\": Unexpected response code: 403 "+
		"(Permission denied: read-fs capability required in namespace \"prod\")\n", errOut)
}

func TestIBytes(t *testing.T) {
	cases := []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"}, {10 << 10, "10 KiB"},
		{3 << 20, "3.0 MiB"}, {5 << 30, "5.0 GiB"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) { must.Eq(t, tc.want, iBytes(tc.n)) })
	}
}

func TestAllocFS_CLIFollowRefused(t *testing.T) {
	routes := fsRoutes()
	routes["GET /v1/client/fs/stream/"+execAllocID] = textError(403, `Permission denied: read-fs capability required in namespace "prod"`)
	fa := newFakeAgent(t, routes)
	code, out, errOut := runCLI(t, fa.srv.URL, "", "alloc", "fs", "-f", "5a7c", "web/local/app.log")
	must.Eq(t, 1, code)
	must.Eq(t, "", out) // runCLI's command writes files to the process's stdout, not the UI
	must.StrContains(t, errOut, "403")
}
