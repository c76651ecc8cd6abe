package command

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/raft"
	"github.com/nomadfork/nomad/jobspec"
	"github.com/nomadfork/nomad/raftutil"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// testArchive builds a snapshot archive whose state holds two jobs and one variable.
func testArchive(t *testing.T) []byte {
	t.Helper()
	var state bytes.Buffer
	enc := codec.NewEncoder(&state, structs.MsgpackHandle)
	for _, row := range []struct{ table, id string }{{"jobs", "web"}, {"jobs", "api"}, {"variables", "app/x"}} {
		must.NoError(t, enc.Encode(map[string]string{"Table": row.table}))
		must.NoError(t, enc.Encode(map[string]string{"ID": row.id}))
	}
	var out bytes.Buffer
	meta := &raft.SnapshotMeta{ID: "2-42-1718013281130", Index: 42, Term: 2, Size: int64(state.Len()), Version: 1}
	must.NoError(t, raftutil.WriteSnapshotArchive(&out, meta, &state))
	return out.Bytes()
}

func snapshotRoute(archive []byte, digestOf []byte) route {
	return func(w http.ResponseWriter, r *http.Request) {
		sum := sha256.Sum256(digestOf)
		w.Header().Set("Digest", "sha-256="+base64.StdEncoding.EncodeToString(sum[:]))
		w.Header().Set("X-Nomad-Index", "42")
		_, _ = w.Write(archive)
	}
}

func TestOperatorSnapshot_CLI(t *testing.T) {
	archive := testArchive(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "backup.snap")
	fa := newFakeAgent(t, map[string]route{
		"GET /v1/operator/snapshot": snapshotRoute(archive, archive),
		"PUT /v1/operator/snapshot": func(w http.ResponseWriter, r *http.Request) { w.Header().Set("X-Nomad-Index", "50") },
	})

	code, out, errOut := runCLI(t, fa.srv.URL, "", "operator", "snapshot", "save", file)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "State file written to "+file+"\n", out)
	saved, err := os.ReadFile(file)
	must.NoError(t, err)
	must.Eq(t, archive, saved)

	code, out, errOut = runCLI(t, fa.srv.URL, "", "operator", "snapshot", "inspect", file)
	must.Eq(t, 0, code, must.Sprint(errOut))
	for _, want := range []string{`ID\s+= 2-42-1718013281130`, `Index\s+= 42`, `Term\s+= 2`, `Version\s+= 1`, `Created\s+= `,
		// The test archive's state has no schema record: it reads as written before one existed.
		`Schema Version = 0`} {
		must.RegexMatch(t, regexp.MustCompile(`(?m)^`+want), out)
	}
	must.RegexMatch(t, regexp.MustCompile(`(?m)^jobs\s+2\s+\d+ B$`), out)
	must.RegexMatch(t, regexp.MustCompile(`(?m)^variables\s+1\s+\d+ B$`), out)
	must.RegexMatch(t, regexp.MustCompile(`(?m)^Total\s+3\s+\d+ B$`), out)

	code, out, errOut = runCLI(t, fa.srv.URL, "", "operator", "snapshot", "restore", file)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Snapshot Restored\n", out)
	puts := fa.find("PUT", "/v1/operator/snapshot")
	must.SliceLen(t, 1, puts)
	must.Eq(t, string(archive), puts[0].Body)

	t.Run("a body that does not match its digest is not written", func(t *testing.T) {
		bad := newFakeAgent(t, map[string]route{"GET /v1/operator/snapshot": snapshotRoute(archive, []byte("other"))})
		target := filepath.Join(dir, "bad.snap")
		code, _, errOut := runCLI(t, bad.srv.URL, "", "operator", "snapshot", "save", target)
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, "Failed to read snapshot")
		_, err := os.Stat(target)
		must.True(t, os.IsNotExist(err))
	})

	cases := []struct {
		name    string
		content []byte
		wantErr string
	}{
		{name: "not an archive", content: []byte("hello"), wantErr: "not gzip data"},
		{name: "truncated", content: archive[:len(archive)/2], wantErr: "invalid snapshot archive"},
	}
	for _, tc := range cases {
		t.Run("inspect "+tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
			must.NoError(t, os.WriteFile(p, tc.content, 0o600))
			code, _, errOut := runCLI(t, fa.srv.URL, "", "operator", "snapshot", "inspect", p)
			must.Eq(t, 1, code)
			must.StrContains(t, errOut, tc.wantErr)
		})
	}
	code, _, errOut = runCLI(t, fa.srv.URL, "", "operator", "snapshot", "inspect", filepath.Join(dir, "missing"))
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "Error opening snapshot file")
}

func TestSystemAndPolicySelf_CLI(t *testing.T) {
	fa := newFakeAgent(t, map[string]route{
		"PUT /v1/system/gc":                  func(w http.ResponseWriter, r *http.Request) {},
		"PUT /v1/system/reconcile/summaries": func(w http.ResponseWriter, r *http.Request) {},
		"GET /v1/acl/policy/self":            jsonBody(`[{"Name":"readers","Description":"read jobs"},{"Name":"ops","Description":""}]`),
		"GET /v1/job/web/allocations":        jsonBody(`[{"ID":"5a7c0000-0000-4000-8000-000000000001","NodeID":"9f000000-0000-4000-8000-000000000001","TaskGroup":"web","JobVersion":2,"DesiredStatus":"run","ClientStatus":"running"}]`),
		"GET /v1/job/web/deployments":        jsonBody(`[{"ID":"d1000000-0000-4000-8000-000000000001","JobID":"web","JobVersion":2,"Status":"successful","StatusDescription":"Deployment completed successfully"}]`),
		"GET /v1/agent/self":                 jsonBody(`{"Stats":{"nomad":{"leader":"true","server":"true"},"client":{"enabled":"false"}}}`),
	})
	cases := []struct {
		name    string
		args    []string
		wantOut string
	}{
		{name: "system gc", args: []string{"system", "gc"}, wantOut: ""},
		{name: "reconcile", args: []string{"system", "reconcile", "summaries"}, wantOut: "Successfully reconciled job summaries\n"},
		{name: "policy self", args: []string{"acl", "policy", "self"}, wantOut: "Name     Description\nops\nreaders  read jobs\n"},
		{name: "job allocs", args: []string{"job", "allocs", "web"}, wantOut: "5a7c0000  9f000000  web         2        run      running"},
		{name: "job deployments", args: []string{"job", "deployments", "web"}, wantOut: "d1000000  web     2            successful  Deployment completed successfully"},
		{name: "agent-info", args: []string{"agent-info"}, wantOut: "client\n  enabled = false\nnomad\n  leader = true\n  server = true\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, fa.srv.URL, "", tc.args...)
			must.Eq(t, 0, code, must.Sprint(errOut))
			must.StrContains(t, out, tc.wantOut)
		})
	}
	must.SliceLen(t, 1, fa.find("PUT", "/v1/system/gc"))
	must.SliceLen(t, 1, fa.find("PUT", "/v1/system/reconcile/summaries"))

	refused := newFakeAgent(t, map[string]route{"PUT /v1/system/gc": textError(403, "Permission denied: management token required")})
	code, _, errOut := runCLI(t, refused.srv.URL, "", "system", "gc")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "Permission denied")
}

func TestStatus_SearchesEveryKind(t *testing.T) {
	search := func(matches string) route {
		return jsonBody(`{"Matches":` + matches + `,"Truncations":{}}`)
	}
	cases := []struct {
		name     string
		matches  string
		arg      string
		wantCode int
		wantOut  string
		wantErr  string
		wantCall string
	}{
		{name: "one namespace", matches: `{"namespaces":["prod"]}`, arg: "pro", wantCall: "GET /v1/namespace/prod"},
		{name: "exact job among others", matches: `{"jobs":["web","web2"],"namespaces":["webby"]}`, arg: "web", wantCall: "GET /v1/job/web"},
		{name: "ambiguous", matches: `{"jobs":["web1"],"nodes":["we000000-0000-4000-8000-000000000001"]}`, arg: "we",
			wantOut: "Prefix matched multiple objects:\n\nJobs\n  web1\n\nNodes\n  we000000-0000-4000-8000-000000000001\n"},
		{name: "nothing", matches: `{}`, arg: "zz", wantCode: 1, wantErr: "No matches found."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fa := newFakeAgent(t, map[string]route{
				"PUT /v1/search":              search(tc.matches),
				"POST /v1/search":             search(tc.matches),
				"GET /v1/namespace/prod":      jsonBody(`{"Name":"prod","Description":"production"}`),
				"GET /v1/jobs":                jsonBody(`[{"ID":"web","Name":"web","Type":"service","Status":"running"}]`),
				"GET /v1/job/web":             jsonBody(`{"ID":"web","Name":"web","Type":"service","Status":"running","Namespace":"default"}`),
				"GET /v1/job/web/summary":     jsonBody(`{"JobID":"web","Summary":{}}`),
				"GET /v1/job/web/allocations": jsonBody(`[]`),
			})
			code, out, errOut := runCLI(t, fa.srv.URL, "", "status", tc.arg)
			must.Eq(t, tc.wantCode, code, must.Sprint(errOut))
			must.StrContains(t, out, tc.wantOut)
			must.StrContains(t, errOut, tc.wantErr)
			if tc.wantCall != "" {
				method, path, _ := strings.Cut(tc.wantCall, " ")
				must.SliceNotEmpty(t, fa.find(method, path), must.Sprintf("%v", fa.requests()))
			}
		})
	}
}

func TestJobInit(t *testing.T) {
	dir := t.TempDir()
	for _, short := range []bool{false, true} {
		name := filepath.Join(dir, fmt.Sprintf("example-%t.nomad.hcl", short))
		args := []string{"job", "init", name}
		if short {
			args = []string{"job", "init", "-short", name}
		}
		code, out, errOut := runCLI(t, "http://127.0.0.1:1", "", args...)
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.Eq(t, "Example job file written to "+name+"\n", out)
		src, err := os.ReadFile(name)
		must.NoError(t, err)
		job, err := jobspec.Parse(name, src, nil)
		must.NoError(t, err)
		must.Eq(t, "example", *job.ID)
		must.Eq(t, short, !strings.Contains(string(src), "#"))

		code, _, errOut = runCLI(t, "http://127.0.0.1:1", "", args...)
		must.Eq(t, 1, code)
		must.Eq(t, "Job '"+name+"' already exists\n", errOut)
	}
}

func TestFmt(t *testing.T) {
	dir := t.TempDir()
	ugly := "job \"x\" {\ntype=\"batch\"\n  group \"g\" {\n      count = 1\n  }\n}\n"
	pretty := "job \"x\" {\n  type = \"batch\"\n  group \"g\" {\n    count = 1\n  }\n}\n"
	top := filepath.Join(dir, "a.nomad.hcl")
	sub := filepath.Join(dir, "sub", "b.hcl")
	must.NoError(t, os.MkdirAll(filepath.Dir(sub), 0o755))
	must.NoError(t, os.WriteFile(top, []byte(ugly), 0o644))
	must.NoError(t, os.WriteFile(sub, []byte(ugly), 0o644))
	must.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte(ugly), 0o644))
	read := func(p string) string {
		b, err := os.ReadFile(p)
		must.NoError(t, err)
		return string(b)
	}

	code, out, _ := runCLI(t, "", "", "fmt", "-check", dir)
	must.Eq(t, 1, code)
	must.Eq(t, top+"\n", out)
	must.Eq(t, ugly, read(top))

	code, out, _ = runCLI(t, "", "", "fmt", "-recursive", dir)
	must.Eq(t, 0, code)
	must.Eq(t, top+"\n"+sub+"\n", out)
	must.Eq(t, pretty, read(top))
	must.Eq(t, pretty, read(sub))
	must.Eq(t, ugly, read(filepath.Join(dir, "notes.txt")))

	code, out, _ = runCLI(t, "", "", "fmt", "-check", "-recursive", dir)
	must.Eq(t, 0, code)
	must.Eq(t, "", out)

	broken := filepath.Join(dir, "broken.hcl")
	must.NoError(t, os.WriteFile(broken, []byte("job \"x\" {\n"), 0o644))
	code, _, errOut := runCLI(t, "", "", "fmt", broken)
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "Error parsing "+broken)
	must.Eq(t, "job \"x\" {\n", read(broken))
}

func TestUi_ShowURL(t *testing.T) {
	// The fake agent reads the body before the route runs; the route finds it recorded.
	var fa *fakeAgent
	fa = newFakeAgent(t, map[string]route{
		"PUT /v1/search": func(w http.ResponseWriter, r *http.Request) {
			reqs := fa.requests()
			body := reqs[len(reqs)-1].Body
			w.Header().Set("Content-Type", "application/json")
			if strings.Contains(body, `"Prefix":"5a7c"`) {
				io.WriteString(w, `{"Matches":{"allocs":["5a7c0000-0000-4000-8000-000000000001"]}}`)
				return
			}
			io.WriteString(w, `{"Matches":{"jobs":["redis"]}}`)
		},
	})
	cases := []struct {
		name string
		args []string
		want string
	}{
		{name: "home", args: []string{"ui", "-show-url"}, want: fa.srv.URL + "/ui/\n"},
		{name: "job", args: []string{"ui", "-show-url", "redis"}, want: fa.srv.URL + "/ui/jobs/redis\n"},
		{name: "alloc", args: []string{"ui", "-show-url", "5a7c"}, want: fa.srv.URL + "/ui/allocations/5a7c0000-0000-4000-8000-000000000001\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, fa.srv.URL, "", tc.args...)
			must.Eq(t, 0, code, must.Sprint(errOut))
			must.Eq(t, tc.want, out)
		})
	}

	var opened string
	ui := cli.NewMockUi()
	cmd := &UiCommand{Meta: Meta{Ui: ui}, open: func(u string) error { opened = u; return nil }}
	must.Eq(t, 0, cmd.Run([]string{"-address=" + fa.srv.URL}))
	must.Eq(t, fa.srv.URL+"/ui/", opened)
	must.Eq(t, fmt.Sprintf("Opening URL %q\n", fa.srv.URL+"/ui/"), ui.OutputWriter.String())
}

func TestJobStartAndRestart(t *testing.T) {
	jobsList := jsonBody(`[{"ID":"web","Name":"web","Type":"service","Status":"dead","Stop":true}]`)
	t.Run("start a stopped job", func(t *testing.T) {
		fa := newFakeAgent(t, map[string]route{
			"GET /v1/jobs":    jobsList,
			"GET /v1/job/web": jsonBody(`{"ID":"web","Name":"web","Type":"service","Status":"dead","Stop":true,"Namespace":"default"}`),
			"PUT /v1/jobs":    jsonBody(`{"EvalID":""}`),
		})
		code, out, errOut := runCLI(t, fa.srv.URL, "", "job", "start", "-detach", "web")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.StrContains(t, out, `Job "web" started`)
		regs := fa.find("PUT", "/v1/jobs")
		must.SliceLen(t, 1, regs)
		must.StrContains(t, regs[0].Body, `"Stop":false`)
	})
	t.Run("a running job is not started", func(t *testing.T) {
		fa := newFakeAgent(t, map[string]route{
			"GET /v1/jobs":    jobsList,
			"GET /v1/job/web": jsonBody(`{"ID":"web","Status":"running","Stop":false}`),
		})
		code, _, errOut := runCLI(t, fa.srv.URL, "", "job", "start", "web")
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, "has not been stopped")
		must.SliceEmpty(t, fa.find("PUT", "/v1/jobs"))
	})

	allocs := `[` +
		`{"ID":"a1000000-0000-4000-8000-000000000001","TaskGroup":"web","DesiredStatus":"run","ClientStatus":"running"},` +
		`{"ID":"a2000000-0000-4000-8000-000000000002","TaskGroup":"web","DesiredStatus":"run","ClientStatus":"running"},` +
		`{"ID":"a3000000-0000-4000-8000-000000000003","TaskGroup":"web","DesiredStatus":"stop","ClientStatus":"complete"}]`
	ok := func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{}`) }
	fa := newFakeAgent(t, map[string]route{
		"GET /v1/jobs":                jobsList,
		"GET /v1/job/web/allocations": jsonBody(allocs),
		"PUT /v1/client/allocation/a1000000-0000-4000-8000-000000000001/restart": ok,
		"PUT /v1/client/allocation/a2000000-0000-4000-8000-000000000002/restart": ok,
	})
	code, out, errOut := runCLI(t, fa.srv.URL, "", "job", "restart", "-yes", "-batch-size=all", "web")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, "Restarting batch 1 of 2 allocations")
	must.StrContains(t, out, "Job restart finished")
	must.SliceLen(t, 1, fa.find("PUT", "/v1/client/allocation/a1000000-0000-4000-8000-000000000001/restart"))
	must.SliceEmpty(t, fa.find("PUT", "/v1/client/allocation/a3000000-0000-4000-8000-000000000003/restart"))

	code, out, _ = runCLI(t, fa.srv.URL, "n\n", "job", "restart", "web")
	must.Eq(t, 0, code)
	must.StrContains(t, out, "Job restart cancelled")
	must.SliceLen(t, 1, fa.find("PUT", "/v1/client/allocation/a2000000-0000-4000-8000-000000000002/restart"))

	sizes := []struct {
		spec    string
		n, want int
		wantErr bool
	}{
		{spec: "1", n: 5, want: 1}, {spec: "all", n: 5, want: 5}, {spec: "50%", n: 5, want: 2},
		{spec: "1%", n: 5, want: 1}, {spec: "0", n: 5, wantErr: true}, {spec: "x", n: 5, wantErr: true},
		{spec: "101%", n: 5, wantErr: true},
	}
	for _, s := range sizes {
		got, err := parseBatchSize(s.spec, s.n)
		if s.wantErr {
			must.Error(t, err, must.Sprint(s.spec))
			continue
		}
		must.NoError(t, err)
		must.Eq(t, s.want, got, must.Sprint(s.spec))
	}
}

func TestAgentMonitor(t *testing.T) {
	fa := newFakeAgent(t, map[string]route{
		"GET /v1/agent/monitor": func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "2026-12-03T10:00:00Z [WARN] agent: one\n2026-12-03T10:00:01Z [WARN] agent: two\n")
		},
	})
	var buf bytes.Buffer
	ui := cli.NewMockUi()
	cmd := &AgentMonitorCommand{Meta: Meta{Ui: ui}, Stdout: &buf, ctx: context.Background()}
	must.Eq(t, 0, cmd.Run([]string{"-address=" + fa.srv.URL, "-log-level=WARN", "-json"}))
	must.StrContains(t, buf.String(), "agent: two")
	reqs := fa.find("GET", "/v1/agent/monitor")
	must.SliceLen(t, 1, reqs)
	must.Eq(t, []string{"warn"}, reqs[0].Query["log_level"])
	must.Eq(t, []string{"true"}, reqs[0].Query["log_json"])
	must.Eq(t, []string{"true"}, reqs[0].Query["plain"])

	code, _, errOut := runCLI(t, fa.srv.URL, "", "monitor", "-log-level=loud")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, `Invalid -log-level "loud"`)
}

func TestVarLock(t *testing.T) {
	varRoute := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		q := r.URL.Query()
		switch {
		case q.Has("lock-acquire"):
			io.WriteString(w, `{"Path":"locks/job","Lock":{"ID":"lock-1","TTL":"15s","LockDelay":"15s"}}`)
		case q.Has("lock-release"):
			io.WriteString(w, `{"Path":"locks/job"}`)
		default:
			io.WriteString(w, `{}`)
		}
	}
	fa := newFakeAgent(t, map[string]route{"PUT /v1/var/locks/job": varRoute})
	marker := filepath.Join(t.TempDir(), "ran")
	ui := cli.NewMockUi()
	cmd := &VarLockCommand{Meta: Meta{Ui: ui}, ctx: context.Background()}
	code := cmd.Run([]string{"-address=" + fa.srv.URL, "-shell", "locks/job", "touch " + marker + "; exit 3"})
	must.Eq(t, 3, code, must.Sprint(ui.ErrorWriter.String()))
	_, err := os.Stat(marker)
	must.NoError(t, err)
	var acquired, released int
	for _, r := range fa.find("PUT", "/v1/var/locks/job") {
		if _, ok := r.Query["lock-acquire"]; ok {
			acquired++
		}
		if _, ok := r.Query["lock-release"]; ok {
			released++
			must.StrContains(t, r.Body, "lock-1")
		}
	}
	must.Eq(t, 1, acquired)
	must.Eq(t, 1, released)

	held := newFakeAgent(t, map[string]route{"PUT /v1/var/locks/job": textError(409, "lock held")})
	code, _, errOut := runCLI(t, held.srv.URL, "", "var", "lock", "-max-retry=0", "locks/job", "true")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "Error acquiring the lock")

	code, _, errOut = runCLI(t, held.srv.URL, "", "var", "lock", "locks/job")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "at least two arguments")
}
