package scheduler

import (
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// downNodes are n1, down (its allocations lost), and n2, n3 ready.
func downNodes() []*structs.Node {
	n1 := node("n1", "dc1", "raw_exec")
	n1.Status = structs.NodeStatusDown
	return []*structs.Node{n1, node("n2", "dc1", "raw_exec"), node("n3", "dc1", "raw_exec")}
}

// TestCompute_LostReplacementNamesIt: the placement that replaces an allocation lost with its
// node names it as its previous allocation, as upstream (the state then links the lost one to
// it), for service and batch groups. It is not a reschedule of a failure: it carries no
// reschedule tracker, neither a new event nor the lost one's history, so a node going down
// uses up none of the group's attempts.
func TestCompute_LostReplacementNamesIt(t *testing.T) {
	running := structs.AllocClientStatusRunning
	for _, typ := range []string{structs.JobTypeService, structs.JobTypeBatch} {
		t.Run(typ, func(t *testing.T) {
			job := testJob(typ, 2, "raw_exec")
			lost := alloc(job, 0, "n1", structs.AllocClientStatusLost)
			// The lost one was itself the replacement of a failure.
			lost.PreviousAllocation = "failed-before"
			lost.RescheduleTracker = &api.RescheduleTracker{Events: []*api.RescheduleEvent{
				{RescheduleTime: disconnectNow.Add(-time.Hour).UnixNano(), PrevAllocID: "failed-before", PrevNodeID: "n9"},
			}}
			allocs := []*structs.Allocation{lost, alloc(job, 1, "n2", running)}
			p := Compute(Input{Job: job, Nodes: downNodes(), Allocs: allocs, Now: disconnectNow})

			v := viewOf(p)
			must.Eq(t, []string{"web[0]@n1: " + ReasonLost}, v.Stop)
			must.Eq(t, []string{"web[0]@n3"}, v.Place)
			repl := p.Place[0]
			must.Eq(t, lost.ID, repl.PreviousAllocation)
			must.Nil(t, repl.RescheduleTracker)
			// Nothing names the lost one as a failure replaced: the GC and the reconcile
			// treat it as lost, not as awaiting a reschedule.
			must.MapNotContainsKey(t, ReplacedAllocs(append(allocs, repl)), lost.ID)
			must.False(t, MayReschedule(job, lost, ReplacedAllocs(allocs), disconnectNow))
		})
	}
}

// TestCompute_LostSystemAllocNamedByNone: a system job replaces a lost allocation nowhere
// else (its node is not feasible), as upstream; the placement on a node new to the job, in
// the same plan, names nothing, although every name of the group has index 0.
func TestCompute_LostSystemAllocNamedByNone(t *testing.T) {
	running := structs.AllocClientStatusRunning
	job := testJob(structs.JobTypeSystem, 1, "raw_exec")
	allocs := []*structs.Allocation{alloc(job, 0, "n1", structs.AllocClientStatusLost), alloc(job, 0, "n2", running)}
	p := Compute(Input{Job: job, Nodes: downNodes(), Allocs: allocs, Now: disconnectNow})
	v := viewOf(p)
	must.Eq(t, []string{"web[0]@n1: " + ReasonLost}, v.Stop)
	must.Eq(t, []string{"web[0]@n3"}, v.Place)
	must.Eq(t, "", p.Place[0].PreviousAllocation)
}

// TestCompute_LostChainNamesTheLatest: when an allocation and the replacement that took over
// from it are both lost, the new placement names the replacement (the latest of the chain),
// whatever the order the two come in; while the original is only unknown (within lost_after,
// with replace), it is the original that is named, so that the reconcile strategy pairs the
// two should it reconnect.
func TestCompute_LostChainNamesTheLatest(t *testing.T) {
	running := structs.AllocClientStatusRunning
	nodes := func() []*structs.Node {
		ns := disconnectNodes() // n1 disconnected
		ns = append(ns, node("n4", "dc1", "raw_exec"))
		ns[1].Status = structs.NodeStatusDown // n2 down
		return ns
	}
	for _, tc := range []struct {
		name     string
		origAgo  time.Duration
		origID   string
		replID   string
		wantPrev string
	}{
		// IDs order the two within their index: both orders are tried.
		{name: "original past lost_after, sorted first", origAgo: time.Hour, origID: "a-orig", replID: "b-repl", wantPrev: "b-repl"},
		{name: "original past lost_after, sorted last", origAgo: time.Hour, origID: "b-orig", replID: "a-repl", wantPrev: "a-repl"},
		{name: "original within lost_after", origAgo: time.Minute, origID: "a-orig", replID: "b-repl", wantPrev: "a-orig"},
		{name: "original within lost_after, sorted last", origAgo: time.Minute, origID: "b-orig", replID: "a-repl", wantPrev: "b-orig"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := disconnectJob(structs.JobTypeService, 10*time.Minute, nil, "")
			orig := unknownAlloc(job, 0, "n1", tc.origAgo)
			orig.ID = tc.origID
			repl := alloc(job, 0, "n2", structs.AllocClientStatusLost)
			repl.ID, repl.PreviousAllocation = tc.replID, orig.ID
			allocs := []*structs.Allocation{orig, repl, alloc(job, 1, "n3", running)}
			p := Compute(Input{Job: job, Nodes: nodes(), Allocs: allocs, Now: disconnectNow})
			must.Eq(t, []string{"web[0]@n4"}, viewOf(p).Place)
			must.Eq(t, tc.wantPrev, p.Place[0].PreviousAllocation)
			must.Nil(t, p.Place[0].RescheduleTracker)
		})
	}
}
