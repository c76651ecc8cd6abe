package scheduler

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestSystemStagger: a system job's update block replaces max_parallel allocations per plan
// and asks for the next batch after the stagger; updates in place are not limited.
func TestSystemStagger(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var nodes []*structs.Node
	for i := range 5 {
		nodes = append(nodes, node(fmt.Sprintf("n%d", i), "dc1", "raw_exec"))
	}
	v0 := testJob(structs.JobTypeSystem, 1, "raw_exec")
	withUpdate := func(j *structs.Job, u *api.UpdateStrategy, groupLevel bool) *structs.Job {
		if groupLevel {
			j.TaskGroups[0].Update = u
		} else {
			j.Update = u
		}
		return j
	}
	cases := []struct {
		name         string
		next         *structs.Job
		current      int // allocations already on the new version
		wantReplaced int
		wantUpdated  int
		wantFollowup time.Time
	}{
		{"first batch", withUpdate(nextVersion(v0, 1, true), &api.UpdateStrategy{MaxParallel: new(2), Stagger: new(time.Minute)}, true),
			0, 2, 0, now.Add(time.Minute)},
		{"second batch", withUpdate(nextVersion(v0, 1, true), &api.UpdateStrategy{MaxParallel: new(2), Stagger: new(time.Minute)}, true),
			2, 2, 0, now.Add(time.Minute)},
		{"last batch asks for no follow-up", withUpdate(nextVersion(v0, 1, true), &api.UpdateStrategy{MaxParallel: new(2), Stagger: new(time.Minute)}, true),
			4, 1, 0, time.Time{}},
		{"job-level block with the default stagger", withUpdate(nextVersion(v0, 1, true), &api.UpdateStrategy{MaxParallel: new(3)}, false),
			0, 3, 0, now.Add(30 * time.Second)},
		{"max_parallel 0 replaces everything", withUpdate(nextVersion(v0, 1, true), &api.UpdateStrategy{MaxParallel: new(0)}, true),
			0, 5, 0, time.Time{}},
		{"no update block replaces everything", nextVersion(v0, 1, true), 0, 5, 0, time.Time{}},
		{"updates in place are not staggered", withUpdate(nextVersion(v0, 1, false), &api.UpdateStrategy{MaxParallel: new(1)}, true),
			0, 0, 5, time.Time{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The old version has the same update block: changing it alone would be a
			// destructive change of the group.
			old := v0.Copy()
			old.CopyTaskGroups()
			old.Update = tc.next.Update
			old.TaskGroups[0].Update = tc.next.TaskGroups[0].Update
			var allocs []*structs.Allocation
			for i, n := range nodes {
				ver := old
				if i < tc.current {
					ver = tc.next
				}
				allocs = append(allocs, alloc(ver, 0, n.ID, structs.AllocClientStatusRunning))
			}
			p := Compute(Input{Job: tc.next, Allocs: allocs, Nodes: nodes, Now: now})
			must.Len(t, tc.wantReplaced, p.Stop)
			must.Len(t, tc.wantReplaced, p.Place)
			for _, s := range p.Stop {
				must.Eq(t, ReasonReplaced, s.Reason)
			}
			must.Len(t, tc.wantUpdated, p.Update)
			must.Eq(t, tc.wantFollowup, p.Followups[structs.EvalTriggerRollingUpdate])
		})
	}
}
