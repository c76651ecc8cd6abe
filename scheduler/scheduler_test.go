package scheduler

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func node(id, dc string, drivers ...string) *structs.Node {
	n := &structs.Node{
		ID: id, Name: "name-" + id, Datacenter: dc, NodePool: structs.DefaultNodePool,
		Status: structs.NodeStatusReady, SchedulingEligibility: structs.NodeSchedulingEligible,
		Drivers: map[string]*structs.DriverInfo{},
	}
	for _, d := range drivers {
		n.Drivers[d] = &structs.DriverInfo{Detected: true, Healthy: true}
	}
	return n
}

func ptr[T any](v T) *T { return &v }

// testJob is version 0 of a job with one group "web" of count tasks using driver.
func testJob(typ string, count int, driver string) *structs.Job {
	return &structs.Job{
		Namespace: structs.DefaultNamespace, ID: "example", Type: typ, Datacenters: []string{"dc1"},
		NodePool: structs.DefaultNodePool, Version: 0, JobModifyIndex: 10, Status: structs.JobStatusPending,
		TaskGroups: []*api.TaskGroup{{
			Name: ptr("web"), Count: ptr(count),
			Tasks: []*api.Task{{Name: "server", Driver: driver, Config: map[string]any{"command": "/bin/sleep"}}},
		}},
	}
}

// nextVersion returns job at the next version with the group's count set, and the task
// config changed when destructive.
func nextVersion(job *structs.Job, count int, destructive bool) *structs.Job {
	j := job.Copy()
	j.Version++
	j.JobModifyIndex += 10
	tg := *j.TaskGroups[0]
	tg.Count = ptr(count)
	if destructive {
		task := *tg.Tasks[0]
		task.Config = map[string]any{"command": "/bin/true"}
		tg.Tasks = []*api.Task{&task}
	}
	j.TaskGroups = []*api.TaskGroup{&tg}
	return j
}

func alloc(job *structs.Job, idx int, nodeID, client string) *structs.Allocation {
	return &structs.Allocation{
		ID: fmt.Sprintf("alloc-%d-%s", idx, nodeID), Namespace: job.Namespace, JobID: job.ID, Job: job,
		TaskGroup: "web", Name: structs.AllocName(job.ID, "web", idx), NodeID: nodeID,
		DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: client,
	}
}

// view summarises a plan as strings that read like the decisions: "web[0]@n1" placements,
// "stop web[1]: reason", "update web[0]".
type view struct {
	Place  []string
	Update []string
	Stop   []string
	Queued map[string]int
}

func viewOf(p *Plan) view {
	v := view{Queued: p.Queued}
	for _, a := range p.Place {
		v.Place = append(v.Place, fmt.Sprintf("web[%d]@%s", a.Index(), a.NodeID))
	}
	for _, a := range p.Update {
		v.Update = append(v.Update, fmt.Sprintf("web[%d]", a.Index()))
	}
	for _, s := range p.Stop {
		v.Stop = append(v.Stop, fmt.Sprintf("web[%d]@%s: %s", s.Alloc.Index(), s.Alloc.NodeID, s.Reason))
	}
	sort.Strings(v.Place)
	return v
}

func TestCompute(t *testing.T) {
	v0 := testJob(structs.JobTypeService, 2, "raw_exec")
	stopped := v0.Copy()
	stopped.Stop = true
	twoNodes := []*structs.Node{node("n1", "dc1", "raw_exec"), node("n2", "dc1", "raw_exec")}
	running := structs.AllocClientStatusRunning

	cases := []struct {
		name  string
		in    Input
		want  view
		check func(t *testing.T, p *Plan)
	}{
		{
			name: "places count spread over nodes",
			in:   Input{Job: v0, Nodes: twoNodes},
			want: view{Place: []string{"web[0]@n1", "web[1]@n2"}, Queued: map[string]int{"web": 0}},
			check: func(t *testing.T, p *Plan) {
				a := p.Place[0]
				must.Eq(t, "example.web[0]", a.Name)
				must.Eq(t, "name-n1", a.NodeName)
				must.Eq(t, structs.AllocDesiredStatusRun, a.DesiredStatus)
				must.Eq(t, structs.AllocClientStatusPending, a.ClientStatus)
				must.Eq(t, "", a.ID, must.Sprint("the leader fixes IDs"))
				must.Eq(t, v0, a.Job)
			},
		},
		{
			name: "prefers the least loaded node",
			in:   Input{Job: testJob(structs.JobTypeService, 1, "raw_exec"), Nodes: twoNodes, NodeLoad: map[string]int{"n1": 3}},
			want: view{Place: []string{"web[0]@n2"}, Queued: map[string]int{"web": 0}},
		},
		{
			name: "nothing to do",
			in:   Input{Job: v0, Nodes: twoNodes, Allocs: []*structs.Allocation{alloc(v0, 0, "n1", running), alloc(v0, 1, "n2", running)}},
			want: view{Queued: map[string]int{"web": 0}},
		},
		{
			name: "fills the missing index",
			in:   Input{Job: v0, Nodes: twoNodes, Allocs: []*structs.Allocation{alloc(v0, 1, "n1", running)}},
			want: view{Place: []string{"web[0]@n2"}, Queued: map[string]int{"web": 0}},
		},
		{
			name: "scale down stops the highest indexes",
			in: Input{Job: nextVersion(v0, 1, false), Nodes: twoNodes, Allocs: []*structs.Allocation{
				alloc(v0, 0, "n1", running), alloc(v0, 1, "n2", running),
			}},
			want: view{Update: []string{"web[0]"}, Stop: []string{"web[1]@n2: " + ReasonCountReduced}, Queued: map[string]int{"web": 0}},
		},
		{
			name: "scale to zero",
			in:   Input{Job: nextVersion(v0, 0, false), Nodes: twoNodes, Allocs: []*structs.Allocation{alloc(v0, 0, "n1", running)}},
			want: view{Stop: []string{"web[0]@n1: " + ReasonCountReduced}, Queued: map[string]int{"web": 0}},
		},
		{
			name: "stopped job stops everything still wanted",
			in: Input{Job: stopped, Nodes: twoNodes, Allocs: []*structs.Allocation{
				alloc(v0, 0, "n1", running),
				func() *structs.Allocation {
					a := alloc(v0, 1, "n2", running)
					a.DesiredStatus = structs.AllocDesiredStatusStop
					return a
				}(),
			}},
			want: view{Stop: []string{"web[0]@n1: " + ReasonJobStopped}, Queued: map[string]int{}},
		},
		{
			name: "purged job",
			in:   Input{Nodes: twoNodes, Allocs: []*structs.Allocation{alloc(v0, 0, "n1", running)}},
			want: view{Stop: []string{"web[0]@n1: " + ReasonJobPurged}, Queued: map[string]int{}},
		},
		{
			name: "destructive update replaces under the same name",
			in: Input{Job: nextVersion(v0, 2, true), Nodes: twoNodes, Allocs: []*structs.Allocation{
				alloc(v0, 0, "n1", running), alloc(v0, 1, "n2", running),
			}},
			want: view{
				Place:  []string{"web[0]@n1", "web[1]@n2"},
				Stop:   []string{"web[0]@n1: " + ReasonReplaced, "web[1]@n2: " + ReasonReplaced},
				Queued: map[string]int{"web": 0},
			},
		},
		{
			name: "count change only updates in place and adds",
			in:   Input{Job: nextVersion(v0, 3, false), Nodes: twoNodes, Allocs: []*structs.Allocation{alloc(v0, 0, "n1", running)}},
			want: view{Place: []string{"web[1]@n2", "web[2]@n1"}, Update: []string{"web[0]"}, Queued: map[string]int{"web": 0}},
		},
		{
			name: "no node has the driver",
			in:   Input{Job: testJob(structs.JobTypeService, 2, "docker"), Nodes: twoNodes},
			want: view{Queued: map[string]int{"web": 2}},
			check: func(t *testing.T, p *Plan) {
				m := p.Failed["web"]
				must.NotNil(t, m)
				must.Eq(t, 2, m.NodesEvaluated)
				must.Eq(t, 2, m.NodesFiltered)
				must.Eq(t, map[string]int{"missing drivers": 2}, m.ConstraintFiltered)
				must.Eq(t, 1, m.CoalescedFailures)
			},
		},
		{
			name: "no ready node",
			in: Input{Job: v0, Nodes: []*structs.Node{func() *structs.Node {
				n := node("n1", "dc1", "raw_exec")
				n.Status = structs.NodeStatusDown
				return n
			}()}},
			want: view{Queued: map[string]int{"web": 2}},
		},
		{
			name: "other datacenter",
			in:   Input{Job: v0, Nodes: []*structs.Node{node("n1", "dc2", "raw_exec"), node("n2", "dc1", "raw_exec")}},
			want: view{Place: []string{"web[0]@n2", "web[1]@n2"}, Queued: map[string]int{"web": 0}},
		},
		{
			name: "wildcard datacenter",
			in: Input{
				Job: func() *structs.Job {
					j := testJob(structs.JobTypeService, 1, "raw_exec")
					j.Datacenters = []string{"*"}
					return j
				}(),
				Nodes: []*structs.Node{node("n1", "east", "raw_exec")},
			},
			want: view{Place: []string{"web[0]@n1"}, Queued: map[string]int{"web": 0}},
		},
		{
			name: "lost allocation is stopped and replaced",
			in:   Input{Job: v0, Nodes: twoNodes, Allocs: []*structs.Allocation{alloc(v0, 0, "n1", structs.AllocClientStatusLost), alloc(v0, 1, "n2", running)}},
			want: view{
				Place:  []string{"web[0]@n1"},
				Stop:   []string{"web[0]@n1: " + ReasonLost},
				Queued: map[string]int{"web": 0},
			},
		},
		{
			name: "allocation stopped through the API is stopped and replaced",
			in: Input{Job: v0, Nodes: twoNodes, Allocs: []*structs.Allocation{
				func() *structs.Allocation {
					a := alloc(v0, 0, "n1", running)
					a.DesiredTransition.Migrate = ptr(true)
					return a
				}(),
				alloc(v0, 1, "n2", running),
			}},
			want: view{
				Place:  []string{"web[0]@n1"},
				Stop:   []string{"web[0]@n1: " + ReasonMigrating},
				Queued: map[string]int{"web": 0},
			},
			check: func(t *testing.T, p *Plan) {
				must.Eq(t, "alloc-0-n1", p.Place[0].PreviousAllocation, must.Sprint("a migration names what it moves"))
			},
		},
		{
			name: "failed service allocation is replaced",
			in: Input{Job: v0, Nodes: twoNodes, Now: time.Unix(0, 0).Add(time.Hour),
				Allocs: []*structs.Allocation{alloc(v0, 0, "n1", structs.AllocClientStatusFailed), alloc(v0, 1, "n1", running)}},
			want: view{Place: []string{"web[0]@n2"}, Queued: map[string]int{"web": 0}},
			check: func(t *testing.T, p *Plan) {
				must.Eq(t, "alloc-0-n1", p.Place[0].PreviousAllocation)
				must.Len(t, 1, p.Place[0].RescheduleTracker.Events)
				must.Eq(t, "alloc-0-n1", p.Place[0].RescheduleTracker.Events[0].PrevAllocID)
				must.Eq(t, time.Unix(0, 0).Add(time.Hour).UnixNano(), p.Place[0].RescheduleTracker.Events[0].RescheduleTime)
			},
		},
		{
			// The service default: 30s, exponential.
			name: "failed service allocation waits for its reschedule delay",
			in: Input{Job: v0, Nodes: twoNodes, Now: time.Unix(0, 0).Add(10 * time.Second),
				Allocs: []*structs.Allocation{alloc(v0, 0, "n1", structs.AllocClientStatusFailed), alloc(v0, 1, "n1", running)}},
			want: view{Queued: map[string]int{"web": 0}},
			check: func(t *testing.T, p *Plan) {
				must.Eq(t, time.Unix(0, 0).Add(30*time.Second), p.RescheduleAt)
			},
		},
		{
			name: "finished batch allocation is done",
			in: Input{Job: nextVersion(testJob(structs.JobTypeBatch, 1, "raw_exec"), 1, true), Nodes: twoNodes, Allocs: []*structs.Allocation{
				alloc(testJob(structs.JobTypeBatch, 1, "raw_exec"), 0, "n1", structs.AllocClientStatusComplete),
			}},
			want: view{Queued: map[string]int{"web": 0}},
		},
		{
			name: "system job runs on every eligible node",
			in: Input{Job: testJob(structs.JobTypeSystem, 1, "raw_exec"), Nodes: []*structs.Node{
				node("n1", "dc1", "raw_exec"), node("n2", "dc1", "docker"), node("n3", "dc1", "raw_exec"),
			}, Allocs: []*structs.Allocation{alloc(testJob(structs.JobTypeSystem, 1, "raw_exec"), 0, "n1", running)}},
			want: view{Place: []string{"web[0]@n3"}, Queued: map[string]int{"web": 0}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := Compute(tc.in)
			must.Eq(t, tc.want, viewOf(p))
			if tc.check != nil {
				tc.check(t, p)
			}
		})
	}
}

// TestCompute_Deterministic: the same input gives the same plan, whatever the order of the
// allocations and nodes given.
func TestCompute_Deterministic(t *testing.T) {
	job := testJob(structs.JobTypeService, 5, "raw_exec")
	nodes := []*structs.Node{node("n3", "dc1", "raw_exec"), node("n1", "dc1", "raw_exec"), node("n2", "dc1", "raw_exec")}
	allocs := []*structs.Allocation{alloc(job, 3, "n2", "running"), alloc(job, 0, "n1", "running")}
	first := viewOf(Compute(Input{Job: job, Nodes: nodes, Allocs: allocs}))
	nodes[0], nodes[2] = nodes[2], nodes[0]
	allocs[0], allocs[1] = allocs[1], allocs[0]
	must.Eq(t, first, viewOf(Compute(Input{Job: job, Nodes: nodes, Allocs: allocs})))
	must.Eq(t, []string{"web[1]@n3", "web[2]@n1", "web[4]@n2"}, first.Place)
}

// A group with a sticky (or migrating) ephemeral disk replaces an allocation on a
// destructive update on the same node when it fits there, so that the client hands its
// alloc/data over; without, the replacement goes where ranking puts it. Either way it names
// the allocation it replaces as its previous one, as upstream (the state links that one back).
func TestCompute_StickyDiskStaysOnItsNode(t *testing.T) {
	running := structs.AllocClientStatusRunning
	nodes := []*structs.Node{node("n1", "dc1", "raw_exec"), node("n2", "dc1", "raw_exec")}
	for _, tc := range []struct {
		name     string
		disk     *api.EphemeralDisk
		wantNode string
	}{
		{name: "sticky", disk: &api.EphemeralDisk{Sticky: ptr(true)}, wantNode: "n2"},
		{name: "migrate", disk: &api.EphemeralDisk{Migrate: ptr(true)}, wantNode: "n2"},
		{name: "neither", disk: &api.EphemeralDisk{}, wantNode: "n1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v0 := testJob(structs.JobTypeService, 1, "raw_exec")
			v0.TaskGroups[0].EphemeralDisk = tc.disk
			v1 := nextVersion(v0, 1, true)
			old := alloc(v0, 0, "n2", running)
			// n2 is the busier node, so ranking alone prefers n1.
			p := Compute(Input{Job: v1, Nodes: nodes, Allocs: []*structs.Allocation{old}, NodeLoad: map[string]int{"n2": 3}})
			must.Len(t, 1, p.Place)
			must.Eq(t, tc.wantNode, p.Place[0].NodeID)
			must.Eq(t, old.ID, p.Place[0].PreviousAllocation)
		})
	}
}

// A system job's update names, on each node, the allocation its replacement there replaces;
// a node new to the job gets one that names nothing, also when the replacement on another
// node did not fit (its names all share index 0, so that one's predecessor must not carry
// over).
func TestCompute_SystemReplacementNamesItsPredecessor(t *testing.T) {
	running := structs.AllocClientStatusRunning
	v0 := testJob(structs.JobTypeSystem, 1, "raw_exec")
	v0.TaskGroups[0].Tasks[0].Resources = &api.Resources{CPU: new(100), MemoryMB: new(64)}
	v1 := nextVersion(v0, 1, true)
	v1.TaskGroups[0].Tasks[0].Resources = &api.Resources{CPU: new(1500), MemoryMB: new(64)}
	// n1 takes v1; n2 is too small for it; n3 is new to the job.
	nodes := []*structs.Node{resNode("n1", 4000, 4096), resNode("n2", 1000, 4096), resNode("n3", 4000, 4096)}
	p := Compute(Input{Job: v1, Nodes: nodes, Allocs: []*structs.Allocation{alloc(v0, 0, "n1", running), alloc(v0, 0, "n2", running)}})
	prev := map[string]string{}
	for _, a := range p.Place {
		prev[a.NodeID] = a.PreviousAllocation
	}
	must.Eq(t, map[string]string{"n1": "alloc-0-n1", "n3": ""}, prev)
}

// An allocation stopped through the API (marked to migrate, its node still eligible) of a
// sticky group is placed again on its node when it fits there, naming the stopped one so that
// the client hands its alloc/data over; a draining node takes none.
func TestCompute_StickyDiskStoppedAllocationStays(t *testing.T) {
	running := structs.AllocClientStatusRunning
	v0 := testJob(structs.JobTypeService, 1, "raw_exec")
	v0.TaskGroups[0].EphemeralDisk = &api.EphemeralDisk{Sticky: ptr(true)}
	old := alloc(v0, 0, "n2", running)
	old.DesiredTransition.Migrate = ptr(true)
	nodes := []*structs.Node{node("n1", "dc1", "raw_exec"), node("n2", "dc1", "raw_exec")}
	// n2 is the busier node, so ranking alone prefers n1.
	p := Compute(Input{Job: v0, Nodes: nodes, Allocs: []*structs.Allocation{old}, NodeLoad: map[string]int{"n2": 3}})
	must.Len(t, 1, p.Place)
	must.Eq(t, "n2", p.Place[0].NodeID)
	must.Eq(t, old.ID, p.Place[0].PreviousAllocation)

	nodes[1].Drain, nodes[1].SchedulingEligibility = true, structs.NodeSchedulingIneligible
	p = Compute(Input{Job: v0, Nodes: nodes, Allocs: []*structs.Allocation{old}, NodeLoad: map[string]int{"n2": 3}})
	must.Len(t, 1, p.Place)
	must.Eq(t, "n1", p.Place[0].NodeID)
	must.Eq(t, old.ID, p.Place[0].PreviousAllocation)
}
