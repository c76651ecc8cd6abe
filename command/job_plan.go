package command

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/hashicorp/nomad/api"
)

// JobPlanCommand is a dry run of `job run`: what the scheduler would do, nothing submitted.
type JobPlanCommand struct {
	Meta

	// Stdin is read when the file argument is "-"; nil means os.Stdin.
	Stdin io.Reader
}

func (c *JobPlanCommand) Help() string {
	return helpText(`
Usage: nomad job plan [options] <path>

  Ask the servers what submitting a job file would do, without submitting it:
  the difference from the job that runs, and what the scheduler would place,
  update and stop. The job modify index it prints makes a later
  'nomad job run -check-index' refuse to submit if the job changed meanwhile.

  Exit codes: 0 when no allocation would be created or destroyed, 1 when
  some would, 255 on error.
`, `
Plan Options:

  -diff=false
    Leave out the difference from the running job.

  -json
    Parse the file as JSON.

  -var 'key=value'
    Value for a variable declared in the job file. Repeatable.
`)
}

func (c *JobPlanCommand) Synopsis() string { return "Dry-run a job update" }

func (c *JobPlanCommand) Run(args []string) int {
	diff, asJSON := true, false
	vars := varFlag{}
	fs := c.FlagSet("job plan")
	fs.BoolVar(&diff, "diff", true, "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.Var(vars, "var", "")
	pos, code, ok := c.parseArgs(fs, args, "<path>")
	if !ok {
		if code != 0 {
			return 255 // upstream's code for an error, 1 meaning "allocations change"
		}
		return 0
	}
	job, err := loadJob(pos[0], asJSON, vars, c.Stdin)
	if err != nil {
		c.fail("Error getting job struct: %v", err)
		return 255
	}
	if str(job.Namespace) == "" {
		if ns := c.Namespace(); ns != "" {
			job.Namespace = &ns
		}
	}
	client, ok := c.client()
	if !ok {
		return 255
	}
	var wopts *api.WriteOptions
	if ns := str(job.Namespace); ns != "" {
		wopts = &api.WriteOptions{Namespace: ns}
	}
	resp, _, err := client.Jobs().PlanOpts(job, &api.PlanOptions{Diff: diff}, wopts)
	if err != nil {
		c.fail("Error during plan: %v", err)
		return 255
	}
	if resp.Diff != nil {
		c.Ui.Output(formatJobDiff(resp.Diff) + "\n")
	}
	if w := strings.TrimSpace(resp.Warnings); w != "" {
		c.Ui.Warn("Job Warnings:\n" + w + "\n")
	}
	c.Ui.Output(planSummary(resp))
	c.Ui.Output(fmt.Sprintf("Job Modify Index: %d\n"+
		"To submit the job with version verification run:\n\n"+
		"nomad job run -check-index %d %s\n\n"+
		"When running the job with the check-index flag, the job will only be run if the\n"+
		"job modify index given matches the server-side version. If the index has\n"+
		"changed, another user has modified the job and the plan's results are\n"+
		"potentially invalid.", resp.JobModifyIndex, resp.JobModifyIndex, pos[0]))
	if planChangesAllocations(resp) {
		return 1
	}
	return 0
}

// planSummary is the scheduler's part of a plan: per group what it would do, then whether
// everything could be placed.
func planSummary(resp *api.JobPlanResponse) string {
	var b strings.Builder
	b.WriteString("Scheduler dry-run:\n")
	if len(resp.FailedTGAllocs) == 0 {
		b.WriteString("- All tasks successfully allocated.\n")
	} else {
		groups := make([]string, 0, len(resp.FailedTGAllocs))
		for g := range resp.FailedTGAllocs {
			groups = append(groups, g)
		}
		sort.Strings(groups)
		b.WriteString("- WARNING: Failed to place all allocations.\n")
		for _, g := range groups {
			m := resp.FailedTGAllocs[g]
			fmt.Fprintf(&b, "  Task Group %q (failed to place %d allocation(s)):\n", g, m.CoalescedFailures+1)
			// Sorted, so that the same plan prints the same lines (pipelines diff them).
			for _, reason := range sortedKeys(m.ConstraintFiltered) {
				fmt.Fprintf(&b, "    * Constraint %q: %d nodes excluded by filter\n", reason, m.ConstraintFiltered[reason])
			}
			for _, dim := range sortedKeys(m.DimensionExhausted) {
				fmt.Fprintf(&b, "    * Resources exhausted on %d nodes: %s\n", m.DimensionExhausted[dim], dim)
			}
		}
	}
	if resp.Annotations != nil && len(resp.Annotations.DesiredTGUpdates) > 0 {
		groups := make([]string, 0, len(resp.Annotations.DesiredTGUpdates))
		for g := range resp.Annotations.DesiredTGUpdates {
			groups = append(groups, g)
		}
		sort.Strings(groups)
		for _, g := range groups {
			u := resp.Annotations.DesiredTGUpdates[g]
			fmt.Fprintf(&b, "- Task Group %q: %s\n", g, updateLine(u))
		}
	}
	return b.String()
}

func updateLine(u *api.DesiredUpdates) string {
	var parts []string
	for _, p := range []struct {
		n    uint64
		name string
	}{
		{u.Place, "create"}, {u.DestructiveUpdate, "create/destroy update"}, {u.Canary, "canary"}, {u.InPlaceUpdate, "in-place update"},
		{u.Migrate, "migrate"}, {u.Stop, "destroy"}, {u.Ignore, "ignore"},
	} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.name))
		}
	}
	if len(parts) == 0 {
		return "nothing to do"
	}
	return strings.Join(parts, ", ")
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// planChangesAllocations reports whether the plan creates or destroys an allocation: the
// exit code deploy pipelines branch on. Placements count whether or not they would fit
// (the server counts desired placements, failed ones included, as upstream's does), and a
// canary is a placement.
func planChangesAllocations(resp *api.JobPlanResponse) bool {
	if resp.Annotations == nil {
		return false
	}
	for _, u := range resp.Annotations.DesiredTGUpdates {
		if u.Place+u.Stop+u.Migrate+u.DestructiveUpdate+u.Canary > 0 {
			return true
		}
	}
	return false
}
