package scheduler

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"pgregory.net/rapid"
)

// TestSecurity_ComputeNeverPanics: whatever the state holds (nil entries, negative asks,
// malformed constraints and port specs, allocations with partial resources), Compute
// returns a plan.
func TestSecurity_ComputeNeverPanics(t *testing.T) {
	operands := []string{"=", "!=", "<", ">=", "regexp", "version", "semver", "set_contains_any",
		"is_set", "is_not_set", "distinct_hosts", "distinct_property", "bogus", ""}
	targets := []string{"${attr.kernel.name}", "${meta.rack}", "${node.class}", "(", "~~1", "1.2.3", "", "x,y", "${", "${}"}
	rapid.Check(t, func(t *rapid.T) {
		var nodes []*structs.Node
		for i := range rapid.IntRange(0, 6).Draw(t, "nodes") {
			if rapid.Bool().Draw(t, "nilNode") {
				nodes = append(nodes, nil)
				continue
			}
			n := node(fmt.Sprintf("n%d", i), "dc1", "raw_exec")
			n.Meta = map[string]string{"rack": rapid.SampledFrom([]string{"r1", "r2", ""}).Draw(t, "rack")}
			if rapid.Bool().Draw(t, "resources") {
				n.NodeResources = &structs.NodeResources{NodeResources: api.NodeResources{
					Cpu:            api.NodeCpuResources{CpuShares: rapid.Int64Range(-10, 5000).Draw(t, "cpu"), TotalCpuCores: uint16(rapid.IntRange(0, 4).Draw(t, "cores"))},
					Memory:         api.NodeMemoryResources{MemoryMB: rapid.Int64Range(-10, 5000).Draw(t, "mem")},
					MinDynamicPort: rapid.IntRange(-5, 70000).Draw(t, "min"), MaxDynamicPort: rapid.IntRange(-5, 70000).Draw(t, "max"),
				}}
			}
			if rapid.Bool().Draw(t, "reserved") {
				n.ReservedResources = &api.NodeReservedResources{
					Memory:   api.NodeReservedMemoryResources{MemoryMB: rapid.Uint64().Draw(t, "rmem")},
					Networks: api.NodeReservedNetworkResources{ReservedHostPorts: rapid.SampledFrom([]string{"22", "a-b", "99999", "1-65535", ""}).Draw(t, "rports")},
				}
			}
			nodes = append(nodes, n)
		}
		job := testJob(rapid.SampledFrom([]string{structs.JobTypeService, structs.JobTypeBatch, structs.JobTypeSystem}).Draw(t, "type"),
			rapid.IntRange(-2, 8).Draw(t, "count"), "raw_exec")
		tg := job.TaskGroups[0]
		if rapid.Bool().Draw(t, "nilTask") {
			tg.Tasks = append(tg.Tasks, nil)
		}
		tg.Tasks[0].Resources = &api.Resources{CPU: new(rapid.IntRange(-100, 3000).Draw(t, "askCPU")),
			MemoryMB: new(rapid.IntRange(-100, 3000).Draw(t, "askMem")), Cores: new(rapid.IntRange(-1, 3).Draw(t, "askCores"))}
		tg.Networks = []*api.NetworkResource{nil, {ReservedPorts: []api.Port{{Label: "a", Value: rapid.IntRange(-1, 70000).Draw(t, "static")}},
			DynamicPorts: make([]api.Port, rapid.IntRange(0, 3).Draw(t, "dyn"))}}
		for range rapid.IntRange(0, 3).Draw(t, "constraints") {
			c := &api.Constraint{Operand: rapid.SampledFrom(operands).Draw(t, "op"),
				LTarget: rapid.SampledFrom(targets).Draw(t, "l"), RTarget: rapid.SampledFrom(targets).Draw(t, "r")}
			tg.Constraints = append(tg.Constraints, c, nil)
		}
		job.Affinities = []*api.Affinity{nil, {LTarget: rapid.SampledFrom(targets).Draw(t, "al"), Operand: rapid.SampledFrom(operands).Draw(t, "aop"),
			Weight: new(int8(rapid.IntRange(-128, 127).Draw(t, "aw")))}}
		if rapid.Bool().Draw(t, "spread") {
			job.Spreads = []*api.Spread{nil, {Attribute: rapid.SampledFrom(targets).Draw(t, "sa"), Weight: new(int8(rapid.IntRange(-128, 127).Draw(t, "sw"))),
				SpreadTarget: []*api.SpreadTarget{nil, {Value: "r1", Percent: uint8(rapid.IntRange(0, 255).Draw(t, "pct"))}}}}
		}
		var allocs []*structs.Allocation
		onNodes := map[string][]*structs.Allocation{}
		for i := range rapid.IntRange(0, 4).Draw(t, "allocs") {
			a := alloc(job, i, fmt.Sprintf("n%d", i), structs.AllocClientStatusRunning)
			switch rapid.IntRange(0, 3).Draw(t, "allocKind") {
			case 0:
				a.Job = nil
			case 1:
				a.AllocatedResources = &api.AllocatedResources{Tasks: map[string]*api.AllocatedTaskResources{"x": nil}}
			case 2:
				allocs = append(allocs, nil)
			}
			allocs = append(allocs, a)
			onNodes[a.NodeID] = append(onNodes[a.NodeID], a, nil)
		}
		Compute(Input{Job: job, Nodes: nodes, Allocs: allocs, NodeAllocs: onNodes, MaxPlacements: 5})
	})
}

// TestSecurity_PreemptAndDisconnectNeverPanic: preemption, disconnect blocks, unknown and
// reconnected allocations (with nil or partial records) and staggered system updates never
// make Compute panic, and a plan never preempts an allocation of its own job or one it stops.
func TestSecurity_PreemptAndDisconnectNeverPanic(t *testing.T) {
	statuses := []string{structs.AllocClientStatusRunning, structs.AllocClientStatusUnknown, structs.AllocClientStatusPending,
		structs.AllocClientStatusFailed, structs.AllocClientStatusLost, ""}
	rapid.Check(t, func(t *rapid.T) {
		var nodes []*structs.Node
		for i := range rapid.IntRange(0, 4).Draw(t, "nodes") {
			n := resNode(fmt.Sprintf("n%d", i), rapid.Int64Range(-1, 4000).Draw(t, "cpu"), rapid.Int64Range(-1, 2000).Draw(t, "mem"))
			n.Status = rapid.SampledFrom([]string{structs.NodeStatusReady, structs.NodeStatusDisconnected, structs.NodeStatusDown}).Draw(t, "status")
			nodes = append(nodes, n)
		}
		job := testJob(rapid.SampledFrom([]string{structs.JobTypeService, structs.JobTypeBatch, structs.JobTypeSystem, structs.JobTypeSysBatch}).Draw(t, "type"),
			rapid.IntRange(0, 4).Draw(t, "count"), "raw_exec")
		job.Priority = rapid.IntRange(-5, 120).Draw(t, "priority")
		tg := job.TaskGroups[0]
		tg.Tasks[0].Resources = &api.Resources{CPU: new(rapid.IntRange(0, 3000).Draw(t, "askCPU")), MemoryMB: new(rapid.IntRange(0, 3000).Draw(t, "askMem"))}
		if rapid.Bool().Draw(t, "disconnect") {
			d := &api.DisconnectStrategy{}
			if rapid.Bool().Draw(t, "lostAfter") {
				d.LostAfter = new(time.Duration(rapid.Int64Range(-10, 1e12).Draw(t, "lost")))
			}
			if rapid.Bool().Draw(t, "replace") {
				d.Replace = new(rapid.Bool().Draw(t, "replaceVal"))
			}
			if rapid.Bool().Draw(t, "reconcile") {
				d.Reconcile = new(api.ReconcileOption(rapid.SampledFrom([]string{"best_score", "longest_running", "keep_original", "keep_replacement", "bogus"}).Draw(t, "rec")))
			}
			tg.Disconnect = d
		}
		if rapid.Bool().Draw(t, "update") {
			tg.Update = &api.UpdateStrategy{MaxParallel: new(rapid.IntRange(-1, 3).Draw(t, "mp")), Stagger: new(time.Duration(rapid.Int64Range(-10, 1e10).Draw(t, "stagger")))}
		}
		old := nextVersion(job, 1, true)
		old.Version = 99
		var allocs []*structs.Allocation
		onNodes := map[string][]*structs.Allocation{}
		ids := []string{}
		for i := range rapid.IntRange(0, 6).Draw(t, "allocs") {
			owner := job
			if rapid.Bool().Draw(t, "oldVersion") {
				owner = old
			}
			a := alloc(owner, rapid.IntRange(0, 3).Draw(t, "idx"), fmt.Sprintf("n%d", rapid.IntRange(0, 4).Draw(t, "on")), rapid.SampledFrom(statuses).Draw(t, "cs"))
			a.ID = fmt.Sprintf("a%d", i)
			if rapid.Bool().Draw(t, "states") {
				a.AllocStates = []*structs.AllocState{nil, {Field: structs.AllocStateFieldClientStatus, Value: structs.AllocClientStatusUnknown,
					Time: time.Unix(rapid.Int64Range(-1, 2e9).Draw(t, "at"), 0)}}
			}
			if len(ids) > 0 && rapid.Bool().Draw(t, "prev") {
				a.PreviousAllocation = rapid.SampledFrom(ids).Draw(t, "prevID")
			}
			if rapid.Bool().Draw(t, "metrics") {
				a.Metrics = &api.AllocationMetric{ScoreMetaData: []*api.NodeScoreMeta{nil, {NodeID: a.NodeID, NormScore: 0.5}}}
			}
			ids = append(ids, a.ID)
			allocs = append(allocs, a)
			onNodes[a.NodeID] = append(onNodes[a.NodeID], a)
		}
		for i := range rapid.IntRange(0, 4).Draw(t, "others") {
			o := runningOther(fmt.Sprintf("o%d", i), rapid.IntRange(-5, 120).Draw(t, "otherPriority"), rapid.IntRange(0, 2000).Draw(t, "otherMem"))
			o.NodeID = fmt.Sprintf("n%d", rapid.IntRange(0, 4).Draw(t, "otherOn"))
			if rapid.Bool().Draw(t, "otherNilJob") {
				o.Job = nil
			}
			onNodes[o.NodeID] = append(onNodes[o.NodeID], o, nil)
		}
		in := Input{Job: job, Nodes: nodes, Allocs: allocs, NodeAllocs: onNodes, MaxPlacements: 5,
			Now: time.Unix(rapid.Int64Range(0, 2e9).Draw(t, "now"), 0),
			Preemption: structs.PreemptionConfig{SystemSchedulerEnabled: rapid.Bool().Draw(t, "ps"), SysBatchSchedulerEnabled: rapid.Bool().Draw(t, "psb"),
				BatchSchedulerEnabled: rapid.Bool().Draw(t, "pb"), ServiceSchedulerEnabled: rapid.Bool().Draw(t, "psv")}}
		p := Compute(in)
		stopped := map[string]bool{}
		for _, s := range p.Stop {
			stopped[s.Alloc.ID] = true
		}
		seen := map[string]bool{}
		for _, v := range p.Preempted() {
			if v.JobID == job.ID || stopped[v.ID] || seen[v.ID] {
				t.Fatalf("preempted %s: own job, stopped, or twice", v.ID)
			}
			seen[v.ID] = true
			if v.Job == nil || job.Priority-v.Job.Priority < PreemptPriorityDelta {
				t.Fatalf("preempted %s of priority too close to %d", v.ID, job.Priority)
			}
		}
	})
}
