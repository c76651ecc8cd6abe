package servicecheck

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/shoenig/test/must"
)

func hostPort(t *testing.T, rawURL string) (string, int) {
	t.Helper()
	u, err := url.Parse(rawURL)
	must.NoError(t, err)
	host, port, err := net.SplitHostPort(u.Host)
	must.NoError(t, err)
	p, err := strconv.Atoi(port)
	must.NoError(t, err)
	return host, p
}

// waitStatus waits for the check's status to become want and returns it.
func waitStatus(t *testing.T, r *Runner, id, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	last := ""
	for time.Now().Before(deadline) {
		st, ok := r.Statuses()[id]
		if ok && st.Status == want {
			return
		}
		last = fmt.Sprintf("%+v", st)
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("check %s never became %s; last: %s", id, want, last)
}

func TestHTTPCheck_StatusCodesMethodHeaderPath(t *testing.T) {
	var code atomic.Int32
	code.Store(200)
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("X-Probe"))
		mu.Unlock()
		w.WriteHeader(int(code.Load()))
		_, _ = io.WriteString(w, "body says why")
	}))
	defer srv.Close()
	host, port := hostPort(t, srv.URL)

	r := NewRunner(hclog.NewNullLogger(), nil, nil, nil)
	defer r.Stop()
	spec := Spec{ID: "c1", Name: "alive", Service: "web", Group: "j.g[0]", Type: TypeHTTP, Address: host, Port: port,
		Path: "/health", Method: "POST", Header: map[string][]string{"X-Probe": {"yes"}},
		Interval: 50 * time.Millisecond, Timeout: time.Second}
	r.Set([]Spec{spec})
	waitStatus(t, r, "c1", StatusSuccess)
	st := r.Statuses()["c1"]
	must.Eq(t, 200, st.StatusCode)
	must.Eq(t, "nomad: http ok", st.Output)
	must.Eq(t, ModeHealthiness, st.Mode)
	must.Eq(t, "j.g[0]", st.Group)
	ok, _ := r.Healthy()
	must.True(t, ok)
	mu.Lock()
	must.Eq(t, "POST /health yes", seen[0])
	mu.Unlock()

	for _, c := range []int{500, 404, 301, 200} {
		code.Store(int32(c))
		want := StatusFailure
		if c == 200 {
			want = StatusSuccess
		}
		deadline := time.Now().Add(10 * time.Second)
		for r.Statuses()["c1"].StatusCode != c && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		st := r.Statuses()["c1"]
		must.Eq(t, c, st.StatusCode)
		must.Eq(t, want, st.Status, must.Sprintf("status code %d", c))
		if c != 200 {
			must.StrContains(t, st.Output, "body says why")
			ok, _ := r.Healthy()
			must.False(t, ok)
		}
	}
}

func TestHTTPCheck_Timeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	host, port := hostPort(t, srv.URL)
	r := NewRunner(hclog.NewNullLogger(), nil, nil, nil)
	defer r.Stop()
	r.Set([]Spec{{ID: "slow", Name: "slow", Type: TypeHTTP, Address: host, Port: port,
		Interval: 50 * time.Millisecond, Timeout: 100 * time.Millisecond}})
	waitStatus(t, r, "slow", StatusFailure)
	must.StrContains(t, r.Statuses()["slow"].Output, "timed out")
}

func TestTCPCheck_PassAndFail(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	r := NewRunner(hclog.NewNullLogger(), nil, nil, nil)
	defer r.Stop()
	r.Set([]Spec{{ID: "tcp", Name: "tcp", Type: TypeTCP, Address: "127.0.0.1", Port: port,
		Interval: 50 * time.Millisecond, Timeout: time.Second}})
	waitStatus(t, r, "tcp", StatusSuccess)
	must.Eq(t, "nomad: tcp ok", r.Statuses()["tcp"].Output)
	must.NoError(t, l.Close())
	waitStatus(t, r, "tcp", StatusFailure)
	must.StrContains(t, r.Statuses()["tcp"].Output, "refused")
}

func TestScriptCheck_ExitCodes(t *testing.T) {
	var code atomic.Int32
	var gotTask string
	var gotCmd []string
	var mu sync.Mutex
	exec := func(ctx context.Context, task string, command []string, out io.Writer) (int, error) {
		mu.Lock()
		gotTask, gotCmd = task, command
		mu.Unlock()
		_, _ = io.WriteString(out, "script out")
		return int(code.Load()), nil
	}
	r := NewRunner(hclog.NewNullLogger(), exec, nil, nil)
	defer r.Stop()
	spec := Spec{ID: "s", Name: "s", Type: TypeScript, Command: "/bin/check", Args: []string{"-x"}, ExecTask: "web",
		Interval: 30 * time.Millisecond, Timeout: time.Second, OnUpdate: OnUpdateIgnoreWarnings}
	r.Set([]Spec{spec})
	waitStatus(t, r, "s", StatusSuccess)
	mu.Lock()
	must.Eq(t, "web", gotTask)
	must.Eq(t, []string{"/bin/check", "-x"}, gotCmd)
	mu.Unlock()
	must.Eq(t, "script out", r.Statuses()["s"].Output)

	code.Store(1)
	waitStatus(t, r, "s", StatusWarning)
	ok, _ := r.Healthy()
	must.True(t, ok, must.Sprint("ignore_warnings: a warning keeps the allocation healthy"))
	code.Store(2)
	waitStatus(t, r, "s", StatusFailure)
	ok, _ = r.Healthy()
	must.False(t, ok)
}

func TestCheckRestart_AfterLimitOnceGracePassed(t *testing.T) {
	type restart struct{ task, reason string }
	restarts := make(chan restart, 10)
	r := NewRunner(hclog.NewNullLogger(), nil, func(task, reason string) { restarts <- restart{task, reason} }, nil)
	defer r.Stop()
	// Nothing listens on a closed listener's port.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	must.NoError(t, l.Close())
	start := time.Now()
	r.Set([]Spec{{ID: "dead", Name: "dead", Type: TypeTCP, Address: "127.0.0.1", Port: port, ExecTask: "web",
		Interval: 20 * time.Millisecond, Timeout: time.Second,
		Restart: &Restart{Limit: 3, Grace: 200 * time.Millisecond}}})
	select {
	case got := <-restarts:
		must.Eq(t, "web", got.task)
		must.Eq(t, `healthcheck: check "dead" unhealthy`, got.reason)
		must.True(t, time.Since(start) >= 200*time.Millisecond, must.Sprint("no restart within the grace"))
	case <-time.After(10 * time.Second):
		t.Fatal("the task was never restarted")
	}
}

func TestRunner_ReadinessCheckTakesNoPartInHealth(t *testing.T) {
	r := NewRunner(hclog.NewNullLogger(), nil, nil, nil)
	defer r.Stop()
	r.Set([]Spec{{ID: "r", Name: "r", Type: TypeTCP, Address: "127.0.0.1", Port: 1, OnUpdate: OnUpdateIgnore,
		Interval: time.Hour, Timeout: time.Second}})
	waitStatus(t, r, "r", StatusFailure)
	must.Eq(t, ModeReadiness, r.Statuses()["r"].Mode)
	ok, _ := r.Healthy()
	must.True(t, ok)
	r.Set(nil)
	must.MapEmpty(t, r.Statuses())
}
