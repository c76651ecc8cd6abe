package command

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
)

// JobStatusCommand lists jobs or shows one.
type JobStatusCommand struct {
	Meta
}

const jobStatusOptions = `
Status Options:

  -short
    Show only the job's header, not its summary and allocations.

  -json
    Print the API's JSON instead of tables: the job list without an
    argument, the job with one.
`

func (c *JobStatusCommand) Help() string {
	return helpText(`
Usage: nomad job status [options] [job]

  Without an argument, list the jobs of the namespace (-namespace='*' lists
  every namespace you can read). With a job ID or unique prefix, show the
  job, the per-group summary of its allocations, and the allocations.
`, jobStatusOptions)
}

func (c *JobStatusCommand) Synopsis() string { return "List jobs or show one" }

func (c *JobStatusCommand) Run(args []string) int {
	var short, asJSON bool
	fs := c.FlagSet("job status")
	fs.BoolVar(&short, "short", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	pos, code, ok := c.parseAtMostOne(fs, args, "This command takes either no arguments or one: <job>")
	if !ok {
		return code
	}
	client, ok := c.client()
	if !ok {
		return 1
	}
	if len(pos) == 0 {
		return c.list(client, asJSON)
	}
	jobID, ok := c.resolveJob(client, pos[0])
	if !ok {
		return 1
	}
	return c.show(client, jobID, short, asJSON)
}

func (c *JobStatusCommand) list(client *api.Client, asJSON bool) int {
	jobs, _, err := client.Jobs().List(nil)
	if err != nil {
		return c.fail("Error querying jobs: %v", err)
	}
	if asJSON {
		return c.printJSON(jobs)
	}
	if len(jobs) == 0 {
		c.Ui.Output("No running jobs")
		return 0
	}
	c.Ui.Output(formatJobList(jobs, c.Namespace() == "*"))
	return 0
}

// formatJobList is the job table; the Namespace column appears only when
// jobs from several namespaces can be listed.
func formatJobList(jobs []*api.JobListStub, withNamespace bool) string {
	rows := make([]string, 0, len(jobs)+1)
	if withNamespace {
		rows = append(rows, "ID|Namespace|Type|Priority|Status|Submit Date")
	} else {
		rows = append(rows, "ID|Type|Priority|Status|Submit Date")
	}
	for _, j := range jobs {
		ns := ""
		if withNamespace {
			ns = j.Namespace + "|"
		}
		rows = append(rows, fmt.Sprintf("%s|%s%s|%d|%s|%s",
			j.ID, ns, j.Type, j.Priority, jobStatus(j.Status, j.Stop), formatUnixNano(j.SubmitTime)))
	}
	return formatList(rows)
}

// jobStatus marks a stopped job, whose status alone ("dead") would not say
// whether it was stopped or simply finished.
func jobStatus(status string, stop bool) string {
	if stop {
		return status + " (stopped)"
	}
	return status
}

func (c *JobStatusCommand) show(client *api.Client, jobID string, short, asJSON bool) int {
	job, _, err := client.Jobs().Info(jobID, nil)
	if err != nil {
		return c.fail("Error querying job: %v", err)
	}
	if asJSON {
		return c.printJSON(job)
	}
	now := time.Now()
	rows := jobHeaderRows(job)
	if line := nextPeriodicLaunch(job, now); line != "" {
		rows = append(rows, line)
	}
	protection, err := readJobProtection(client, jobID, str(job.Namespace))
	if err != nil {
		return c.fail("Error querying job protection: %v", err)
	}
	if line := protectionRow(protection); line != "" {
		rows = append(rows, line)
	}
	c.Ui.Output(formatKV(rows))
	if short {
		return 0
	}
	if job.IsPeriodic() || job.IsParameterized() {
		return c.showChildren(client, job, now)
	}

	summary, _, err := client.Jobs().Summary(jobID, nil)
	if err != nil {
		return c.fail("Error querying job summary: %v", err)
	}
	c.Ui.Output("\nSummary")
	c.Ui.Output(formatSummary(summary))

	latest, _, err := client.Jobs().LatestDeployment(jobID, nil)
	if err != nil && !isNotFound(err) {
		return c.fail("Error querying job deployment: %v", err)
	}
	if latest != nil {
		c.Ui.Output("\nLatest Deployment")
		c.Ui.Output(formatKV([]string{"ID|" + shortID(latest.ID), "Status|" + latest.Status, "Description|" + latest.StatusDescription}))
		c.Ui.Output("\nDeployed")
		c.Ui.Output(formatDeploymentGroups(latest))
	}

	// An agent with no client nodes may not serve allocations at all; that
	// is the same as having none.
	allocs, _, err := client.Jobs().Allocations(jobID, false, nil)
	if err != nil && !isNotFound(err) {
		return c.fail("Error querying job allocations: %v", err)
	}
	c.Ui.Output("\nAllocations")
	c.Ui.Output(formatAllocs(allocs, time.Now()))
	return 0
}

func formatJobHeader(job *api.Job) string { return formatKV(jobHeaderRows(job)) }

func jobHeaderRows(job *api.Job) []string {
	return []string{
		"ID|" + str(job.ID),
		"Name|" + str(job.Name),
		"Submit Date|" + formatUnixNano(int64PtrVal(job.SubmitTime)),
		"Type|" + str(job.Type),
		fmt.Sprintf("Priority|%d", intv(job.Priority)),
		"Datacenters|" + strings.Join(job.Datacenters, ","),
		"Namespace|" + str(job.Namespace),
		"Node Pool|" + str(job.NodePool),
		"Status|" + jobStatus(str(job.Status), boolv(job.Stop)),
		fmt.Sprintf("Periodic|%t", job.IsPeriodic()),
		fmt.Sprintf("Parameterized|%t", job.IsParameterized()),
	}
}

// nextPeriodicLaunch is the header row of a periodic job's next launch, computed from its
// schedule in its time zone as upstream's CLI does; "" for a job that launches nothing
// (not periodic, disabled, stopped, or a parameterized template).
func nextPeriodicLaunch(job *api.Job, now time.Time) string {
	p := job.Periodic
	if p == nil || job.IsParameterized() || boolv(job.Stop) || (p.Enabled != nil && !*p.Enabled) {
		return ""
	}
	p.Canonicalize()
	loc, err := p.GetLocation()
	if err != nil {
		return "Next Periodic Launch|" + fmt.Sprintf("invalid time zone: %v", err)
	}
	next, err := p.Next(now.In(loc))
	if err != nil || next.IsZero() {
		return "Next Periodic Launch|none"
	}
	return fmt.Sprintf("Next Periodic Launch|%s (%s from now)", formatTime(next), next.Sub(now).Round(time.Second))
}

// showChildren prints what a periodic or parameterized job has launched instead of its own
// (always empty) allocations, as upstream does: the children's counts by status and the list.
func (c *JobStatusCommand) showChildren(client *api.Client, job *api.Job, now time.Time) int {
	title, suffix, none := "Previously Launched Jobs", "/periodic-", "No instances of periodic job found"
	if job.IsParameterized() {
		title, suffix, none = "Dispatched Jobs", "/dispatch-", "No dispatched instances of parameterized job found"
	}
	children, _, err := client.Jobs().PrefixList(str(job.ID) + suffix)
	if err != nil {
		return c.fail("Error querying child jobs: %v", err)
	}
	var pending, running, dead int
	rows := []string{"ID|Status"}
	for _, child := range children {
		if child.ParentID != str(job.ID) {
			continue
		}
		switch child.Status {
		case "pending":
			pending++
		case "running":
			running++
		default:
			dead++
		}
		rows = append(rows, child.ID+"|"+child.Status)
	}
	c.Ui.Output("\nChildren Job Summary")
	c.Ui.Output(formatList([]string{"Pending|Running|Dead", fmt.Sprintf("%d|%d|%d", pending, running, dead)}))
	c.Ui.Output("\n" + title)
	if len(rows) == 1 {
		c.Ui.Output(none)
		return 0
	}
	c.Ui.Output(formatList(rows))
	return 0
}

func formatSummary(s *api.JobSummary) string {
	if len(s.Summary) == 0 {
		return "No task groups"
	}
	groups := make([]string, 0, len(s.Summary))
	for g := range s.Summary {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	rows := []string{"Task Group|Queued|Starting|Running|Failed|Complete|Lost|Unknown"}
	for _, g := range groups {
		t := s.Summary[g]
		rows = append(rows, fmt.Sprintf("%s|%d|%d|%d|%d|%d|%d|%d",
			g, t.Queued, t.Starting, t.Running, t.Failed, t.Complete, t.Lost, t.Unknown))
	}
	return formatList(rows)
}

func formatAllocs(allocs []*api.AllocationListStub, now time.Time) string {
	if len(allocs) == 0 {
		return "No allocations placed"
	}
	rows := []string{"ID|Node ID|Task Group|Version|Desired|Status|Created|Modified"}
	for _, a := range allocs {
		rows = append(rows, fmt.Sprintf("%s|%s|%s|%d|%s|%s|%s|%s",
			shortID(a.ID), shortID(a.NodeID), a.TaskGroup, a.JobVersion, a.DesiredStatus, a.ClientStatus,
			formatAgo(time.Unix(0, a.CreateTime), now), formatAgo(time.Unix(0, a.ModifyTime), now)))
	}
	return formatList(rows)
}

func int64PtrVal(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
