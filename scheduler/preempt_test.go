package scheduler

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// running is an allocation of another job (id, priority) on node n1 using mem MB.
func runningOther(id string, priority, mem int) *structs.Allocation {
	j := sized(1, 100, mem)
	j.ID, j.Priority = "job-"+id, priority
	a := alloc(j, 0, "n1", structs.AllocClientStatusRunning)
	a.ID = id
	return a
}

// TestPreempt: a job whose allocation does not fit a node evicts allocations of jobs at
// least 10 priorities lower, the lowest first and no more than needed, when the scheduler
// configuration allows it for the job's type.
func TestPreempt(t *testing.T) {
	systemOn := structs.PreemptionConfig{SystemSchedulerEnabled: true}
	job := func(typ string, priority, mem int) *structs.Job {
		j := testJob(typ, 1, "raw_exec")
		j.Priority = priority
		j.TaskGroups[0].Tasks[0].Resources = &api.Resources{CPU: new(100), MemoryMB: new(mem)}
		return j
	}
	cases := []struct {
		name     string
		job      *structs.Job
		config   structs.PreemptionConfig
		onNode   []*structs.Allocation
		victims  []string // IDs evicted, in order; nil: nothing placed
		wantPlan bool
	}{
		{
			name: "evicts the lowest priority allocation that makes room", job: job(structs.JobTypeSystem, 50, 300), config: systemOn,
			onNode:  []*structs.Allocation{runningOther("low", 20, 400), runningOther("low2", 30, 300), runningOther("mid", 45, 300)},
			victims: []string{"low"}, wantPlan: true,
		},
		{
			name: "evicts several when one is not enough", job: job(structs.JobTypeSystem, 50, 500), config: systemOn,
			onNode:  []*structs.Allocation{runningOther("low", 20, 400), runningOther("low2", 30, 300), runningOther("mid", 45, 300)},
			victims: []string{"low", "low2"}, wantPlan: true,
		},
		{
			name: "gives back a victim it does not need", job: job(structs.JobTypeSystem, 50, 500), config: systemOn,
			onNode:  []*structs.Allocation{runningOther("small", 20, 100), runningOther("big", 30, 600)},
			victims: []string{"big"}, wantPlan: true,
		},
		{
			name: "never within 10 priorities", job: job(structs.JobTypeSystem, 50, 300), config: systemOn,
			onNode: []*structs.Allocation{runningOther("mid", 41, 1000)},
		},
		{
			name: "not when the configuration disables it", job: job(structs.JobTypeSystem, 50, 300),
			onNode: []*structs.Allocation{runningOther("low", 20, 1000)},
		},
		{
			name: "not enough even evicting everything lower", job: job(structs.JobTypeSystem, 50, 800), config: systemOn,
			onNode: []*structs.Allocation{runningOther("low", 20, 300), runningOther("mid", 45, 700)},
		},
		{
			name: "sysbatch follows its own flag", job: job(structs.JobTypeSysBatch, 50, 300), config: systemOn,
			onNode: []*structs.Allocation{runningOther("low", 20, 1000)},
		},
		{
			name: "service jobs preempt when enabled", job: job(structs.JobTypeService, 80, 300),
			config:  structs.PreemptionConfig{ServiceSchedulerEnabled: true},
			onNode:  []*structs.Allocation{runningOther("low", 20, 1000)},
			victims: []string{"low"}, wantPlan: true,
		},
		{
			name: "an allocation that fits preempts nothing", job: job(structs.JobTypeSystem, 50, 300), config: systemOn,
			onNode: []*structs.Allocation{runningOther("low", 20, 500)}, wantPlan: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Job: tc.job, Nodes: []*structs.Node{resNode("n1", 4000, 1000)}, Preemption: tc.config,
				NodeAllocs: map[string][]*structs.Allocation{"n1": tc.onNode}}
			p := Compute(in)
			if !tc.wantPlan {
				must.Len(t, 0, p.Place)
				must.Eq(t, 1, p.Queued["web"])
				must.MapEmpty(t, p.NodePreemptions)
				return
			}
			must.Len(t, 1, p.Place)
			var got []string
			for _, v := range p.NodePreemptions["n1"] {
				got = append(got, v.ID)
			}
			must.Eq(t, tc.victims, got)
			must.Eq(t, tc.victims, p.Place[0].PreemptedAllocations)
			must.False(t, p.IsNoOp())
		})
	}
}

// TestPreempt_NotTwice: two groups of one job never evict the same allocation twice, and
// the second takes room left by the first's victims only if it fits.
func TestPreempt_NotTwice(t *testing.T) {
	j := testJob(structs.JobTypeSystem, 1, "raw_exec")
	j.Priority = 70
	j.TaskGroups[0].Tasks[0].Resources = &api.Resources{CPU: new(100), MemoryMB: new(300)}
	second := *j.TaskGroups[0]
	second.Name = new("api")
	j.TaskGroups = append(j.TaskGroups, &second)
	in := Input{Job: j, Nodes: []*structs.Node{resNode("n1", 4000, 1000)}, Preemption: structs.PreemptionConfig{SystemSchedulerEnabled: true},
		NodeAllocs: map[string][]*structs.Allocation{"n1": {runningOther("a", 10, 500), runningOther("b", 20, 500)}}}
	p := Compute(in)
	must.Len(t, 2, p.Place)
	must.Len(t, 2, p.NodePreemptions["n1"])
	must.Eq(t, "a", p.NodePreemptions["n1"][0].ID)
	must.Eq(t, "b", p.NodePreemptions["n1"][1].ID)
	must.Eq(t, []string{"a"}, p.Place[0].PreemptedAllocations)
	must.Eq(t, []string{"b"}, p.Place[1].PreemptedAllocations)
}
