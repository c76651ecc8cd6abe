package template

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// TestRenderNomadRefused: a variable the token may not read fails the render, after the few
// retries, with the API's answer and without the token.
func TestRenderNomadRefused(t *testing.T) {
	const token = "secret-jwt-token"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Nomad-Token") != token {
			http.Error(w, "no token", http.StatusBadRequest)
			return
		}
		http.Error(w, `Permission denied: read capability required`, http.StatusForbidden)
	}))
	t.Cleanup(srv.Close)
	m, err := New(&Config{
		Templates: []*api.Template{{EmbeddedTmpl: new(`{{ with nomadVar "nomad/jobs/x" }}{{ .a }}{{ end }}`), DestPath: new("x")}},
		TaskDir:   t.TempDir(),
		Nomad:     NomadAPI{Address: srv.URL, Token: token},
	})
	must.NoError(t, err)
	t.Cleanup(m.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = m.Render(ctx)
	must.ErrorContains(t, err, "403")
	must.StrNotContains(t, err.Error(), token)
}

// fakeVars serves one Nomad variable with blocking queries, as the API does: a read at an
// index older than the variable's answers at once, one at its index waits for a change.
type fakeVars struct {
	mu      sync.Mutex
	index   uint64
	items   map[string]string
	status  int // non-zero: every read from now on answers this status
	changed chan struct{}
}

func newFakeVars(t *testing.T, items map[string]string) (*fakeVars, string) {
	f := &fakeVars{index: 10, items: items, changed: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func (f *fakeVars) set(items map[string]string, status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.index++
	f.items, f.status = items, status
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *fakeVars) serve(w http.ResponseWriter, r *http.Request) {
	want, _ := strconv.ParseUint(r.URL.Query().Get("index"), 10, 64)
	f.mu.Lock()
	if want >= f.index {
		ch := f.changed
		f.mu.Unlock()
		select {
		case <-ch:
		case <-r.Context().Done():
			return
		case <-time.After(time.Second):
		}
		f.mu.Lock()
	}
	index, items, status := f.index, f.items, f.status
	f.mu.Unlock()
	if status != 0 {
		http.Error(w, "Permission denied", status)
		return
	}
	w.Header().Set("X-Nomad-Index", strconv.FormatUint(index, 10))
	_ = json.NewEncoder(w).Encode(api.Variable{Namespace: "default", Path: "nomad/jobs/x", Items: items,
		CreateIndex: 10, ModifyIndex: index})
}

// TestManager_Changes: a re-render after the first reports what the changed templates'
// change modes ask, and a failure after the first render is reported on Failed.
func TestManager_Changes(t *testing.T) {
	cases := []struct {
		name  string
		tmpls []*api.Template
		want  Change
		// wantOnce is the file "once" after the change, when the case has it.
		wantOnce string
	}{
		{
			name: "restart wins over signal, env read again",
			tmpls: []*api.Template{
				{EmbeddedTmpl: new(`{{ with nomadVar "nomad/jobs/x" }}{{ .a }}{{ end }}`), DestPath: new("a"), ChangeMode: new("signal"), ChangeSignal: new("SIGHUP")},
				{EmbeddedTmpl: new(`A={{ with nomadVar "nomad/jobs/x" }}{{ .a }}{{ end }}`), DestPath: new("a.env"), Envvars: new(true), Splay: new(time.Millisecond)},
			},
			want: Change{Restart: true, Signals: []string{"SIGHUP"}, Env: map[string]string{"A": "2"}},
		},
		{
			name: "a once template is left as first rendered",
			tmpls: []*api.Template{
				{EmbeddedTmpl: new(`{{ with nomadVar "nomad/jobs/x" }}{{ .a }}{{ end }}`), DestPath: new("a"), ChangeMode: new("signal"), ChangeSignal: new("SIGHUP")},
				{EmbeddedTmpl: new(`{{ with nomadVar "nomad/jobs/x" }}{{ .a }}{{ end }}`), DestPath: new("once"), Once: new(true)},
			},
			want:     Change{Signals: []string{"SIGHUP"}, Env: map[string]string{}},
			wantOnce: "1",
		},
		{
			name: "signals only, once each",
			tmpls: []*api.Template{
				{EmbeddedTmpl: new(`{{ with nomadVar "nomad/jobs/x" }}{{ .a }}{{ end }}`), DestPath: new("a"), ChangeMode: new("signal"), ChangeSignal: new("SIGHUP")},
				{EmbeddedTmpl: new(`b{{ with nomadVar "nomad/jobs/x" }}{{ .a }}{{ end }}`), DestPath: new("b"), ChangeMode: new("signal"), ChangeSignal: new("SIGHUP")},
				{EmbeddedTmpl: new(`c{{ with nomadVar "nomad/jobs/x" }}{{ .a }}{{ end }}`), DestPath: new("c"), ChangeMode: new("noop")},
			},
			want: Change{Signals: []string{"SIGHUP"}, Env: map[string]string{}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, url := newFakeVars(t, map[string]string{"a": "1"})
			dir := t.TempDir()
			m, err := New(&Config{Templates: tc.tmpls, TaskDir: dir, Nomad: NomadAPI{Address: url, Token: "t"}})
			must.NoError(t, err)
			t.Cleanup(m.Stop)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err = m.Render(ctx)
			must.NoError(t, err)
			b, err := os.ReadFile(filepath.Join(dir, "a"))
			must.NoError(t, err)
			must.Eq(t, "1", string(b))

			f.set(map[string]string{"a": "2"}, 0)
			select {
			case c := <-m.Changes():
				must.Eq(t, tc.want, c)
			case <-ctx.Done():
				t.Fatal("no change reported")
			}
			b, err = os.ReadFile(filepath.Join(dir, "a"))
			must.NoError(t, err)
			must.Eq(t, "2", string(b))
			if tc.wantOnce != "" {
				b, err = os.ReadFile(filepath.Join(dir, "once"))
				must.NoError(t, err)
				must.Eq(t, tc.wantOnce, string(b))
			}

			f.set(nil, http.StatusForbidden)
			select {
			case err := <-m.Failed():
				must.ErrorContains(t, err, "403")
			case <-ctx.Done():
				t.Fatal("no failure reported")
			}
		})
	}
}

// TestRenderBlocked: a template waiting for a variable that does not exist says so, and the
// wait ends with its context.
func TestRenderBlocked(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "variable not found", http.StatusNotFound)
	}))
	t.Cleanup(srv.Close)
	old := blockedInterval
	blockedInterval = 20 * time.Millisecond
	t.Cleanup(func() { blockedInterval = old })
	blocked := make(chan string, 10)
	m, err := New(&Config{
		Templates: []*api.Template{{EmbeddedTmpl: new(`{{ with nomadVar "nomad/jobs/absent" }}{{ .a }}{{ end }}`), DestPath: new("x")}},
		TaskDir:   t.TempDir(),
		Nomad:     NomadAPI{Address: srv.URL, Token: "t"},
		Blocked:   func(msg string) { blocked <- msg },
	})
	must.NoError(t, err)
	t.Cleanup(m.Stop)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errCh := make(chan error, 1)
	go func() { _, err := m.Render(ctx); errCh <- err }()
	select {
	case msg := <-blocked:
		must.StrContains(t, msg, "Missing: nomad.var.block(nomad/jobs/absent")
	case err := <-errCh:
		t.Fatalf("render ended: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("nothing said about the missing variable")
	}
	cancel()
	must.ErrorIs(t, <-errCh, ErrStopped)
}
