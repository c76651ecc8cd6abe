package template

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	ctconf "github.com/hashicorp/consul-template/config"
	"github.com/hashicorp/consul-template/manager"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
)

// Change modes, as the job specification spells them.
const (
	ChangeModeNoop    = "noop"
	ChangeModeRestart = "restart"
	ChangeModeSignal  = "signal"
	ChangeModeScript  = "script"
)

// NomadAPI is how the Nomad functions reach the API.
type NomadAPI struct {
	// Address is the agent's HTTP API URL (http://host:port); empty makes every template
	// that calls a Nomad function fail.
	Address string
	// Token is the task's workload identity. A secret: never logged.
	Token     string
	Namespace string
	// CACert, ClientCert, ClientKey and ServerName configure TLS when Address is https.
	CACert, ClientCert, ClientKey, ServerName string
}

// Config is what a task's templates need.
type Config struct {
	Templates []*api.Template
	// TaskDir is the task's directory: sources and destinations are relative to it.
	TaskDir string
	// AllocDir is the allocation's directory, which no source, destination or file read
	// may leave (upstream's sandbox); empty is TaskDir.
	AllocDir string
	// Env is the task's environment: ${...} in source and destination, and the env function.
	Env map[string]string
	// Replace interpolates the task's environment into a path.
	Replace func(string) string
	Nomad   NomadAPI
	Logger  hclog.Logger
	// Blocked, when set, is told what a first render still waits for (variables and services
	// named by path and name only, never their contents).
	Blocked func(msg string)
}

// Change is a re-render of templates after the first, with what their change modes ask.
type Change struct {
	// Restart is set when one changed template's change_mode is "restart".
	Restart bool
	// Signals are the change_signal names of changed templates in mode "signal".
	Signals []string
	// Scripts are the change_script blocks of changed templates in mode "script".
	Scripts []*api.ChangeScript
	// Env is the environment the env templates now give (all of them, not only changed).
	Env map[string]string
}

// Manager runs a task's templates.
type Manager struct {
	cfg    *Config
	runner *manager.Runner
	// byDest maps each destination back to its job-spec template: the runner works on
	// copies of the template configs given to it, so they cannot be told apart by pointer.
	byDest map[string]*api.Template
	dests  map[*api.Template]string

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// changes carries re-renders to the task runner; failed carries a failure after the
	// first render, after which the manager renders nothing more.
	changes chan Change
	failed  chan error
}

// New checks a task's templates and builds their runner. It refuses, before anything is
// rendered, a change mode it cannot apply, a Consul or Vault function, and a source or
// destination outside the task directory.
func New(cfg *Config) (*Manager, error) {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Replace == nil {
		cfg.Replace = func(s string) string { return s }
	}
	if cfg.AllocDir == "" {
		cfg.AllocDir = cfg.TaskDir
	}
	m := &Manager{
		cfg:     cfg,
		byDest:  map[string]*api.Template{},
		dests:   map[*api.Template]string{},
		changes: make(chan Change, 1),
		failed:  make(chan error, 1),
	}
	ctc := ctconf.DefaultConfig()
	ctc.Nomad = nomadConfig(cfg.Nomad)
	// Deduplication needs Consul; the runner must never try it.
	ctc.Dedup.Enabled = new(false)
	ctc.Once = false
	once := map[string]bool{}
	ctc.RendererFunc = renderFunc(cfg.AllocDir, once)
	ctc.ReaderFunc = readFunc(cfg.AllocDir)
	// A failing read is an error the task sees, not a render of nothing.
	ctc.TemplateErrFatal = new(true)
	env := envList(cfg.Env)
	tcs := ctconf.TemplateConfigs{}
	for i, t := range cfg.Templates {
		tc, err := m.templateConfig(i, t, env)
		if err != nil {
			return nil, err
		}
		if m.byDest[*tc.Destination] != nil {
			return nil, fmt.Errorf("template %d: destination %s is another template's", i+1, *t.DestPath)
		}
		m.byDest[*tc.Destination] = t
		if t.Once != nil && *t.Once {
			once[*tc.Destination] = true
		}
		tcs = append(tcs, tc)
	}
	ctc.Templates = &tcs
	ctc.Finalize()
	r, err := manager.NewRunner(ctc, false)
	if err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	m.runner = r
	return m, nil
}

// noNomad says why the Nomad functions cannot be served, "" when they can. Without a token
// the API client would fall back to the agent's own NOMAD_TOKEN environment variable: a
// template must never read with the agent's rights.
func (m *Manager) noNomad() string {
	switch {
	case m.cfg.Nomad.Address == "":
		return "this agent does not offer its templates one"
	case m.cfg.Nomad.Token == "":
		return "the task has no workload identity to read it with"
	}
	return ""
}

func nomadConfig(n NomadAPI) *ctconf.NomadConfig {
	nc := ctconf.DefaultNomadConfig()
	nc.Enabled = new(n.Address != "")
	nc.Address = new(n.Address)
	nc.Token = new(n.Token)
	nc.Namespace = new(n.Namespace)
	if n.CACert != "" || n.ClientCert != "" {
		nc.SSL.Enabled = new(true)
		nc.SSL.Verify = new(true)
		nc.SSL.CaCert = new(n.CACert)
		nc.SSL.Cert = new(n.ClientCert)
		nc.SSL.Key = new(n.ClientKey)
		nc.SSL.ServerName = new(n.ServerName)
	}
	// A refused or failing read ends in an error the task sees after a few tries, not in
	// retries that keep the task pending for many minutes.
	nc.Retry = &ctconf.RetryConfig{Enabled: new(true), Attempts: new(3),
		Backoff: new(250 * time.Millisecond), MaxBackoff: new(2 * time.Second)}
	return nc
}

func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

func (m *Manager) templateConfig(i int, t *api.Template, env []string) (*ctconf.TemplateConfig, error) {
	name := fmt.Sprintf("template %d", i+1)
	mode := strOr(t.ChangeMode, ChangeModeRestart)
	switch mode {
	case ChangeModeNoop, ChangeModeRestart, ChangeModeSignal:
	case ChangeModeScript:
		if t.ChangeScript == nil || t.ChangeScript.Command == nil || *t.ChangeScript.Command == "" {
			return nil, fmt.Errorf("%s: change_mode \"script\" needs a change_script with a command", name)
		}
	default:
		return nil, fmt.Errorf("%s: unknown change_mode %q", name, mode)
	}
	if mode == ChangeModeSignal && strOr(t.ChangeSignal, "") == "" {
		return nil, fmt.Errorf("%s: change_mode \"signal\" needs a change_signal", name)
	}
	src := m.cfg.Replace(strOr(t.SourcePath, ""))
	data := strOr(t.EmbeddedTmpl, "")
	if (src == "") == (data == "") {
		return nil, fmt.Errorf("%s: exactly one of source and data must be set", name)
	}
	destRel := m.cfg.Replace(strOr(t.DestPath, ""))
	if destRel == "" {
		return nil, fmt.Errorf("%s: destination is required", name)
	}
	dest, err := resolve(m.cfg.AllocDir, m.cfg.TaskDir, destRel)
	if err != nil {
		return nil, fmt.Errorf("%s: destination: %w", name, err)
	}
	m.dests[t] = dest
	left, right := strOr(t.LeftDelim, "{{"), strOr(t.RightDelim, "}}")
	tc := ctconf.DefaultTemplateConfig()
	if src != "" {
		srcPath, err := resolve(m.cfg.AllocDir, m.cfg.TaskDir, src)
		if err != nil {
			return nil, fmt.Errorf("%s: source: %w", name, err)
		}
		b, err := readFunc(m.cfg.AllocDir)(srcPath)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		data = string(b)
	}
	if err := checkFuncs(data, left, right, m.noNomad()); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// The source was read above through the confined reader: the runner gets its text.
	tc.Contents = new(data)
	tc.Destination = new(dest)
	tc.LeftDelim, tc.RightDelim = new(left), new(right)
	tc.ErrMissingKey = new(t.ErrMissingKey != nil && *t.ErrMissingKey)
	tc.SandboxPath = new(m.cfg.AllocDir)
	tc.FunctionDenylist = append(append(append([]string{}, consulFuncs...), vaultFuncs...), unsafeFuncs...)
	perms, err := strconv.ParseUint(strOr(t.Perms, "0644"), 8, 32)
	if err != nil || perms > 0o7777 {
		return nil, fmt.Errorf("%s: perms %q is not an octal file mode", name, strOr(t.Perms, ""))
	}
	tc.Perms = new(os.FileMode(perms))
	if t.Uid != nil && *t.Uid >= 0 {
		tc.User = new(strconv.Itoa(*t.Uid))
	}
	if t.Gid != nil && *t.Gid >= 0 {
		tc.Group = new(strconv.Itoa(*t.Gid))
	}
	if w := t.Wait; w != nil && (w.Min != nil || w.Max != nil) {
		tc.Wait = &ctconf.WaitConfig{Enabled: new(true), Min: w.Min, Max: w.Max}
	}
	tc.ExtFuncMap = envFuncs(env)
	return tc, nil
}

// envFuncs answer env, mustEnv and envOrDefault from the task's environment only:
// consul-template would fall back to the agent's, which is not the task's to read.
func envFuncs(env []string) map[string]any {
	lookup := func(k string) (string, bool) {
		for _, kv := range env {
			if key, v, _ := cutEq(kv); key == k {
				return v, true
			}
		}
		return "", false
	}
	return map[string]any{
		"env": func(k string) string { v, _ := lookup(k); return v },
		"mustEnv": func(k string) (string, error) {
			if v, ok := lookup(k); ok && v != "" {
				return v, nil
			}
			return "", fmt.Errorf("environment variable %q is not set", k)
		},
		"envOrDefault": func(k, def string) string {
			if v, ok := lookup(k); ok && v != "" {
				return v
			}
			return def
		},
	}
}

func cutEq(kv string) (string, string, bool) {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}

func strOr(p *string, def string) string {
	if p == nil || *p == "" {
		return def
	}
	return *p
}

// ErrStopped is returned by Render when the manager was stopped before every template
// rendered.
var ErrStopped = errors.New("templates: stopped before the first render")

// Render starts the runner and waits until every template has rendered once, ctx ends or
// rendering fails. It returns the environment the env templates give. After it returns nil,
// the manager keeps the templates rendered until Stop and reports later renders on
// Changes and a later failure on Failed.
func (m *Manager) Render(ctx context.Context) (map[string]string, error) {
	m.ctx, m.cancel = context.WithCancel(context.Background())
	started := make(chan struct{})
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.runner.Start()
	}()
	first := make(chan error, 1)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.loop(first, started)
	}()
	// While it waits, what the templates still miss is reported (a variable that does not
	// exist yet blocks a template, as upstream): the task would otherwise sit pending with
	// nothing said.
	tick := time.NewTicker(blockedInterval)
	defer tick.Stop()
	lastMissing := ""
	for {
		select {
		case err := <-first:
			if err != nil {
				return nil, err
			}
			close(started)
			return m.Env()
		case <-ctx.Done():
			return nil, ErrStopped
		case <-tick.C:
			if missing := m.missing(); missing != "" && missing != lastMissing && m.cfg.Blocked != nil {
				lastMissing = missing
				m.cfg.Blocked("Missing: " + missing)
			}
		}
	}
}

// blockedInterval is how often a first render that waits for data says what it waits for.
var blockedInterval = 5 * time.Second

// missing names the data the templates wait for, sorted, "" when none.
func (m *Manager) missing() string {
	set := map[string]bool{}
	for _, ev := range m.runner.RenderEvents() {
		if ev == nil || ev.MissingDeps == nil {
			continue
		}
		for _, d := range ev.MissingDeps.List() {
			set[d.String()] = true
		}
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// loop reads the runner's channels until Stop. The runner blocks sending an error until it
// is read, so every error is read here, also while stopping.
func (m *Manager) loop(first chan<- error, started <-chan struct{}) {
	rendered := map[*api.Template]time.Time{}
	firstDone := false
	for {
		select {
		case err := <-m.runner.ErrCh:
			err = fmt.Errorf("template failed: %w", err)
			if !firstDone {
				first <- err
				firstDone = true
			} else {
				select {
				case m.failed <- err:
				default:
				}
			}
			// The runner ends after an error: nothing more renders.
			<-m.ctx.Done()
			return
		case <-m.runner.TemplateRenderedCh():
			changed, all := m.renderedSince(rendered)
			if !firstDone {
				if all {
					firstDone = true
					first <- nil
				}
				continue
			}
			if len(changed) > 0 {
				m.change(changed, started)
			}
		case <-m.ctx.Done():
			return
		}
	}
}

// renderedSince records the templates written since the last call; all reports whether
// every template has been rendered (or found in place) at least once.
func (m *Manager) renderedSince(last map[*api.Template]time.Time) (changed []*api.Template, all bool) {
	events := m.runner.RenderEvents()
	// consul-template names a template by its text: templates with the same text share one
	// event, which names only one of them; the mapping names them all.
	mapping := m.runner.TemplateConfigMapping()
	seen := map[*api.Template]bool{}
	for id, ev := range events {
		if ev == nil || ev.LastWouldRender.IsZero() {
			continue
		}
		for _, tc := range mapping[id] {
			t := m.byDest[ctconf.StringVal(tc.Destination)]
			if t == nil {
				continue
			}
			seen[t] = true
			if at := ev.LastDidRender; !at.IsZero() && at.After(last[t]) {
				if _, before := last[t]; before {
					changed = append(changed, t)
				}
				last[t] = at
			} else if _, ok := last[t]; !ok {
				last[t] = at
			}
		}
	}
	return changed, len(seen) == len(m.cfg.Templates)
}

// change waits out the longest splay of the changed templates (so many tasks reading one
// variable do not all restart at once) and reports what their change modes ask.
func (m *Manager) change(changed []*api.Template, started <-chan struct{}) {
	var splay time.Duration
	var c Change
	sigs := map[string]bool{}
	for _, t := range changed {
		if t.Once != nil && *t.Once {
			// Left as first rendered; it may share its text, and so its event, with a
			// template that did change.
			continue
		}
		if t.Splay != nil && *t.Splay > splay {
			splay = *t.Splay
		}
		switch strOr(t.ChangeMode, ChangeModeRestart) {
		case ChangeModeRestart:
			c.Restart = true
		case ChangeModeSignal:
			if s := *t.ChangeSignal; !sigs[s] {
				sigs[s] = true
				c.Signals = append(c.Signals, s)
			}
		case ChangeModeScript:
			c.Scripts = append(c.Scripts, t.ChangeScript)
		}
	}
	if !c.Restart && len(c.Signals) == 0 && len(c.Scripts) == 0 {
		return
	}
	if splay > 0 {
		timer := time.NewTimer(rand.N(splay))
		select {
		case <-timer.C:
		case <-m.ctx.Done():
			timer.Stop()
			return
		}
	}
	env, err := m.Env()
	if err != nil {
		select {
		case m.failed <- err:
		default:
		}
		return
	}
	c.Env = env
	select {
	case <-started:
	case <-m.ctx.Done():
		return
	}
	// One pending change is enough: a newer one supersedes it.
	select {
	case <-m.changes:
	default:
	}
	m.changes <- c
}

// Changes delivers re-renders after the first that ask for a restart or a signal.
func (m *Manager) Changes() <-chan Change { return m.changes }

// Failed delivers a failure after the first render; the templates no longer follow their
// data after it.
func (m *Manager) Failed() <-chan error { return m.failed }

// Env reads the env templates' rendered files.
func (m *Manager) Env() (map[string]string, error) {
	out := map[string]string{}
	for i, t := range m.cfg.Templates {
		if t.Envvars == nil || !*t.Envvars {
			continue
		}
		b, err := readFunc(m.cfg.AllocDir)(m.dests[t])
		if err != nil {
			return nil, fmt.Errorf("template %d: %w", i+1, err)
		}
		kv, err := parseEnvFile(b)
		if err != nil {
			return nil, fmt.Errorf("template %d: %w", i+1, err)
		}
		maps.Copy(out, kv)
	}
	return out, nil
}

// Stop stops the runner and waits for every goroutine of the manager.
func (m *Manager) Stop() {
	if m.cancel == nil {
		return
	}
	m.cancel()
	m.runner.Stop()
	// The runner may be blocked sending an error nobody reads any more.
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	for {
		select {
		case <-m.runner.ErrCh:
		case <-done:
			return
		}
	}
}
