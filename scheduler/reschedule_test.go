package scheduler

import (
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// afterRescheduleDelay is a time past any default reschedule delay of an allocation that
// failed at the epoch (tests leave ModifyTime 0).
var afterRescheduleDelay = time.Unix(0, 0).Add(24 * time.Hour)

func TestRescheduleDelay(t *testing.T) {
	events := func(n int) []*api.RescheduleEvent { return make([]*api.RescheduleEvent, n) }
	policy := func(fn string, delay, max time.Duration) *api.ReschedulePolicy {
		return &api.ReschedulePolicy{DelayFunction: &fn, Delay: &delay, MaxDelay: &max}
	}
	cases := []struct {
		name   string
		policy *api.ReschedulePolicy
		prior  int
		want   time.Duration
	}{
		{name: "constant", policy: policy(DelayConstant, 5*time.Second, 0), prior: 3, want: 5 * time.Second},
		{name: "exponential first", policy: policy(DelayExponential, 30*time.Second, time.Hour), prior: 0, want: 30 * time.Second},
		{name: "exponential third", policy: policy(DelayExponential, 30*time.Second, time.Hour), prior: 2, want: 2 * time.Minute},
		{name: "exponential capped", policy: policy(DelayExponential, 30*time.Second, time.Hour), prior: 40, want: time.Hour},
		{name: "fibonacci", policy: policy(DelayFibonacci, 10*time.Second, time.Hour), prior: 4, want: 50 * time.Second},
		{name: "fibonacci capped", policy: policy(DelayFibonacci, 10*time.Second, time.Minute), prior: 50, want: time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, rescheduleDelay(tc.policy, events(tc.prior)))
		})
	}
}

// TestCompute_BatchReschedule: the batch default allows one attempt in 24h; a replacement
// that fails too is left failed, and its name is not taken again.
func TestCompute_BatchReschedule(t *testing.T) {
	job := testJob(structs.JobTypeBatch, 1, "raw_exec")
	nodes := []*structs.Node{node("n1", "dc1", "raw_exec"), node("n2", "dc1", "raw_exec")}
	first := alloc(job, 0, "n1", structs.AllocClientStatusFailed)

	p := Compute(Input{Job: job, Nodes: nodes, Allocs: []*structs.Allocation{first}, Now: afterRescheduleDelay})
	must.Len(t, 1, p.Place)
	second := p.Place[0]
	second.ID, second.ClientStatus = "second", structs.AllocClientStatusFailed
	second.ModifyTime = afterRescheduleDelay.UnixNano()

	p = Compute(Input{Job: job, Nodes: nodes, Allocs: []*structs.Allocation{first, second}, Now: afterRescheduleDelay.Add(time.Hour)})
	must.SliceEmpty(t, p.Place, must.Sprint("the one attempt of the last 24h is used"))
	must.True(t, p.RescheduleAt.IsZero())

	// A day later the attempt is outside the interval: one more.
	p = Compute(Input{Job: job, Nodes: nodes, Allocs: []*structs.Allocation{first, second}, Now: afterRescheduleDelay.Add(25 * time.Hour)})
	must.Len(t, 1, p.Place)
	must.Eq(t, "second", p.Place[0].PreviousAllocation)
	must.Len(t, 2, p.Place[0].RescheduleTracker.Events)
}

// TestMayReschedule_AgreesWithCompute: the GC keeps a failed allocation exactly when a
// scheduler run would still replace it. One that won a reconnect against its replacement (which
// the state linked as its NextAllocation, then stopped) and failed later is rescheduled: the
// stale link must not let the GC collect it first, or its replacement would start with no
// reschedule history.
func TestMayReschedule_AgreesWithCompute(t *testing.T) {
	job := testJob(structs.JobTypeService, 1, "raw_exec")
	nodes := []*structs.Node{node("n1", "dc1", "raw_exec"), node("n2", "dc1", "raw_exec")}
	orig := alloc(job, 0, "n1", structs.AllocClientStatusFailed)
	orig.NextAllocation = "repl"
	repl := alloc(job, 0, "n2", structs.AllocClientStatusComplete)
	repl.ID, repl.PreviousAllocation = "repl", orig.ID
	repl.DesiredStatus, repl.DesiredDescription = structs.AllocDesiredStatusStop, ReasonReconnectOriginal
	allocs := []*structs.Allocation{orig, repl}

	p := Compute(Input{Job: job, Nodes: nodes, Allocs: allocs, Now: afterRescheduleDelay})
	must.Len(t, 1, p.Place)
	must.Eq(t, orig.ID, p.Place[0].PreviousAllocation)
	must.True(t, MayReschedule(job, orig, ReplacedAllocs(allocs), afterRescheduleDelay))

	// Once that replacement is placed (its tracker names orig), neither replaces it again.
	next := p.Place[0]
	next.ID = "next"
	orig.NextAllocation = next.ID
	allocs = append(allocs, next)
	p = Compute(Input{Job: job, Nodes: nodes, Allocs: allocs, Now: afterRescheduleDelay})
	must.SliceEmpty(t, p.Place)
	must.False(t, MayReschedule(job, orig, ReplacedAllocs(allocs), afterRescheduleDelay))
}
