package command

import (
	"fmt"
	"maps"
	"slices"
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
	return m.monitorDeployment(client, eval.DeploymentID, verbose)
}

// monitorDeployment waits on the deployment with blocking queries, printing each change of
// its status or of its groups' counts, then the deployment as "deployment status" shows it.
func (m *Meta) monitorDeployment(client *api.Client, deploymentID string, verbose bool) int {
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
			return 1
		}
		return 0
	}
}

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
