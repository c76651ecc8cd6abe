package command

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/cli"
	"github.com/shoenig/test/must"
)

func TestMain(m *testing.M) {
	// The api client reads these; a developer's shell must not steer tests
	// to a real cluster.
	for _, k := range []string{"NOMAD_ADDR", "NOMAD_TOKEN", "NOMAD_NAMESPACE", "NOMAD_REGION"} {
		os.Unsetenv(k)
	}
	os.Exit(m.Run())
}

// request is what the fake agent saw.
type request struct {
	Method string
	Path   string
	Query  map[string][]string
	Body   string
}

// fakeAgent serves canned answers keyed by "METHOD /path" and records every
// request. Unknown routes answer 404 as the real agent does.
type fakeAgent struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []request
}

type route func(w http.ResponseWriter, r *http.Request)

func newFakeAgent(t *testing.T, routes map[string]route) *fakeAgent {
	t.Helper()
	fa := &fakeAgent{}
	fa.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fa.mu.Lock()
		fa.reqs = append(fa.reqs, request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Body: string(body)})
		fa.mu.Unlock()
		if h, ok := routes[r.Method+" "+r.URL.Path]; ok {
			h(w, r)
			return
		}
		http.Error(w, "not found", http.StatusNotFound)
	}))
	t.Cleanup(fa.srv.Close)
	return fa
}

func (fa *fakeAgent) requests() []request {
	fa.mu.Lock()
	defer fa.mu.Unlock()
	return append([]request(nil), fa.reqs...)
}

// find returns the requests with the given method and path.
func (fa *fakeAgent) find(method, path string) []request {
	var out []request
	for _, r := range fa.requests() {
		if r.Method == method && r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// jsonBody answers with a fixed JSON document.
func jsonBody(body string) route {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Nomad-Index", "1")
		io.WriteString(w, body)
	}
}

// textError answers with a plain-text error, as the agent does.
func textError(code int, body string) route {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

// runCLI runs a command the way main does: looked up by its words in
// Commands, pointed at addr.
func runCLI(t *testing.T, addr, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ui := cli.NewMockUi()
	ui.InputReader = strings.NewReader(stdin)
	cmds := Commands(ui)

	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	// Longest name first so "job tag apply" wins over "job tag".
	sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	joined := strings.Join(args, " ") + " "
	for _, n := range names {
		if strings.HasPrefix(joined, n+" ") {
			cmd, err := cmds[n]()
			must.NoError(t, err)
			rest := append([]string{"-address=" + addr}, args[len(strings.Fields(n)):]...)
			code = cmd.Run(rest)
			return code, ui.OutputWriter.String(), ui.ErrorWriter.String()
		}
	}
	t.Fatalf("no command for %v", args)
	return
}
