package scheduler

import (
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

var disconnectNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// disconnectJob is a service job of count 2 whose group has a disconnect block.
func disconnectJob(typ string, lostAfter time.Duration, replace *bool, reconcile string) *structs.Job {
	count := 2
	if typ != structs.JobTypeService {
		count = 1
	}
	j := testJob(typ, count, "raw_exec")
	d := &api.DisconnectStrategy{LostAfter: &lostAfter, Replace: replace}
	if reconcile != "" {
		d.Reconcile = new(api.ReconcileOption(reconcile))
	}
	j.TaskGroups[0].Disconnect = d
	return j
}

// unknownAlloc is an allocation whose node disconnected ago before disconnectNow.
func unknownAlloc(j *structs.Job, idx int, nodeID string, ago time.Duration) *structs.Allocation {
	a := alloc(j, idx, nodeID, structs.AllocClientStatusUnknown)
	a.AllocStates = []*structs.AllocState{{Field: structs.AllocStateFieldClientStatus, Value: structs.AllocClientStatusUnknown, Time: disconnectNow.Add(-ago)}}
	return a
}

func disconnectNodes() []*structs.Node {
	n1 := node("n1", "dc1", "raw_exec")
	n1.Status = structs.NodeStatusDisconnected
	return []*structs.Node{n1, node("n2", "dc1", "raw_exec"), node("n3", "dc1", "raw_exec")}
}

// TestDisconnect_Unknown: an allocation of a disconnected node waits as unknown until its
// group's lost_after passes, with a replacement beside it unless replace is false; then it is
// lost. A follow-up evaluation is asked for when lost_after passes.
func TestDisconnect_Unknown(t *testing.T) {
	running := structs.AllocClientStatusRunning
	cases := []struct {
		name         string
		job          *structs.Job
		allocs       func(j *structs.Job) []*structs.Allocation
		now          time.Time
		wantPlace    []string
		wantPrev     string // PreviousAllocation of the first placement
		wantLost     []string
		wantStops    int
		wantFollowup time.Time
	}{
		{
			name: "replaced at once within lost_after", job: disconnectJob(structs.JobTypeService, 10*time.Minute, nil, ""),
			allocs: func(j *structs.Job) []*structs.Allocation {
				return []*structs.Allocation{unknownAlloc(j, 0, "n1", time.Minute), alloc(j, 1, "n2", running)}
			},
			now: disconnectNow, wantPlace: []string{"web[0]@n3"}, wantPrev: "alloc-0-n1",
			wantFollowup: disconnectNow.Add(9 * time.Minute),
		},
		{
			name: "replace false keeps the name and places nothing", job: disconnectJob(structs.JobTypeService, 10*time.Minute, new(false), ""),
			allocs: func(j *structs.Job) []*structs.Allocation {
				return []*structs.Allocation{unknownAlloc(j, 0, "n1", time.Minute), alloc(j, 1, "n2", running)}
			},
			now: disconnectNow, wantFollowup: disconnectNow.Add(9 * time.Minute),
		},
		{
			name: "lost once lost_after passed, and replaced", job: disconnectJob(structs.JobTypeService, 10*time.Minute, new(false), ""),
			allocs: func(j *structs.Job) []*structs.Allocation {
				return []*structs.Allocation{unknownAlloc(j, 0, "n1", 11*time.Minute), alloc(j, 1, "n2", running)}
			},
			now: disconnectNow, wantPlace: []string{"web[0]@n3"}, wantPrev: "alloc-0-n1", wantLost: []string{"alloc-0-n1"},
		},
		{
			name: "lost with a replacement already running", job: disconnectJob(structs.JobTypeService, 10*time.Minute, nil, ""),
			allocs: func(j *structs.Job) []*structs.Allocation {
				repl := alloc(j, 0, "n3", running)
				repl.PreviousAllocation = "alloc-0-n1"
				return []*structs.Allocation{unknownAlloc(j, 0, "n1", 11*time.Minute), repl, alloc(j, 1, "n2", running)}
			},
			now: disconnectNow, wantLost: []string{"alloc-0-n1"},
		},
		{
			name: "a replacement already running is not doubled", job: disconnectJob(structs.JobTypeService, 10*time.Minute, nil, ""),
			allocs: func(j *structs.Job) []*structs.Allocation {
				repl := alloc(j, 0, "n3", running)
				repl.PreviousAllocation = "alloc-0-n1"
				return []*structs.Allocation{unknownAlloc(j, 0, "n1", time.Minute), repl, alloc(j, 1, "n2", running)}
			},
			now: disconnectNow, wantFollowup: disconnectNow.Add(9 * time.Minute),
		},
		{
			name: "no lost_after: lost at once", job: testJob(structs.JobTypeService, 2, "raw_exec"),
			allocs: func(j *structs.Job) []*structs.Allocation {
				return []*structs.Allocation{unknownAlloc(j, 0, "n1", time.Minute), alloc(j, 1, "n2", running)}
			},
			now: disconnectNow, wantPlace: []string{"web[0]@n3"}, wantPrev: "alloc-0-n1", wantLost: []string{"alloc-0-n1"},
		},
		{
			name: "job plan (no time) treats it as within lost_after", job: disconnectJob(structs.JobTypeService, 10*time.Minute, new(false), ""),
			allocs: func(j *structs.Job) []*structs.Allocation {
				return []*structs.Allocation{unknownAlloc(j, 0, "n1", 11*time.Minute), alloc(j, 1, "n2", running)}
			},
			wantFollowup: disconnectNow.Add(-time.Minute),
		},
		{
			name: "system job keeps it on its disconnected node", job: disconnectJob(structs.JobTypeSystem, 10*time.Minute, nil, ""),
			allocs: func(j *structs.Job) []*structs.Allocation {
				return []*structs.Allocation{unknownAlloc(j, 0, "n1", time.Minute), alloc(j, 0, "n2", running), alloc(j, 0, "n3", running)}
			},
			now: disconnectNow, wantFollowup: disconnectNow.Add(9 * time.Minute),
		},
		{
			name: "system job loses it after lost_after", job: disconnectJob(structs.JobTypeSystem, 10*time.Minute, nil, ""),
			allocs: func(j *structs.Job) []*structs.Allocation {
				return []*structs.Allocation{unknownAlloc(j, 0, "n1", time.Hour), alloc(j, 0, "n2", running), alloc(j, 0, "n3", running)}
			},
			now: disconnectNow, wantLost: []string{"alloc-0-n1"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := Compute(Input{Job: tc.job, Allocs: tc.allocs(tc.job), Nodes: disconnectNodes(), Now: tc.now})
			must.Eq(t, tc.wantPlace, viewOf(p).Place)
			if tc.wantPrev != "" {
				must.Eq(t, tc.wantPrev, p.Place[0].PreviousAllocation)
			}
			var lost []string
			for _, a := range p.Lost {
				lost = append(lost, a.ID)
			}
			must.Eq(t, tc.wantLost, lost)
			must.Len(t, tc.wantStops, p.Stop)
			must.Eq(t, tc.wantFollowup, p.Followups[structs.EvalTriggerMaxDisconnectTimeout])
		})
	}
}

// TestDisconnect_Reconnect: when an unknown allocation's client reports again while its
// replacement runs, the group's reconcile strategy stops one of the two.
func TestDisconnect_Reconnect(t *testing.T) {
	running := structs.AllocClientStatusRunning
	early, late := disconnectNow.Add(-time.Hour), disconnectNow.Add(-time.Minute)
	pair := func(j *structs.Job, origScore, replScore float64, origStart, replStart time.Time) []*structs.Allocation {
		orig := unknownAlloc(j, 0, "n1", 5*time.Minute)
		orig.ClientStatus = running
		orig.Metrics = &api.AllocationMetric{ScoreMetaData: []*api.NodeScoreMeta{{NodeID: "n1", NormScore: origScore}}}
		orig.TaskStates = map[string]*structs.TaskState{"server": {State: structs.TaskStateRunning, StartedAt: origStart}}
		repl := alloc(j, 0, "n3", running)
		repl.PreviousAllocation = orig.ID
		repl.Metrics = &api.AllocationMetric{ScoreMetaData: []*api.NodeScoreMeta{{NodeID: "n3", NormScore: replScore}}}
		repl.TaskStates = map[string]*structs.TaskState{"server": {State: structs.TaskStateRunning, StartedAt: replStart}}
		return []*structs.Allocation{orig, repl, alloc(j, 1, "n2", running)}
	}
	cases := []struct {
		name      string
		reconcile string
		allocs    func(j *structs.Job) []*structs.Allocation
		wantStop  string
	}{
		{"keep_original", structs.ReconcileKeepOriginal,
			func(j *structs.Job) []*structs.Allocation { return pair(j, 0.1, 0.9, early, late) },
			"web[0]@n3: " + ReasonReconnectOriginal},
		{"keep_replacement", structs.ReconcileKeepReplacement,
			func(j *structs.Job) []*structs.Allocation { return pair(j, 0.9, 0.1, early, late) },
			"web[0]@n1: " + ReasonReconnectReplacment},
		{"longest_running keeps the original that ran first", structs.ReconcileLongestRunning,
			func(j *structs.Job) []*structs.Allocation { return pair(j, 0.1, 0.9, early, late) },
			"web[0]@n3: " + ReasonReconnectOriginal},
		{"longest_running keeps a replacement that ran first", structs.ReconcileLongestRunning,
			func(j *structs.Job) []*structs.Allocation { return pair(j, 0.9, 0.1, late, early) },
			"web[0]@n1: " + ReasonReconnectReplacment},
		{"best_score keeps the better node", structs.ReconcileBestScore,
			func(j *structs.Job) []*structs.Allocation { return pair(j, 0.2, 0.8, early, late) },
			"web[0]@n1: " + ReasonReconnectReplacment},
		{"best_score tie keeps the original", "",
			func(j *structs.Job) []*structs.Allocation { return pair(j, 0.5, 0.5, early, late) },
			"web[0]@n3: " + ReasonReconnectOriginal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := disconnectJob(structs.JobTypeService, 10*time.Minute, nil, tc.reconcile)
			p := Compute(Input{Job: j, Allocs: tc.allocs(j), Nodes: []*structs.Node{node("n1", "dc1", "raw_exec"), node("n2", "dc1", "raw_exec"), node("n3", "dc1", "raw_exec")}, Now: disconnectNow})
			v := viewOf(p)
			must.Eq(t, []string{tc.wantStop}, v.Stop)
			must.SliceEmpty(t, v.Place)
			must.SliceEmpty(t, p.Lost)
		})
	}
}
