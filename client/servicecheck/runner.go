package servicecheck

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
)

// Runner runs the checks of one allocation. Its owner (the allocation runner) says which
// checks should run now (Set, as tasks start and stop) and stops them all with Stop.
type Runner struct {
	logger hclog.Logger
	exec   Exec
	// restart restarts a task for check_restart; onChange is told of every new result. Both
	// are called without the Runner's lock held and must not block for long.
	restart  func(task, reason string)
	onChange func()

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	checks  map[string]*check
	stopped bool
}

// check is one running check and its latest result.
type check struct {
	spec   Spec
	stop   chan struct{}
	status api.AllocCheckStatus
	// okSince is when the check last became acceptable for deployment health; zero while
	// it is not.
	okSince time.Time
}

// NewRunner makes the checks runner of one allocation; restart and onChange may be nil.
func NewRunner(logger hclog.Logger, exec Exec, restart func(task, reason string), onChange func()) *Runner {
	ctx, cancel := context.WithCancel(context.Background())
	return &Runner{logger: logger, exec: exec, restart: restart, onChange: onChange,
		ctx: ctx, cancel: cancel, checks: map[string]*check{}}
}

// Set makes specs the checks that run: new ones start, ones no longer wanted stop (and their
// results go), a changed one starts again. It does not wait for stopped checks to end.
func (r *Runner) Set(specs []Spec) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	want := make(map[string]Spec, len(specs))
	for _, s := range specs {
		want[s.ID] = s
	}
	for id, c := range r.checks {
		if s, ok := want[id]; !ok || !reflect.DeepEqual(s, c.spec) {
			close(c.stop)
			delete(r.checks, id)
		}
	}
	for id, s := range want {
		if _, ok := r.checks[id]; ok {
			continue
		}
		c := &check{spec: s, stop: make(chan struct{}), status: api.AllocCheckStatus{
			ID: s.ID, Check: s.Name, Group: s.Group, Mode: s.Mode(), Service: s.Service, Task: s.Task,
			Status: s.initialStatus(), Timestamp: time.Now().Unix(),
		}}
		if acceptable(&c.spec, c.status.Status) {
			c.okSince = time.Now()
		}
		r.checks[id] = c
		r.wg.Add(1)
		go r.loop(c)
	}
}

// Stop ends every check and waits for them; the Runner runs nothing more.
func (r *Runner) Stop() {
	r.mu.Lock()
	r.stopped = true
	for id, c := range r.checks {
		close(c.stop)
		delete(r.checks, id)
	}
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
}

// Statuses are the latest results of the running checks, by check ID.
func (r *Runner) Statuses() api.AllocCheckStatuses {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(api.AllocCheckStatuses, len(r.checks))
	for id, c := range r.checks {
		out[id] = c.status
	}
	return out
}

// Healthy reports whether every healthiness check is acceptable now (success, or warning
// with on_update ignore_warnings), and since when they all have been. With no such check it
// is healthy since the zero time.
func (r *Runner) Healthy() (bool, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var since time.Time
	for _, c := range r.checks {
		if c.spec.Mode() != ModeHealthiness {
			continue
		}
		if c.okSince.IsZero() {
			return false, time.Time{}
		}
		if c.okSince.After(since) {
			since = c.okSince
		}
	}
	return true, since
}

// Names lists the running checks' names, sorted (for messages).
func (r *Runner) Names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.checks))
	for _, c := range r.checks {
		out = append(out, c.spec.Name)
	}
	sort.Strings(out)
	return out
}

func acceptable(s *Spec, status string) bool {
	return status == StatusSuccess || (status == StatusWarning && s.OnUpdate == OnUpdateIgnoreWarnings)
}

// loop runs one check every interval until it is stopped, and applies its check_restart.
func (r *Runner) loop(c *check) {
	defer r.wg.Done()
	spec := c.spec
	interval := spec.Interval
	if interval <= 0 {
		interval = 10 * time.Second
	}
	started := time.Now()
	unhealthy := 0
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	go func() {
		select {
		case <-c.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	var hc *http.Client
	if spec.Type == TypeHTTP {
		hc = spec.httpClient()
		defer hc.CloseIdleConnections()
	}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		res := spec.run(ctx, r.exec, hc)
		if ctx.Err() != nil {
			return // stopped while running: the result says nothing of the service
		}
		r.record(c, res)
		if rs := spec.Restart; rs != nil && rs.Limit > 0 && time.Since(started) >= rs.Grace {
			bad := res.status == StatusFailure || (res.status == StatusWarning && !rs.IgnoreWarnings)
			if !bad {
				unhealthy = 0
			} else if unhealthy++; unhealthy >= rs.Limit {
				unhealthy = 0
				// Grace again: the task restarting is no reason to restart it twice.
				started = time.Now()
				if r.restart != nil && spec.ExecTask != "" {
					r.logger.Info("restarting a task for its unhealthy check", "task", spec.ExecTask, "check", spec.Name)
					r.restart(spec.ExecTask, fmt.Sprintf("healthcheck: check %q unhealthy", spec.Name))
				}
			}
		}
		t.Reset(interval)
	}
}

func (r *Runner) record(c *check, res result) {
	now := time.Now()
	r.mu.Lock()
	if r.checks[c.spec.ID] != c {
		r.mu.Unlock()
		return // replaced or stopped meanwhile
	}
	changed := c.status.Status != res.status
	c.status.Status, c.status.StatusCode, c.status.Output, c.status.Timestamp = res.status, res.code, res.output, now.Unix()
	switch ok := acceptable(&c.spec, res.status); {
	case !ok:
		c.okSince = time.Time{}
	case c.okSince.IsZero():
		c.okSince = now
	}
	r.mu.Unlock()
	if changed {
		r.logger.Debug("check status changed", "check", c.spec.Name, "service", c.spec.Service, "status", res.status)
	}
	if r.onChange != nil {
		r.onChange()
	}
}
