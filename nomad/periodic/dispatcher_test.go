package periodic

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// fakeClock is a Clock moved only by Advance.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []fakeWaiter
}

type fakeWaiter struct {
	at time.Time
	ch chan time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, fakeWaiter{at: c.now.Add(d), ch: ch})
	return ch
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(t) {
			w.ch <- t
		} else {
			kept = append(kept, w)
		}
	}
	c.waiters = kept
}

// harness is a state store written as the FSM would, and a Launch that applies the same
// request the server's launch does.
type harness struct {
	t       *testing.T
	store   *state.StateStore
	clock   *fakeClock
	mu      sync.Mutex
	index   uint64
	applied []string
}

func newHarness(t *testing.T, now time.Time) *harness {
	s, err := state.NewStateStore(state.Config{})
	must.NoError(t, err)
	return &harness{t: t, store: s, clock: &fakeClock{now: now}, index: 100}
}

func (h *harness) nextIndex() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.index++
	return h.index
}

func (h *harness) launch(parent *structs.Job, at time.Time) error {
	child := parent.PeriodicChild(at)
	err := h.store.ApplyJobRegister(h.nextIndex(), &structs.JobRegisterRequest{
		Job:            child,
		Eval:           &structs.Evaluation{ID: "eval-" + child.ID, Namespace: child.Namespace, JobID: child.ID, Status: structs.EvalStatusPending},
		PeriodicLaunch: &structs.PeriodicLaunch{Namespace: parent.Namespace, ID: parent.ID, Launch: at},
	})
	if err == nil {
		h.mu.Lock()
		h.applied = append(h.applied, child.ID)
		h.mu.Unlock()
	}
	return err
}

func (h *harness) dispatcher() *Dispatcher {
	return New(Config{State: func() *state.StateStore { return h.store }, Launch: h.launch, Clock: h.clock})
}

func (h *harness) launched() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.applied...)
}

// register stores a periodic batch job submitted at the clock's now.
func (h *harness) register(id string, mod func(*api.PeriodicConfig, *structs.Job)) *structs.Job {
	job := &structs.Job{
		Namespace: structs.DefaultNamespace, ID: id, Name: id, Type: structs.JobTypeBatch,
		Priority: 50, Datacenters: []string{"dc1"}, NodePool: structs.DefaultNodePool,
		TaskGroups: []*api.TaskGroup{{Name: new("g"), Count: new(1)}},
		Periodic:   &api.PeriodicConfig{Spec: new("*/15 * * * *")},
		SubmitTime: h.clock.Now().UnixNano(),
	}
	if mod != nil {
		mod(job.Periodic, job)
	}
	must.NoError(h.t, h.store.ApplyJobRegister(h.nextIndex(), &structs.JobRegisterRequest{Job: job}))
	return job
}

func (h *harness) step(d *Dispatcher) time.Time {
	h.t.Helper()
	wake, err := d.Step(h.store.PointInTime())
	must.NoError(h.t, err)
	return wake
}

func childID(parent string, at time.Time) string {
	return fmt.Sprintf("%s/periodic-%d", parent, at.Unix())
}

var t0 = time.Date(2026, 1, 15, 10, 7, 0, 0, time.UTC) // a Thursday, winter (no DST anywhere north)

func TestDispatcher_NextLaunch(t *testing.T) {
	cases := []struct {
		name string
		cfg  api.PeriodicConfig
		want time.Time
	}{
		{name: "cron", cfg: api.PeriodicConfig{Spec: new("*/15 * * * *")}, want: time.Date(2026, 1, 15, 10, 15, 0, 0, time.UTC)},
		{name: "crons take the earliest", cfg: api.PeriodicConfig{Specs: []string{"0 12 * * *", "30 10 * * *"}}, want: time.Date(2026, 1, 15, 10, 30, 0, 0, time.UTC)},
		{name: "time zone", cfg: api.PeriodicConfig{Spec: new("0 9 * * *"), TimeZone: new("America/New_York")}, want: time.Date(2026, 1, 15, 14, 0, 0, 0, time.UTC)},
		{name: "time zone ahead of UTC", cfg: api.PeriodicConfig{Spec: new("0 12 * * *"), TimeZone: new("Asia/Tokyo")}, want: time.Date(2026, 1, 16, 3, 0, 0, 0, time.UTC)},
		{name: "across a DST change", cfg: api.PeriodicConfig{Spec: new("0 9 15 3 *"), TimeZone: new("Europe/Berlin")}, want: time.Date(2026, 3, 15, 8, 0, 0, 0, time.UTC)},
		{name: "across a DST change (summer)", cfg: api.PeriodicConfig{Spec: new("0 9 15 4 *"), TimeZone: new("Europe/Berlin")}, want: time.Date(2026, 4, 15, 7, 0, 0, 0, time.UTC)},
		{name: "with seconds", cfg: api.PeriodicConfig{Spec: new("30 */5 * * * * *")}, want: time.Date(2026, 1, 15, 10, 10, 30, 0, time.UTC)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, t0)
			cfg := tc.cfg
			h.register("job", func(p *api.PeriodicConfig, _ *structs.Job) { *p = cfg })
			must.Eq(t, tc.want, h.step(h.dispatcher()))
			must.SliceEmpty(t, h.launched())
		})
	}
}

func TestDispatcher_LaunchesWhenDue(t *testing.T) {
	h := newHarness(t, t0)
	h.register("job", nil)
	d := h.dispatcher()
	due := time.Date(2026, 1, 15, 10, 15, 0, 0, time.UTC)

	h.clock.Set(due.Add(-time.Second))
	must.Eq(t, due, h.step(d))
	must.SliceEmpty(t, h.launched())

	h.clock.Set(due)
	must.Eq(t, due.Add(15*time.Minute), h.step(d))
	must.Eq(t, []string{childID("job", due)}, h.launched())

	// Stepping again (a wake from the write it just made) launches nothing more.
	must.Eq(t, due.Add(15*time.Minute), h.step(d))
	must.Len(t, 1, h.launched())

	child, err := h.store.JobByID(nil, structs.DefaultNamespace, childID("job", due))
	must.NoError(t, err)
	must.Eq(t, "job", child.ParentID)
	must.Nil(t, child.Periodic)
	must.Eq(t, structs.JobStatusPending, child.Status)
	launch, err := h.store.PeriodicLaunchByID(nil, structs.DefaultNamespace, "job")
	must.NoError(t, err)
	must.Eq(t, due, launch.Launch)
}

func TestDispatcher_NotTracked(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*api.PeriodicConfig, *structs.Job)
	}{
		{name: "disabled", mod: func(p *api.PeriodicConfig, _ *structs.Job) { p.Enabled = new(false) }},
		{name: "stopped", mod: func(_ *api.PeriodicConfig, j *structs.Job) { j.Stop = true }},
		{name: "parameterized", mod: func(_ *api.PeriodicConfig, j *structs.Job) {
			j.ParameterizedJob = &api.ParameterizedJobConfig{Payload: "optional"}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, t0)
			h.register("job", tc.mod)
			d := h.dispatcher()
			h.clock.Set(t0.Add(24 * time.Hour))
			must.Eq(t, time.Time{}, h.step(d))
			must.SliceEmpty(t, h.launched())
		})
	}
}

func TestDispatcher_ProhibitOverlap(t *testing.T) {
	first := time.Date(2026, 1, 15, 10, 15, 0, 0, time.UTC)
	second := first.Add(15 * time.Minute)
	third := second.Add(15 * time.Minute)
	cases := []struct {
		name      string
		prohibit  bool
		childDead bool
		want      []string
	}{
		{name: "overlap allowed", prohibit: false, want: []string{childID("job", first), childID("job", second)}},
		{name: "previous child still running", prohibit: true, want: []string{childID("job", first)}},
		{name: "previous child dead", prohibit: true, childDead: true, want: []string{childID("job", first), childID("job", second)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, t0)
			h.register("job", func(p *api.PeriodicConfig, _ *structs.Job) { p.ProhibitOverlap = new(tc.prohibit) })
			d := h.dispatcher()
			h.clock.Set(first)
			h.step(d)
			if tc.childDead {
				// The child's evaluation completes without placing anything: the child is dead.
				eval := &structs.Evaluation{ID: "eval-" + childID("job", first), Namespace: structs.DefaultNamespace,
					JobID: childID("job", first), Status: structs.EvalStatusComplete}
				txn := h.store.WriteTxn(structs.EvalUpdateRequestType, h.nextIndex(), nil)
				must.NoError(t, h.store.UpsertEvalsTxn(txn, []*structs.Evaluation{eval}))
				txn.Commit()
			}
			h.clock.Set(second)
			// A skipped launch is not retried: the next wake is the launch after it.
			must.Eq(t, third, h.step(d))
			must.Eq(t, tc.want, h.launched())
		})
	}
}

// A new leader (a new dispatcher over the same replicated state) neither launches again what
// the old one launched nor forgets a launch that fell due in between.
func TestDispatcher_LeaderChange(t *testing.T) {
	h := newHarness(t, t0)
	h.register("job", nil)
	first := time.Date(2026, 1, 15, 10, 15, 0, 0, time.UTC)
	h.clock.Set(first)
	h.step(h.dispatcher())
	must.Eq(t, []string{childID("job", first)}, h.launched())

	// The old leader's term ends; a new one starts at the same instant: nothing to launch.
	h.clock.Set(first.Add(30 * time.Second))
	must.Eq(t, first.Add(15*time.Minute), h.step(h.dispatcher()))
	must.Len(t, 1, h.launched())

	// No leader for 40 minutes (two launches due): the next leader makes the latest one, once.
	h.clock.Set(first.Add(40 * time.Minute))
	d := h.dispatcher()
	must.Eq(t, first.Add(45*time.Minute), h.step(d))
	must.Eq(t, []string{childID("job", first), childID("job", first.Add(30*time.Minute))}, h.launched())
	h.step(d)
	h.step(h.dispatcher())
	must.Len(t, 2, h.launched())

	// An old leader that still decides the launch already made gets it refused by the state.
	err := h.launch(currentJob(t, h.store, "job"), first.Add(30*time.Minute))
	must.ErrorIs(t, err, structs.ErrPeriodicLaunched)
}

// A job registered again with a change (or started after a stop) does not make up for
// launches before it.
func TestDispatcher_ReRegisterDoesNotCatchUp(t *testing.T) {
	h := newHarness(t, t0)
	h.register("job", nil)
	h.clock.Set(t0.Add(3 * time.Hour))
	h.register("job", func(p *api.PeriodicConfig, _ *structs.Job) { p.Spec = new("0,15,30,45 * * * *") })
	must.Eq(t, time.Date(2026, 1, 15, 13, 15, 0, 0, time.UTC), h.step(h.dispatcher()))
	must.SliceEmpty(t, h.launched())
}

func currentJob(t *testing.T, s *state.StateStore, id string) *structs.Job {
	t.Helper()
	job, err := s.JobByID(nil, structs.DefaultNamespace, id)
	must.NoError(t, err)
	must.NotNil(t, job)
	return job
}

// startRun runs a dispatcher until the test ends.
func (h *harness) startRun(d *Dispatcher) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		d.Run(ctx)
	}()
	h.t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
}

// waitForWaiter waits until Run is waiting on the clock for at.
func (h *harness) waitForWaiter(at time.Time) {
	h.t.Helper()
	must.Wait(h.t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		h.clock.mu.Lock()
		defer h.clock.mu.Unlock()
		for _, w := range h.clock.waiters {
			if w.at.Equal(at) {
				return true
			}
		}
		return false
	}), wait.Timeout(10*time.Second), wait.Gap(5*time.Millisecond)))
}

// Run wakes at the launch time on the clock and when jobs change, and stops with its context.
func TestDispatcher_Run(t *testing.T) {
	h := newHarness(t, t0)
	h.startRun(h.dispatcher())

	// Registered while Run waits: picked up through the state watch.
	h.register("job", nil)
	due := time.Date(2026, 1, 15, 10, 15, 0, 0, time.UTC)
	// Wait until Run armed its timer for the launch, then move the clock past it.
	h.waitForWaiter(due)
	h.clock.Set(due)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return len(h.launched()) == 1
	}), wait.Timeout(10*time.Second), wait.Gap(5*time.Millisecond)))
	must.Eq(t, []string{childID("job", due)}, h.launched())
}

// With Settle, a change is looked at once the settle time has passed on the clock.
func TestDispatcher_RunSettles(t *testing.T) {
	h := newHarness(t, t0)
	h.register("hourly", func(p *api.PeriodicConfig, _ *structs.Job) { p.Spec = new("0 * * * *") })
	d := h.dispatcher()
	d.cfg.Settle = time.Second
	h.startRun(d)
	// Run has looked once: it waits for the hourly launch.
	h.waitForWaiter(time.Date(2026, 1, 15, 11, 0, 0, 0, time.UTC))

	// A registration wakes it; it settles for a second on the clock before looking.
	h.register("job", nil)
	h.waitForWaiter(t0.Add(time.Second))
	must.SliceEmpty(t, h.launched())
	h.clock.Set(t0.Add(time.Second))
	due := time.Date(2026, 1, 15, 10, 15, 0, 0, time.UTC)
	h.waitForWaiter(due)
	h.clock.Set(due)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return len(h.launched()) == 1
	}), wait.Timeout(10*time.Second), wait.Gap(5*time.Millisecond)))
	must.Eq(t, []string{childID("job", due)}, h.launched())
}
