package agent

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// rollJob is a service job of count 3 on the mock driver whose tasks run until stopped (or
// fail after runFor with exitCode), updated one allocation at a time.
func rollJob(id, runFor string, exitCode int, autoRevert bool) *api.Job {
	job := api.NewServiceJob(id, id, "global", 50)
	job.Datacenters = []string{"dc1"}
	task := api.NewTask("t", "mock_driver").SetConfig("run_for", runFor).SetConfig("exit_code", exitCode)
	task.Resources = &api.Resources{CPU: new(20), MemoryMB: new(16)}
	tg := api.NewTaskGroup("web", 3).AddTask(task)
	tg.RestartPolicy = &api.RestartPolicy{Attempts: new(0), Mode: new("fail")}
	tg.ReschedulePolicy = &api.ReschedulePolicy{Attempts: new(0), Unlimited: new(false)}
	job.AddTaskGroup(tg)
	job.Update = &api.UpdateStrategy{MaxParallel: new(1), MinHealthyTime: new(200 * time.Millisecond),
		HealthyDeadline: new(5 * time.Second), ProgressDeadline: new(30 * time.Second), AutoRevert: new(autoRevert)}
	return job
}

// deploymentOf waits for the deployment of the job's version to reach status.
func deploymentOf(t *testing.T, c *api.Client, jobID string, version uint64, status string) *api.Deployment {
	t.Helper()
	var found *api.Deployment
	eventually(t, 30*time.Second, fmt.Sprintf("deployment of %s v%d to be %s", jobID, version, status), func() (bool, string) {
		list, _, err := c.Jobs().Deployments(jobID, false, nil)
		if err != nil {
			return false, err.Error()
		}
		seen := ""
		for _, d := range list {
			seen += fmt.Sprintf("v%d:%s(%s) ", d.JobVersion, d.Status, d.StatusDescription)
			if d.JobVersion == version && d.Status == status {
				found = d
				return true, seen
			}
		}
		return false, seen
	})
	return found
}

func stableVersion(t *testing.T, c *api.Client, jobID string, version uint64) {
	t.Helper()
	eventually(t, 10*time.Second, fmt.Sprintf("%s v%d to be stable", jobID, version), func() (bool, string) {
		versions, _, _, err := c.Jobs().Versions(jobID, false, nil)
		if err != nil {
			return false, err.Error()
		}
		for _, v := range versions {
			if *v.Version == version {
				return *v.Stable, fmt.Sprint(*v.Stable)
			}
		}
		return false, "version not found"
	})
}

// TestDeployments_RollingUpdateEndToEnd: a destructive update of count 3 with max_parallel 1
// replaces one allocation per plan, each after the previous one turned healthy, and ends
// with the deployment successful and the version stable.
func TestDeployments_RollingUpdateEndToEnd(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")

	_, _, err := c.Jobs().Register(rollJob("roll", "10m", 0, false), nil)
	must.NoError(t, err)
	first := deploymentOf(t, c, "roll", 0, "successful")
	must.Eq(t, 3, first.TaskGroups["web"].HealthyAllocs)
	must.Eq(t, "Deployment completed successfully", first.StatusDescription)
	stableVersion(t, c, "roll", 0)

	// A new task config: every allocation must be replaced.
	_, _, err = c.Jobs().Register(rollJob("roll", "11m", 0, false), nil)
	must.NoError(t, err)
	second := deploymentOf(t, c, "roll", 1, "successful")
	st := second.TaskGroups["web"]
	must.Eq(t, 3, st.DesiredTotal)
	must.Eq(t, 3, st.PlacedAllocs)
	must.Eq(t, 3, st.HealthyAllocs)
	stableVersion(t, c, "roll", 1)

	allocs, _, err := c.Deployments().Allocations(second.ID, nil)
	must.NoError(t, err)
	must.Len(t, 3, allocs)
	var created []uint64
	for _, a := range allocs {
		must.Eq(t, uint64(1), a.JobVersion)
		must.Eq(t, "running", a.ClientStatus)
		must.True(t, *a.DeploymentStatus.Healthy)
		created = append(created, a.CreateIndex)
	}
	sort.Slice(created, func(i, j int) bool { return created[i] < created[j] })
	must.True(t, created[0] < created[1] && created[1] < created[2],
		must.Sprintf("max_parallel 1 places each replacement in its own plan: create indexes %v", created))
	all := allocsIn(t, c, "roll", map[string]int{"running": 3, "complete": 3})
	for _, a := range all {
		if a.JobVersion == 0 {
			must.Eq(t, "stop", a.DesiredStatus)
		}
	}

	// A count change updates the running allocations in place: they join the new
	// deployment and report their health again, nothing is restarted.
	_, _, err = c.Jobs().Scale("roll", "web", new(4), "more", false, nil, nil)
	must.NoError(t, err)
	third := deploymentOf(t, c, "roll", 2, "successful")
	must.Eq(t, 4, third.TaskGroups["web"].HealthyAllocs)
	scaled, _, err := c.Deployments().Allocations(third.ID, nil)
	must.NoError(t, err)
	must.Len(t, 4, scaled)
	kept := 0
	for _, a := range scaled {
		for _, b := range allocs {
			if a.ID == b.ID {
				kept++
			}
		}
	}
	must.Eq(t, 3, kept, must.Sprint("the three running allocations were updated in place"))
	allocsIn(t, c, "roll", map[string]int{"running": 4, "complete": 3})
}

// TestDeployments_AutoRevertEndToEnd: a version whose tasks fail makes its deployment fail
// on unhealthy allocations; auto_revert registers the last stable version again, which
// deploys successfully.
func TestDeployments_AutoRevertEndToEnd(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")

	_, _, err := c.Jobs().Register(rollJob("rev", "10m", 0, true), nil)
	must.NoError(t, err)
	deploymentOf(t, c, "rev", 0, "successful")
	stableVersion(t, c, "rev", 0)

	_, _, err = c.Jobs().Register(rollJob("rev", "20ms", 1, true), nil)
	must.NoError(t, err)
	failed := deploymentOf(t, c, "rev", 1, "failed")
	must.Eq(t, "Failed due to unhealthy allocations - rolling back to job version 0", failed.StatusDescription)
	must.Eq(t, 1, failed.TaskGroups["web"].UnhealthyAllocs, must.Sprint("max_parallel 1: one bad allocation was tried"))

	reverted := deploymentOf(t, c, "rev", 2, "successful")
	must.Eq(t, 3, reverted.TaskGroups["web"].HealthyAllocs)
	stableVersion(t, c, "rev", 2)
	job, _, err := c.Jobs().Info("rev", nil)
	must.NoError(t, err)
	must.Eq(t, uint64(2), *job.Version)
	must.Eq(t, "10m", job.TaskGroups[0].Tasks[0].Config["run_for"])
}

// TestDeployments_CanaryEndToEnd: with canary = 1 the new version's canary runs beside the
// three old allocations until promoted; the promotion lets the rollout replace the rest.
func TestDeployments_CanaryEndToEnd(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")

	_, _, err := c.Jobs().Register(rollJob("can", "10m", 0, false), nil)
	must.NoError(t, err)
	deploymentOf(t, c, "can", 0, "successful")

	v1 := rollJob("can", "11m", 0, false)
	v1.Update.Canary = new(1)
	_, _, err = c.Jobs().Register(v1, nil)
	must.NoError(t, err)
	var d *api.Deployment
	eventually(t, 20*time.Second, "the canary to be healthy", func() (bool, string) {
		d, _, err = c.Jobs().LatestDeployment("can", nil)
		if err != nil || d == nil || d.JobVersion != 1 {
			return false, fmt.Sprint(err)
		}
		st := d.TaskGroups["web"]
		return st.HealthyAllocs == 1 && len(st.PlacedCanaries) == 1, fmt.Sprintf("%+v", st)
	})
	must.Eq(t, "Deployment is running but requires manual promotion", d.StatusDescription)
	must.Eq(t, 1, d.TaskGroups["web"].DesiredCanaries)
	// The old allocations all run beside the canary.
	allocsIn(t, c, "can", map[string]int{"running": 4})

	_, _, err = c.Deployments().PromoteAll(d.ID, nil)
	must.NoError(t, err)
	done := deploymentOf(t, c, "can", 1, "successful")
	must.True(t, done.TaskGroups["web"].Promoted)
	must.Eq(t, 3, done.TaskGroups["web"].HealthyAllocs)
	stableVersion(t, c, "can", 1)
	final := allocsIn(t, c, "can", map[string]int{"running": 3, "complete": 3})
	for _, a := range final {
		if a.ClientStatus == "running" {
			must.Eq(t, uint64(1), a.JobVersion)
		}
	}
}
