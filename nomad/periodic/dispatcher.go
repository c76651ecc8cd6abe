package periodic

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// Clock is the dispatcher's time source. Tests give a fake one they advance by hand.
type Clock interface {
	Now() time.Time
	// After fires once, when the clock has passed d from now.
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Config is what the dispatcher needs from the server.
type Config struct {
	// State returns the current state store (a restore replaces it).
	State func() *state.StateStore
	// Launch registers parent's child for the launch at, with its evaluation and the launch
	// record, in one Raft entry. An error wrapping structs.ErrPeriodicLaunched means that
	// launch (or a later one) is already recorded.
	Launch func(parent *structs.Job, at time.Time) error
	Clock  Clock
	Logger hclog.Logger
	// RetryInterval is the wait after a failed launch before it is tried again.
	RetryInterval time.Duration
	// Settle, when positive, is how long the dispatcher lets writes accumulate after a change
	// of the jobs table before it looks again: every job write (a status change included)
	// wakes it, and on a busy leader one look per Settle is plenty to pick up a registered or
	// stopped periodic job. Launch times are kept exactly whatever it is.
	Settle time.Duration
}

// Dispatcher launches periodic jobs. Use New; Run owns its one goroutine.
type Dispatcher struct {
	cfg Config
	// decided holds, per job, the latest launch time this term has dealt with (launched,
	// found launched, or skipped for prohibit_overlap), so a skipped launch is not retried.
	// Only Run's goroutine (or a test's Step) touches it.
	decided map[structs.NamespacedID]time.Time
}

// New builds a dispatcher; nil Clock and Logger mean the real clock and no logging.
func New(cfg Config) *Dispatcher {
	if cfg.Clock == nil {
		cfg.Clock = realClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.RetryInterval <= 0 {
		cfg.RetryInterval = time.Second
	}
	return &Dispatcher{cfg: cfg, decided: map[structs.NamespacedID]time.Time{}}
}

// Run launches until ctx ends. It wakes when jobs or launches change, and at the next launch.
func (d *Dispatcher) Run(ctx context.Context) {
	for ctx.Err() == nil {
		store := d.cfg.State()
		ws := memdb.NewWatchSet()
		ws.Add(store.AbandonCh())
		store.WatchIndex(ws, "jobs")
		store.WatchIndex(ws, "periodic_launch")
		wake, err := d.Step(store.PointInTime())
		var timer <-chan time.Time
		switch {
		case err != nil:
			d.cfg.Logger.Error("periodic launch failed; retrying", "error", err)
			timer = d.cfg.Clock.After(d.cfg.RetryInterval)
		case !wake.IsZero():
			timer = d.cfg.Clock.After(wake.Sub(d.cfg.Clock.Now()))
		}
		// WatchCh's goroutines end with wctx, cancelled before the next round.
		wctx, cancel := context.WithCancel(ctx)
		changed := false
		select {
		case <-ctx.Done():
		case <-ws.WatchCh(wctx):
			changed = true
		case <-timer:
		}
		cancel()
		if changed && d.cfg.Settle > 0 {
			settle := d.cfg.Clock.After(d.cfg.Settle)
			select {
			case <-ctx.Done():
			case <-settle:
			case <-timer: // a launch falls due first: make it now
			}
		}
	}
}

// Step launches, from one point-in-time view, every periodic job whose launch is due, and
// returns the earliest next launch of the jobs it tracks (zero: none). A failed launch is
// returned after the others were tried; it is tried again on the next step.
func (d *Dispatcher) Step(snap *state.StateStore) (time.Time, error) {
	jobs, err := snap.Jobs(nil, structs.AllNamespacesSentinel, "")
	if err != nil {
		return time.Time{}, err
	}
	now := d.cfg.Clock.Now()
	tracked := map[structs.NamespacedID]bool{}
	var wake time.Time
	var firstErr error
	for _, job := range jobs {
		if !job.IsPeriodicActive() {
			continue
		}
		id := job.NamespacedID()
		tracked[id] = true
		next, err := d.nextLaunch(snap, job)
		if err != nil {
			// Validation parses every spec at register: only a job stored by an older
			// version can get here. It is left alone, not retried in a loop.
			d.cfg.Logger.Warn("periodic job has no computable launch", "job", id.String(), "error", err)
			continue
		}
		if next.IsZero() {
			continue
		}
		if !next.After(now) {
			at := latestDue(job, next, now)
			if err := d.launch(snap, job, at); err != nil {
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			if next, err = job.NextPeriodicLaunch(at); err != nil || next.IsZero() {
				continue
			}
		}
		if wake.IsZero() || next.Before(wake) {
			wake = next
		}
	}
	for id := range d.decided {
		if !tracked[id] {
			delete(d.decided, id)
		}
	}
	return wake, firstErr
}

// NextLaunch is the job's next launch as the dispatcher computes it from snap: the first
// time of its schedule after the latest of its recorded launch and its last submission.
func NextLaunch(snap *state.StateStore, job *structs.Job) (time.Time, error) {
	base, err := launchBase(snap, job)
	if err != nil {
		return time.Time{}, err
	}
	return job.NextPeriodicLaunch(base)
}

func (d *Dispatcher) nextLaunch(snap *state.StateStore, job *structs.Job) (time.Time, error) {
	base, err := launchBase(snap, job)
	if err != nil {
		return time.Time{}, err
	}
	if t, ok := d.decided[job.NamespacedID()]; ok && t.After(base) {
		base = t
	}
	return job.NextPeriodicLaunch(base)
}

// launchBase is the time after which the job's next launch falls: its last recorded launch,
// or its last submission if that is later (a job registered again, or started again after a
// stop, does not make up for launches missed before).
func launchBase(snap *state.StateStore, job *structs.Job) (time.Time, error) {
	base := time.Unix(0, job.SubmitTime).UTC()
	last, err := snap.PeriodicLaunchByID(nil, job.Namespace, job.ID)
	if err != nil {
		return time.Time{}, err
	}
	if last != nil && last.Launch.After(base) {
		base = last.Launch
	}
	return base, nil
}

// maxCatchUp bounds the walk over missed launches; past it, the launch is made at now.
const maxCatchUp = 10_000

// latestDue is the last launch of the schedule at or before now, starting from first (due).
func latestDue(job *structs.Job, first, now time.Time) time.Time {
	t := first
	for range maxCatchUp {
		n, err := job.NextPeriodicLaunch(t)
		if err != nil || n.IsZero() || n.After(now) {
			return t
		}
		t = n
	}
	return now.Truncate(time.Second)
}

// launch makes one launch, or skips it when prohibit_overlap holds and a child still runs.
func (d *Dispatcher) launch(snap *state.StateStore, job *structs.Job, at time.Time) error {
	id := job.NamespacedID()
	if job.Periodic.ProhibitOverlap != nil && *job.Periodic.ProhibitOverlap {
		running, err := runningChild(snap, job)
		if err != nil {
			return err
		}
		if running != "" {
			d.cfg.Logger.Debug("skipping periodic launch: a previous child still runs",
				"job", id.String(), "launch", at, "child", running)
			d.decided[id] = at
			return nil
		}
	}
	err := d.cfg.Launch(job, at)
	switch {
	case err == nil:
		d.cfg.Logger.Info("launched periodic job", "job", id.String(), "launch", at)
	case errors.Is(err, structs.ErrPeriodicLaunched):
		// Another leader (or a force) got there first; the state already says so.
	default:
		return err
	}
	d.decided[id] = at
	return nil
}

// runningChild is the ID of a child of job that is not dead yet; "" when there is none.
func runningChild(snap *state.StateStore, job *structs.Job) (string, error) {
	children, err := snap.Jobs(nil, job.Namespace, job.ID+"/")
	if err != nil {
		return "", err
	}
	for _, c := range children {
		if c.ParentID == job.ID && c.Status != structs.JobStatusDead {
			return c.ID, nil
		}
	}
	return "", nil
}
