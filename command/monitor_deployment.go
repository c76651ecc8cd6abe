package command

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
)

// Deployment statuses after which nothing more happens to a deployment.
var deploymentDone = map[string]bool{"successful": true, "failed": true, "cancelled": true}

// monitorRun follows what job run started: the evaluation, then the deployment it started
// or placed into, until the deployment ends. A deployment that does not succeed exits 1, as
// upstream's job run does, so that a task that keeps failing never looks finished to a
// deploy script. Jobs without deployments (batch, system without update) end with their
// evaluation.
func (m *Meta) monitorRun(client *api.Client, evalID string, verbose bool) int {
	id := shortID
	if verbose {
		id = func(s string) string { return s }
	}
	code, eval := m.followEval(client, evalID, id)
	if code != 0 || eval == nil || eval.Status != "complete" || eval.DeploymentID == "" {
		return code
	}
	return m.monitorDeployment(client, eval.DeploymentID, verbose, true)
}

// monitorDeployment waits on the deployment with blocking queries, printing each change of
// its status or of its groups' counts, then the deployment as "deployment status" shows it.
// A deployment that failed and auto-reverted the job is said to have done so, and the
// deployment of the reverted version is followed too when followRollback is set; the run
// still exits 1, since the version submitted is not the one running.
func (m *Meta) monitorDeployment(client *api.Client, deploymentID string, verbose, followRollback bool) int {
	id := shortID
	if verbose {
		id = func(s string) string { return s }
	}
	now := func() string { return formatTime(time.Now()) }
	m.Ui.Output(fmt.Sprintf("==> %s: Monitoring deployment %q", now(), id(deploymentID)))
	var index uint64
	var last string
	for {
		d, meta, err := client.Deployments().Info(deploymentID, &api.QueryOptions{WaitIndex: index, WaitTime: 10 * time.Second})
		if err != nil {
			return m.fail("Error reading deployment: %v", err)
		}
		index = meta.LastIndex
		if line := deploymentProgress(d); line != last {
			m.Ui.Output(fmt.Sprintf("    %s: %s", now(), line))
			last = line
		}
		if !deploymentDone[d.Status] {
			continue
		}
		mark := "✓"
		if d.Status != "successful" {
			mark = "!"
		}
		m.Ui.Output(fmt.Sprintf("  %s Deployment %q %s\n", mark, id(d.ID), d.Status))
		m.Ui.Output(indent(formatDeployment(d), "    "))
		if verbose {
			allocs, _, err := client.Deployments().Allocations(d.ID, nil)
			if err == nil && len(allocs) > 0 {
				m.Ui.Output("\n    Allocations\n" + indent(formatAllocs(allocs, time.Now()), "    "))
			}
		}
		if d.Status != "successful" {
			if version, ok := rollbackVersion(d); ok {
				m.Ui.Output(fmt.Sprintf("\n==> %s: Deployment %q failed and auto_revert rolled job %q back to version %d",
					now(), id(d.ID), d.JobID, version))
				if followRollback {
					m.followRollback(client, d, version, verbose)
				}
			}
			return 1
		}
		return 0
	}
}

var rollbackDesc = regexp.MustCompile(` - rolling back to job version (\d+)$`)

// rollbackVersion is the version a failed deployment reverted its job to, from the status
// description the deployment watcher writes.
func rollbackVersion(d *api.Deployment) (uint64, bool) {
	m := rollbackDesc.FindStringSubmatch(d.StatusDescription)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseUint(m[1], 10, 64)
	return v, err == nil
}

// followRollback waits for the deployment the revert started (the job's latest one, newer
// than the failed one) and follows it. The revert is registered by the deployment watcher
// after it marks the deployment failed, so the new deployment may take a moment to appear.
func (m *Meta) followRollback(client *api.Client, failed *api.Deployment, version uint64, verbose bool) {
	q := &api.QueryOptions{Namespace: failed.Namespace, WaitTime: 5 * time.Second}
	deadline := time.Now().Add(rollbackWait)
	for time.Now().Before(deadline) {
		d, meta, err := client.Jobs().LatestDeployment(failed.JobID, q)
		if err != nil {
			m.Ui.Error(fmt.Sprintf("Error reading the rollback's deployment: %v", err))
			return
		}
		if d != nil && d.ID != failed.ID && d.CreateIndex > failed.CreateIndex {
			m.monitorDeployment(client, d.ID, verbose, false)
			return
		}
		if meta != nil {
			q.WaitIndex = meta.LastIndex
		}
	}
	m.Ui.Output(fmt.Sprintf("    No deployment of the reverted version %d appeared; see \"nomad job status %s\"", version, failed.JobID))
}

// rollbackWait bounds how long a run waits for the reverted version's deployment to appear.
const rollbackWait = 30 * time.Second

// deploymentProgress is one line summing up a deployment: its status, description and each
// group's healthy and unhealthy counts.
func deploymentProgress(d *api.Deployment) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Deployment status %q", d.Status)
	if d.StatusDescription != "" {
		fmt.Fprintf(&b, " (%s)", d.StatusDescription)
	}
	for _, name := range slices.Sorted(maps.Keys(d.TaskGroups)) {
		st := d.TaskGroups[name]
		fmt.Fprintf(&b, "; %s: %d desired, %d placed, %d healthy, %d unhealthy",
			name, st.DesiredTotal, st.PlacedAllocs, st.HealthyAllocs, st.UnhealthyAllocs)
	}
	return b.String()
}

func indent(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "\n")
}
