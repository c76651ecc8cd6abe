package scheduler

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// withUpdate gives the job's group an update block.
func withUpdate(job *structs.Job, maxParallel, canary int) *structs.Job {
	j := job.Copy()
	j.CopyTaskGroups()
	j.TaskGroups[0].Update = &api.UpdateStrategy{MaxParallel: ptr(maxParallel), Canary: ptr(canary),
		MinHealthyTime: ptr(10 * time.Second), HealthyDeadline: ptr(5 * time.Minute), ProgressDeadline: ptr(10 * time.Minute)}
	return j
}

// deployment of job's version with the group's state.
func deployment(job *structs.Job, status string, st structs.DeploymentState) *structs.Deployment {
	return &structs.Deployment{ID: fmt.Sprintf("dep-v%d", job.Version), Namespace: job.Namespace, JobID: job.ID,
		JobVersion: job.Version, JobCreateIndex: job.CreateIndex, Status: status,
		TaskGroups: map[string]*structs.DeploymentState{"web": &st}}
}

// inDeployment puts a in d with the given health (nil: not known yet).
func inDeployment(a *structs.Allocation, d *structs.Deployment, healthy *bool, canary bool) *structs.Allocation {
	a.DeploymentID = d.ID
	a.DeploymentStatus = &api.AllocDeploymentStatus{Healthy: healthy, Canary: canary}
	a.ID += "-new"
	return a
}

// deploymentView adds what a plan says about deployments to the view.
type deploymentView struct {
	view
	// New is "none" or "<DesiredTotal>/<DesiredCanaries> <description>".
	New     string
	Tagged  []string // placements carrying a deployment ID: "web[0]" or "web[0] canary"
	Updates []string // "<id> <status>"
}

func deploymentViewOf(p *Plan) deploymentView {
	v := deploymentView{view: viewOf(p), New: "none"}
	if d := p.Deployment; d != nil {
		st := d.TaskGroups["web"]
		v.New = fmt.Sprintf("%d/%d %s", st.DesiredTotal, st.DesiredCanaries, d.StatusDescription)
	}
	for _, a := range p.Place {
		if a.DeploymentID == "" {
			continue
		}
		s := fmt.Sprintf("web[%d]", a.Index())
		if a.DeploymentStatus != nil && a.DeploymentStatus.Canary {
			s += " canary"
		}
		v.Tagged = append(v.Tagged, s)
	}
	for _, u := range p.DeploymentUpdates {
		v.Updates = append(v.Updates, u.DeploymentID+" "+u.Status)
	}
	return v
}

func TestCompute_Deployments(t *testing.T) {
	nodes := []*structs.Node{node("n1", "dc1", "raw_exec")}
	running := structs.AllocClientStatusRunning
	healthy, unknown := ptr(true), (*bool)(nil)
	v0 := withUpdate(testJob(structs.JobTypeService, 3, "raw_exec"), 1, 0)
	v1 := nextVersion(v0, 3, true)
	old := func() []*structs.Allocation {
		return []*structs.Allocation{alloc(v0, 0, "n1", running), alloc(v0, 1, "n1", running), alloc(v0, 2, "n1", running)}
	}
	q := map[string]int{"web": 0}
	replaced := func(idx ...int) []string {
		var out []string
		for _, i := range idx {
			out = append(out, fmt.Sprintf("web[%d]@n1: %s", i, ReasonReplaced))
		}
		return out
	}

	cases := []struct {
		name string
		in   Input
		want deploymentView
	}{
		{
			name: "first version: placed at once, in a new deployment",
			in:   Input{Job: v0, Nodes: nodes},
			want: deploymentView{view: view{Place: []string{"web[0]@n1", "web[1]@n1", "web[2]@n1"}, Queued: q},
				New: "3/0 Deployment is running", Tagged: []string{"web[0]", "web[1]", "web[2]"}},
		},
		{
			name: "destructive update replaces max_parallel at a time",
			in:   Input{Job: v1, Nodes: nodes, Allocs: old()},
			want: deploymentView{view: view{Place: []string{"web[0]@n1"}, Stop: replaced(0), Queued: q},
				New: "3/0 Deployment is running", Tagged: []string{"web[0]"}},
		},
		{
			name: "max_parallel 2",
			in:   Input{Job: withUpdate(v1, 2, 0), Nodes: nodes, Allocs: old()},
			want: deploymentView{view: view{Place: []string{"web[0]@n1", "web[1]@n1"}, Stop: replaced(0, 1), Queued: q},
				New: "3/0 Deployment is running", Tagged: []string{"web[0]", "web[1]"}},
		},
		{
			name: "next batch waits while a replacement's health is unknown",
			in: Input{Job: v1, Nodes: nodes, Deployment: deployment(v1, structs.DeploymentStatusRunning, structs.DeploymentState{DesiredTotal: 3}),
				Allocs: append(old()[1:], inDeployment(alloc(v1, 0, "n1", running), deployment(v1, "", structs.DeploymentState{}), unknown, false))},
			want: deploymentView{view: view{Queued: q}, New: "none"},
		},
		{
			name: "next batch once the replacement is healthy",
			in: Input{Job: v1, Nodes: nodes, Deployment: deployment(v1, structs.DeploymentStatusRunning, structs.DeploymentState{DesiredTotal: 3}),
				Allocs: append(old()[1:], inDeployment(alloc(v1, 0, "n1", running), deployment(v1, "", structs.DeploymentState{}), healthy, false))},
			want: deploymentView{view: view{Place: []string{"web[1]@n1"}, Stop: replaced(1), Queued: q},
				New: "none", Tagged: []string{"web[1]"}},
		},
		{
			name: "a paused deployment replaces nothing",
			in: Input{Job: v1, Nodes: nodes, Deployment: deployment(v1, structs.DeploymentStatusPaused, structs.DeploymentState{DesiredTotal: 3}),
				Allocs: old()},
			want: deploymentView{view: view{Queued: q}, New: "none"},
		},
		{
			name: "a failed deployment replaces nothing",
			in: Input{Job: v1, Nodes: nodes, Deployment: deployment(v1, structs.DeploymentStatusFailed, structs.DeploymentState{DesiredTotal: 3}),
				Allocs: old()},
			want: deploymentView{view: view{Queued: q}, New: "none"},
		},
		{
			name: "canaries first, beside the old allocations",
			in:   Input{Job: withUpdate(v1, 1, 2), Nodes: nodes, Allocs: old()},
			want: deploymentView{view: view{Place: []string{"web[0]@n1", "web[1]@n1"}, Queued: q},
				New: "3/2 Deployment is running but requires manual promotion", Tagged: []string{"web[0] canary", "web[1] canary"}},
		},
		{
			name: "healthy canaries wait for promotion",
			in: Input{Job: v1, Nodes: nodes, Deployment: deployment(v1, structs.DeploymentStatusRunning, structs.DeploymentState{DesiredTotal: 3, DesiredCanaries: 1}),
				Allocs: append(old(), inDeployment(alloc(v1, 0, "n1", running), deployment(v1, "", structs.DeploymentState{}), healthy, true))},
			want: deploymentView{view: view{Queued: q}, New: "none"},
		},
		{
			name: "after promotion the canary replaces its namesake and the rollout goes on",
			in: Input{Job: v1, Nodes: nodes, Deployment: deployment(v1, structs.DeploymentStatusRunning, structs.DeploymentState{DesiredTotal: 3, DesiredCanaries: 1, Promoted: true}),
				Allocs: append(old(), inDeployment(alloc(v1, 0, "n1", running), deployment(v1, "", structs.DeploymentState{}), healthy, false))},
			want: deploymentView{view: view{Place: []string{"web[1]@n1"}, Stop: replaced(0, 1), Queued: q},
				New: "none", Tagged: []string{"web[1]"}},
		},
		{
			name: "count change only: in place, in a new deployment",
			in:   Input{Job: nextVersion(v0, 4, false), Nodes: nodes, Allocs: old()},
			want: deploymentView{view: view{Place: []string{"web[3]@n1"}, Update: []string{"web[0]", "web[1]", "web[2]"}, Queued: q},
				New: "4/0 Deployment is running", Tagged: []string{"web[3]"}},
		},
		{
			name: "a newer version cancels the running deployment",
			in: Input{Job: v1, Nodes: nodes, Deployment: deployment(v0, structs.DeploymentStatusRunning, structs.DeploymentState{DesiredTotal: 3}),
				Allocs: old()},
			want: deploymentView{view: view{Place: []string{"web[0]@n1"}, Stop: replaced(0), Queued: q},
				New: "3/0 Deployment is running", Tagged: []string{"web[0]"}, Updates: []string{"dep-v0 cancelled"}},
		},
		{
			name: "a stop cancels the running deployment",
			in: Input{Job: func() *structs.Job { j := v1.Copy(); j.Stop = true; return j }(), Nodes: nodes,
				Deployment: deployment(v1, structs.DeploymentStatusRunning, structs.DeploymentState{DesiredTotal: 3}), Allocs: old()[:1]},
			want: deploymentView{view: view{Stop: []string{"web[0]@n1: " + ReasonJobStopped}, Queued: map[string]int{}},
				New: "none", Updates: []string{"dep-v1 cancelled"}},
		},
		{
			name: "nothing changed: no deployment",
			in:   Input{Job: v0, Nodes: nodes, Allocs: old()},
			want: deploymentView{view: view{Queued: q}, New: "none"},
		},
		{
			name: "without an update block everything is replaced at once",
			in:   Input{Job: func() *structs.Job { j := withUpdate(v1, 0, 0); return j }(), Nodes: nodes, Allocs: old()},
			want: deploymentView{view: view{Place: []string{"web[0]@n1", "web[1]@n1", "web[2]@n1"}, Stop: replaced(0, 1, 2), Queued: q},
				New: "none"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.DeploymentID = "dep-new"
			tc.in.Now = time.Unix(100, 0)
			p := Compute(tc.in)
			must.Eq(t, tc.want, deploymentViewOf(p))
			if p.Deployment != nil {
				must.Eq(t, "dep-new", p.Deployment.ID)
				must.Eq(t, tc.in.Job.Version, p.Deployment.JobVersion)
				must.Eq(t, time.Unix(100, 0).Add(10*time.Minute).UTC(), p.Deployment.TaskGroups["web"].RequireProgressBy)
				for _, a := range p.Place {
					must.Eq(t, "dep-new", a.DeploymentID)
				}
			}
		})
	}
}

// A system job with canary in its update block is updated through a deployment: canary is a
// percentage of the feasible nodes (at most max_parallel), each canary replacing the old
// allocation on its node; the other nodes keep the old version until promotion, then are
// replaced max_parallel in flight at a time. Without canaries a system job keeps its
// staggered update (TestCompute_SystemStagger).
func TestCompute_SystemCanaries(t *testing.T) {
	nodes := []*structs.Node{node("n1", "dc1", "raw_exec"), node("n2", "dc1", "raw_exec"),
		node("n3", "dc1", "raw_exec"), node("n4", "dc1", "raw_exec")}
	running := structs.AllocClientStatusRunning
	healthy, unknown := ptr(true), (*bool)(nil)
	v0 := withUpdate(testJob(structs.JobTypeSystem, 1, "raw_exec"), 2, 25)
	v1 := nextVersion(v0, 1, true)
	old := func(on ...string) []*structs.Allocation {
		var out []*structs.Allocation
		for _, n := range on {
			out = append(out, alloc(v0, 0, n, running))
		}
		return out
	}
	all := []string{"n1", "n2", "n3", "n4"}
	q := map[string]int{"web": 0}
	replaced := func(on ...string) []string {
		var out []string
		for _, n := range on {
			out = append(out, fmt.Sprintf("web[0]@%s: %s", n, ReasonReplaced))
		}
		return out
	}
	dep := func(st structs.DeploymentState) *structs.Deployment {
		return deployment(v1, structs.DeploymentStatusRunning, st)
	}
	newOn := func(n string, health *bool, canary bool) *structs.Allocation {
		a := inDeployment(alloc(v1, 0, n, running), dep(structs.DeploymentState{}), health, canary)
		return a
	}

	cases := []struct {
		name string
		in   Input
		want deploymentView
	}{
		{
			name: "first version: one per node, in a deployment without canaries",
			in:   Input{Job: v0, Nodes: nodes},
			want: deploymentView{view: view{Place: []string{"web[0]@n1", "web[0]@n2", "web[0]@n3", "web[0]@n4"}, Queued: q},
				New: "4/0 Deployment is running", Tagged: []string{"web[0]", "web[0]", "web[0]", "web[0]"}},
		},
		{
			name: "update: 25% of 4 nodes is one canary, replacing the old allocation on its node",
			in:   Input{Job: v1, Nodes: nodes, Allocs: old(all...)},
			want: deploymentView{view: view{Place: []string{"web[0]@n1"}, Stop: replaced("n1"), Queued: q},
				New: "4/1 Deployment is running but requires manual promotion", Tagged: []string{"web[0] canary"}},
		},
		{
			name: "canaries are at most max_parallel",
			in:   Input{Job: withUpdate(v1, 2, 100), Nodes: nodes, Allocs: old(all...)},
			want: deploymentView{view: view{Place: []string{"web[0]@n1", "web[0]@n2"}, Stop: replaced("n1", "n2"), Queued: q},
				New: "4/2 Deployment is running but requires manual promotion", Tagged: []string{"web[0] canary", "web[0] canary"}},
		},
		{
			name: "a placed canary waits for promotion; the other nodes keep the old version",
			in: Input{Job: v1, Nodes: nodes, Deployment: dep(structs.DeploymentState{DesiredTotal: 4, DesiredCanaries: 1}),
				Allocs: append(old("n2", "n3", "n4"), newOn("n1", healthy, true))},
			want: deploymentView{view: view{Queued: q}, New: "none"},
		},
		{
			name: "after promotion the rest is replaced max_parallel at a time",
			in: Input{Job: v1, Nodes: nodes, Deployment: dep(structs.DeploymentState{DesiredTotal: 4, DesiredCanaries: 1, Promoted: true}),
				Allocs: append(old("n2", "n3", "n4"), newOn("n1", healthy, false))},
			want: deploymentView{view: view{Place: []string{"web[0]@n2", "web[0]@n3"}, Stop: replaced("n2", "n3"), Queued: q},
				New: "none", Tagged: []string{"web[0]", "web[0]"}},
		},
		{
			name: "replacements in flight hold back the next",
			in: Input{Job: v1, Nodes: nodes, Deployment: dep(structs.DeploymentState{DesiredTotal: 4, DesiredCanaries: 1, Promoted: true}),
				Allocs: append(old("n3", "n4"), newOn("n1", healthy, false), newOn("n2", unknown, false))},
			want: deploymentView{view: view{Place: []string{"web[0]@n3"}, Stop: replaced("n3"), Queued: q},
				New: "none", Tagged: []string{"web[0]"}},
		},
		{
			name: "a failed deployment replaces nothing and keeps its canary",
			in: Input{Job: v1, Nodes: nodes, Deployment: deployment(v1, structs.DeploymentStatusFailed, structs.DeploymentState{DesiredTotal: 4, DesiredCanaries: 1}),
				Allocs: append(old("n2", "n3", "n4"), newOn("n1", healthy, true))},
			want: deploymentView{view: view{Queued: q}, New: "none"},
		},
		{
			name: "a new node gets the current version at once",
			in: Input{Job: v1, Nodes: nodes, Deployment: dep(structs.DeploymentState{DesiredTotal: 4, DesiredCanaries: 1}),
				Allocs: append(old("n2", "n3"), newOn("n1", healthy, true))},
			want: deploymentView{view: view{Place: []string{"web[0]@n4"}, Queued: q}, New: "none", Tagged: []string{"web[0]"}},
		},
		{
			name: "without a deployment (a plan's dry run) everything is replaced at once",
			in:   Input{Job: v1, Nodes: nodes, Allocs: old(all...)},
			want: deploymentView{view: view{Place: []string{"web[0]@n1", "web[0]@n2", "web[0]@n3", "web[0]@n4"},
				Stop: replaced(all...), Queued: q}, New: "none"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name != "without a deployment (a plan's dry run) everything is replaced at once" {
				tc.in.DeploymentID = "dep-new"
			}
			tc.in.Now = time.Unix(100, 0)
			must.Eq(t, tc.want, deploymentViewOf(Compute(tc.in)))
		})
	}
}

func TestSystemCanaries(t *testing.T) {
	for _, tc := range []struct{ percent, maxParallel, feasible, destructive, want int }{
		{25, 2, 4, 4, 1}, {10, 5, 3, 3, 1}, {50, 5, 10, 10, 5}, {50, 2, 10, 10, 2}, {100, 9, 3, 2, 2}, {30, 1, 0, 0, 0},
	} {
		must.Eq(t, tc.want, systemCanaries(tc.percent, tc.maxParallel, tc.feasible, tc.destructive), must.Sprintf("%+v", tc))
	}
}
