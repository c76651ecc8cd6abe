package scheduler

import (
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// Delay functions of a reschedule policy, as upstream names them.
const (
	DelayConstant    = "constant"
	DelayExponential = "exponential"
	DelayFibonacci   = "fibonacci"
)

// rescheduleVerdict is what to do with a failed allocation.
type rescheduleVerdict int

const (
	// rescheduleNever: the policy allows no more attempts; the allocation stays failed and
	// keeps its name, so nothing replaces it.
	rescheduleNever rescheduleVerdict = iota
	// rescheduleNow: its delay has passed; a replacement takes its name now.
	rescheduleNow
	// rescheduleLater: its delay has not passed; it keeps its name until a follow-up
	// evaluation at the returned time.
	rescheduleLater
)

// reschedule decides for a failed allocation of the group at now; see rescheduleFor.
func (g *group) reschedule(a *structs.Allocation, now time.Time) (rescheduleVerdict, time.Time) {
	return rescheduleFor(g.job, g.tg, a, now)
}

// rescheduleFor decides for a failed allocation of group tg of job at now. The failure time
// is the allocation's ModifyTime (its client's report, timed by the leader), so the decision
// is a function of the state.
func rescheduleFor(job *structs.Job, tg *api.TaskGroup, a *structs.Allocation, now time.Time) (rescheduleVerdict, time.Time) {
	p := tg.ReschedulePolicy
	if p == nil {
		// A group stored without one (not canonicalized) gets its job type's default, as
		// the official client would have given it.
		p = api.NewDefaultReschedulePolicy(job.Type)
	}
	var events []*api.RescheduleEvent
	if a.RescheduleTracker != nil {
		events = a.RescheduleTracker.Events
	}
	unlimited := p.Unlimited != nil && *p.Unlimited
	if !unlimited {
		attempts, interval := intOf(p.Attempts), durOf(p.Interval)
		recent := 0
		for _, e := range events {
			if e != nil && (interval <= 0 || now.Sub(time.Unix(0, e.RescheduleTime)) < interval) {
				recent++
			}
		}
		if recent >= attempts {
			return rescheduleNever, time.Time{}
		}
	}
	at := time.Unix(0, a.ModifyTime).Add(rescheduleDelay(p, events))
	if !now.Before(at) {
		return rescheduleNow, time.Time{}
	}
	return rescheduleLater, at
}

// ReplacedAllocs names the allocations among allocs (one job's) that a later allocation
// already replaced after a failure: each replacement's reschedule tracker names the ones
// before it.
func ReplacedAllocs(allocs []*structs.Allocation) map[string]bool {
	replaced := map[string]bool{}
	for _, a := range allocs {
		if a.RescheduleTracker == nil {
			continue
		}
		for _, e := range a.RescheduleTracker.Events {
			if e != nil {
				replaced[e.PrevAllocID] = true
			}
		}
	}
	return replaced
}

// awaitsReplacement reports whether a is a failed allocation the reconcile hands to its
// group's reschedule policy: a service or batch job's, still wanted running, not replaced
// yet (replaced is ReplacedAllocs of the job's allocations).
func awaitsReplacement(job *structs.Job, a *structs.Allocation, replaced map[string]bool) bool {
	system := job.Type == structs.JobTypeSystem || job.Type == structs.JobTypeSysBatch
	return a.ClientStatus == structs.AllocClientStatusFailed && !system && !replaced[a.ID] &&
		a.DesiredStatus == structs.AllocDesiredStatusRun
}

// MayReschedule reports whether a scheduler run at now could still place a replacement for
// allocation a of job (nil once purged), by the rules the reconcile applies: a failed
// allocation of a job that is not stopped, whose group still exists, not replaced yet, and
// whose group's reschedule policy has attempts left (waiting for its delay counts), or which
// is of an older version (replaced at once). replaced is ReplacedAllocs of the job's
// allocations. The GC keeps such an allocation: its replacement takes over its reschedule
// tracker, and without it the scheduler would place a fresh one with no history, at once.
//
// NextAllocation is not read, as the reconcile does not read it: it can name a replacement
// that was stopped since (an original that won a reconnect keeps the link to the replacement
// it beat), and the reconcile still replaces such an allocation when it fails. A failure's
// replacement is in replaced (its tracker names the failed one) as long as it exists, and the
// GC removes the failed one no later than it.
func MayReschedule(job *structs.Job, a *structs.Allocation, replaced map[string]bool, now time.Time) bool {
	if job == nil || job.Stop || !awaitsReplacement(job, a, replaced) {
		return false
	}
	tg := job.LookupTaskGroup(a.TaskGroup)
	if tg == nil {
		return false // its group is gone: the reconcile stops it
	}
	if !isCurrent(job, a) {
		return true
	}
	verdict, _ := rescheduleFor(job, tg, a, now)
	return verdict != rescheduleNever
}

// rescheduleDelay is the wait before the next attempt after the attempts in events: the
// policy's delay, grown by its delay function with each attempt, at most max_delay.
func rescheduleDelay(p *api.ReschedulePolicy, events []*api.RescheduleEvent) time.Duration {
	base, maxDelay := durOf(p.Delay), durOf(p.MaxDelay)
	d := base
	switch strOf(p.DelayFunction) {
	case DelayExponential:
		for range events {
			d *= 2
			if maxDelay > 0 && d >= maxDelay {
				break
			}
		}
	case DelayFibonacci:
		prev, cur := time.Duration(0), base
		for range events {
			prev, cur = cur, prev+cur
			if maxDelay > 0 && cur >= maxDelay {
				break
			}
		}
		d = cur
	}
	if maxDelay > 0 && d > maxDelay {
		d = maxDelay
	}
	return d
}

// rescheduleTracker is the tracker a replacement of prev carries: prev's events and this one.
func rescheduleTracker(prev *structs.Allocation, now time.Time) *api.RescheduleTracker {
	var events []*api.RescheduleEvent
	if prev.RescheduleTracker != nil {
		events = append(events, prev.RescheduleTracker.Events...)
	}
	events = append(events, &api.RescheduleEvent{RescheduleTime: now.UnixNano(), PrevAllocID: prev.ID, PrevNodeID: prev.NodeID})
	return &api.RescheduleTracker{Events: events}
}

func durOf(p *time.Duration) time.Duration {
	if p == nil {
		return 0
	}
	return *p
}

func strOf(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// noteRescheduleAt keeps the earliest time a follow-up evaluation is needed.
func (p *Plan) noteRescheduleAt(at time.Time) {
	if p.RescheduleAt.IsZero() || at.Before(p.RescheduleAt) {
		p.RescheduleAt = at
	}
}
