package agent

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// TestDeployments_SystemCanaryEndToEnd: a system job with canary = 50 on the agent's one
// node is deployed; its update places one canary (50% of one node, rounded up), which
// replaces the old allocation on the node and waits for promotion; once promoted the
// deployment is successful and the version stable.
func TestDeployments_SystemCanaryEndToEnd(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")

	sysJob := func(runFor string) *api.Job {
		job := rollJob("sys", runFor, 0, false)
		job.Type = new("system")
		job.TaskGroups[0].Count = nil
		job.Update.Canary = new(50)
		return job
	}
	_, _, err := c.Jobs().Register(sysJob("10m"), nil)
	must.NoError(t, err)
	first := deploymentOf(t, c, "sys", 0, "successful")
	must.Eq(t, 1, first.TaskGroups["web"].DesiredTotal)
	must.Eq(t, 0, first.TaskGroups["web"].DesiredCanaries)

	_, _, err = c.Jobs().Register(sysJob("11m"), nil)
	must.NoError(t, err)
	var d *api.Deployment
	eventually(t, 20*time.Second, "the canary to be healthy", func() (bool, string) {
		d, _, err = c.Jobs().LatestDeployment("sys", nil)
		if err != nil || d == nil || d.JobVersion != 1 {
			return false, fmt.Sprint(err)
		}
		st := d.TaskGroups["web"]
		return st.HealthyAllocs == 1 && len(st.PlacedCanaries) == 1, fmt.Sprintf("%+v", st)
	})
	must.Eq(t, "Deployment is running but requires manual promotion", d.StatusDescription)
	must.Eq(t, 1, d.TaskGroups["web"].DesiredCanaries)
	must.Eq(t, 1, d.TaskGroups["web"].DesiredTotal)
	// One allocation per node: the canary took the old one's place.
	allocsIn(t, c, "sys", map[string]int{"running": 1, "complete": 1})

	_, _, err = c.Deployments().PromoteAll(d.ID, nil)
	must.NoError(t, err)
	done := deploymentOf(t, c, "sys", 1, "successful")
	must.True(t, done.TaskGroups["web"].Promoted)
	stableVersion(t, c, "sys", 1)
	final := allocsIn(t, c, "sys", map[string]int{"running": 1, "complete": 1})
	for _, a := range final {
		if a.ClientStatus == "running" {
			must.Eq(t, uint64(1), a.JobVersion)
		}
	}
}
