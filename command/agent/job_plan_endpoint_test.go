package agent

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/jobspec"
	"github.com/shoenig/test/must"
)

func matrixJobPlanEndpoints() []matrixEndpoint {
	planBody := mustJSON(&api.JobPlanRequest{Job: testJob("web"), Diff: true})
	validateBody := mustJSON(&api.JobValidateRequest{Job: testJob("web")})
	return []matrixEndpoint{
		// plan-job, which submit-job implies.
		{name: "job plan", method: "PUT", path: "/v1/job/web/plan", body: planBody, allow: allowSubmit},
		{name: "job validate", method: "PUT", path: "/v1/validate/job", body: validateBody, allow: allowReadJob},
	}
}

func TestACLMatrix_JobPlan(t *testing.T) { runACLMatrix(t, matrixJobPlanEndpoints(), matrixRows) }

// TestJobPlan_ThroughOfficialClient plans a job on an agent with a client: new, unchanged,
// scaled up, changed destructively; and checks that planning wrote nothing.
func TestJobPlan_ThroughOfficialClient(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	jobs := c.Jobs()
	store := ta.Server().State()

	job := testJob("web")
	before := store.LatestIndex()
	plan, _, err := jobs.Plan(job, true, nil)
	must.NoError(t, err)
	must.Eq(t, before, store.LatestIndex(), must.Sprint("a plan writes nothing"))
	must.Zero(t, plan.JobModifyIndex)
	must.Eq(t, "Added", plan.Diff.Type)
	must.Eq(t, uint64(1), plan.Annotations.DesiredTGUpdates["web"].Place)
	must.Eq(t, map[string]uint64{"create": 1}, plan.Diff.TaskGroups[0].Updates)
	must.SliceEmpty(t, plan.CreatedEvals)

	resp, _, err := jobs.Register(job, nil)
	must.NoError(t, err)
	allocsIn(t, c, "web", map[string]int{"running": 1})
	stored, _, err := jobs.Info("web", nil)
	must.NoError(t, err)

	cases := []struct {
		name   string
		mutate func(j *api.Job)
		diff   string
		want   api.DesiredUpdates
	}{
		{name: "unchanged", mutate: func(*api.Job) {}, diff: "None", want: api.DesiredUpdates{Ignore: 1}},
		{name: "scaled up", mutate: func(j *api.Job) { j.TaskGroups[0].Count = new(3) }, diff: "Edited",
			want: api.DesiredUpdates{InPlaceUpdate: 1, Place: 2}},
		{name: "changed task", mutate: func(j *api.Job) { j.TaskGroups[0].Tasks[0].Config["args"] = []string{"601"} },
			diff: "Edited", want: api.DesiredUpdates{DestructiveUpdate: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := testJob("web")
			tc.mutate(j)
			plan, wm, err := jobs.Plan(j, true, nil)
			must.NoError(t, err)
			must.Positive(t, wm.LastIndex)
			must.Eq(t, *stored.JobModifyIndex, plan.JobModifyIndex)
			must.Eq(t, tc.diff, plan.Diff.Type)
			must.Eq(t, tc.want, *plan.Annotations.DesiredTGUpdates["web"])

			plan, _, err = jobs.Plan(j, false, nil)
			must.NoError(t, err)
			must.Nil(t, plan.Diff)
		})
	}

	// More than the node can hold: the rest would wait in a blocked evaluation.
	big := testJob("big")
	big.TaskGroups[0].Tasks[0].Resources.MemoryMB = new(1 << 30)
	plan, _, err = jobs.Plan(big, false, nil)
	must.NoError(t, err)
	must.SliceLen(t, 1, plan.CreatedEvals)
	must.Eq(t, "blocked", plan.CreatedEvals[0].Status)
	must.MapContainsKey(t, plan.FailedTGAllocs, "web")

	// The registration's own evaluation is still the job's newest: planning created none.
	evals, _, err := jobs.Evaluations("web", nil)
	must.NoError(t, err)
	for _, e := range evals {
		must.Eq(t, resp.EvalID, e.ID)
	}

	_, _, err = jobs.Plan(&api.Job{ID: new("other"), TaskGroups: []*api.TaskGroup{}}, false, nil)
	must.ErrorContains(t, err, "400")
}

func TestJobValidate_ThroughOfficialClient(t *testing.T) {
	ta := NewTestAgent(t, nil)
	jobs := ta.Client("").Jobs()

	resp, _, err := jobs.Validate(testJob("web"), nil)
	must.NoError(t, err)
	must.SliceEmpty(t, resp.ValidationErrors)
	must.Eq(t, "", resp.Error)

	bad := testJob("web")
	bad.ID = nil
	bad.TaskGroups[0].Tasks[0].Name = "../x"
	resp, _, err = jobs.Validate(bad, nil)
	must.NoError(t, err)
	must.SliceLen(t, 2, resp.ValidationErrors)
	must.StrContains(t, resp.Error, "Missing job ID")
}

// Upstream's plan annotations count the placements the job asks for whether or not they
// would fit (failures are reported apart, in FailedTGAllocs), periodic and parameterized
// parents included; a system job counts only the nodes it is feasible on. Deploy pipelines
// branch on `job plan`'s exit code, which follows these counts.
func TestJobPlan_AnnotationsCountDesiredPlacements(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	jobs := ta.Client("").Jobs()

	periodic := testJob("nightly")
	periodic.Type = new("batch")
	periodic.Periodic = &api.PeriodicConfig{Spec: new("0 3 * * *")}
	param := testJob("render")
	param.Type = new("batch")
	param.ParameterizedJob = &api.ParameterizedJobConfig{}
	tooBig := testJob("huge")
	tooBig.TaskGroups[0].Count = new(2)
	tooBig.TaskGroups[0].Tasks[0].Resources.MemoryMB = new(1 << 30)
	noDriver := testJob("sys")
	noDriver.Type = new("system")
	noDriver.TaskGroups[0].Tasks[0].Driver = "qemu"
	system := testJob("sys")
	system.Type = new("system")

	// A system job's counts depend on the nodes: wait for the agent's own to be ready.
	waitFor(t, 30*time.Second, func() bool {
		nodes, _, err := ta.Client("").Nodes().List(nil)
		return err == nil && len(nodes) == 1 && nodes[0].Status == "ready"
	})

	cases := []struct {
		name       string
		job        *api.Job
		wantPlace  uint64
		wantFailed bool
	}{
		{name: "new periodic job", job: periodic, wantPlace: 1},
		{name: "new parameterized job", job: param, wantPlace: 1},
		{name: "infeasible service job", job: tooBig, wantPlace: 2, wantFailed: true},
		{name: "system job whose driver no node has", job: noDriver, wantPlace: 0},
		{name: "system job the node can run", job: system, wantPlace: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan, _, err := jobs.Plan(tc.job, true, nil)
			must.NoError(t, err)
			must.Eq(t, tc.wantPlace, plan.Annotations.DesiredTGUpdates["web"].Place)
			_, failed := plan.FailedTGAllocs["web"]
			must.Eq(t, tc.wantFailed, failed)
		})
	}
}

// The corpus job files, planned new, then unchanged once registered: what `job plan`
// reports (and so its exit code) for each everyday shape. The docker file is left out: what
// it plans depends on whether this machine's agent has a Docker Engine.
func TestJobPlan_CorpusAnnotations(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	waitFor(t, 30*time.Second, func() bool {
		nodes, _, err := c.Nodes().List(nil)
		return err == nil && len(nodes) == 1 && nodes[0].Status == "ready"
	})
	dir := filepath.Join("..", "..", "jobspec", "testdata", "corpus")
	cases := []struct {
		file          string
		wantPlace     map[string]uint64
		wantUnchanged map[string]uint64 // Place once the job is registered; nil: not registered
	}{
		{file: "periodic", wantPlace: map[string]uint64{"g": 1}},
		{file: "parameterized", wantPlace: map[string]uint64{"g": 1}},
		{file: "system", wantPlace: map[string]uint64{"g": 1}, wantUnchanged: map[string]uint64{"g": 0}},
		{file: "sysbatch", wantPlace: map[string]uint64{"g": 1}},
		{file: "templates-from-file", wantPlace: map[string]uint64{"app": 1}},
		{file: "placement", wantPlace: map[string]uint64{"solo": 1}, wantUnchanged: map[string]uint64{"solo": 0}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(dir, tc.file+".nomad.hcl")
			src, err := os.ReadFile(path)
			must.NoError(t, err)
			job, err := jobspec.ParseLocal(path, src, nil, dir)
			must.NoError(t, err)
			plan, _, err := c.Jobs().Plan(job, true, nil)
			must.NoError(t, err)
			for group, want := range tc.wantPlace {
				must.Eq(t, want, plan.Annotations.DesiredTGUpdates[group].Place, must.Sprintf("group %s", group))
			}
			if tc.wantUnchanged == nil {
				return
			}
			_, _, err = c.Jobs().Register(job, nil)
			must.NoError(t, err)
			// Placed is what the second plan compares with; whether the short task is running,
			// restarting or waiting for its restart delay at this moment does not matter.
			waitFor(t, 20*time.Second, func() bool {
				allocs, _, err := c.Jobs().Allocations(*job.ID, false, nil)
				return err == nil && len(allocs) == 1
			})
			plan, _, err = c.Jobs().Plan(job, true, nil)
			must.NoError(t, err)
			must.Eq(t, "None", plan.Diff.Type)
			for group, want := range tc.wantUnchanged {
				must.Eq(t, want, plan.Annotations.DesiredTGUpdates[group].Place, must.Sprintf("group %s", group))
			}
		})
	}
}

// A field accepted and not acted on is never silent: register, plan and validate warn.
func TestJobWarnings_RegisterPlanValidate(t *testing.T) {
	ta := NewTestAgent(t, nil)
	jobs := ta.Client("").Jobs()
	job := testJob("tmpl")
	job.TaskGroups[0].Tasks[0].Consul = &api.Consul{}
	const want = `group "web": task "sleep": consul: there is no Consul integration`

	plan, _, err := jobs.Plan(job, false, nil)
	must.NoError(t, err)
	must.StrContains(t, plan.Warnings, want)
	valid, _, err := jobs.Validate(job, nil)
	must.NoError(t, err)
	must.StrContains(t, valid.Warnings, want)
	reg, _, err := jobs.Register(job, nil)
	must.NoError(t, err)
	must.StrContains(t, reg.Warnings, want)

	reg, _, err = jobs.Register(testJob("plain"), nil)
	must.NoError(t, err)
	must.Eq(t, "", reg.Warnings)

	// A service without provider is Consul's, as upstream: with no Consul here the register
	// answer says it is registered nowhere.
	svc := testJob("svc")
	svc.TaskGroups[0].Services = []*api.Service{{Name: "web"}}
	reg, _, err = jobs.Register(svc, nil)
	must.NoError(t, err)
	must.StrContains(t, reg.Warnings, `group "web": service "web": provider "consul": there is no Consul integration, so it is registered nowhere`)
}

// A client's host_volume blocks are advertised on its node, so the scheduler can place a
// group that asks for one; a volume the node lacks fails placement naming it.
func TestHostVolumes_AdvertisedAndPlaced(t *testing.T) {
	path := t.TempDir()
	ta := NewTestClientAgent(t, func(c *Config) {
		c.Client.HostVolumes = []*HostVolumeConfig{{Name: "data", Path: path}}
	})
	c := ta.Client("")
	var nodeID string
	waitFor(t, 30*time.Second, func() bool {
		nodes, _, err := c.Nodes().List(nil)
		if err != nil || len(nodes) != 1 || nodes[0].Status != "ready" {
			return false
		}
		nodeID = nodes[0].ID
		return true
	})
	node, _, err := c.Nodes().Info(nodeID, nil)
	must.NoError(t, err)
	must.NotNil(t, node.HostVolumes["data"])
	must.Eq(t, path, node.HostVolumes["data"].Path)

	for _, tc := range []struct {
		source    string
		wantPlace uint64
	}{{"data", 1}, {"missing", 1}} {
		job := testJob("vol-" + tc.source)
		job.TaskGroups[0].Volumes = map[string]*api.VolumeRequest{"v": {Name: "v", Type: "host", Source: tc.source}}
		plan, _, err := c.Jobs().Plan(job, false, nil)
		must.NoError(t, err)
		must.Eq(t, tc.wantPlace, plan.Annotations.DesiredTGUpdates["web"].Place)
		failed := plan.FailedTGAllocs["web"]
		if tc.source == "data" {
			must.Nil(t, failed)
		} else {
			must.NotNil(t, failed)
			must.Positive(t, failed.ConstraintFiltered["missing compatible host volumes"])
		}
	}
}

// A task that asks for a device: no client here fingerprints one, so plan and register both
// fail placement naming the missing devices, and nothing lands on the node.
func TestDevices_FailPlacementNamingThem(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	waitFor(t, 30*time.Second, func() bool {
		nodes, _, err := c.Nodes().List(nil)
		return err == nil && len(nodes) == 1 && nodes[0].Status == "ready"
	})
	job := testJob("gpu")
	job.TaskGroups[0].Tasks[0].Resources.Devices = []*api.RequestedDevice{{Name: "nvidia/gpu", Count: new(uint64(1))}}

	plan, _, err := c.Jobs().Plan(job, false, nil)
	must.NoError(t, err)
	must.NotNil(t, plan.FailedTGAllocs["web"])
	must.Positive(t, plan.FailedTGAllocs["web"].ConstraintFiltered["missing devices"])

	reg, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	var eval *api.Evaluation
	waitFor(t, 20*time.Second, func() bool {
		eval, _, err = c.Evaluations().Info(reg.EvalID, nil)
		return err == nil && eval.Status == "complete"
	})
	must.NotNil(t, eval.FailedTGAllocs["web"])
	must.Positive(t, eval.FailedTGAllocs["web"].ConstraintFiltered["missing devices"])
	allocs, _, err := c.Jobs().Allocations("gpu", true, nil)
	must.NoError(t, err)
	must.SliceEmpty(t, allocs)
}
