package command

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/jobspec"
)

// JobRunCommand registers a job from a file.
type JobRunCommand struct {
	Meta

	// Stdin is read when the file argument is "-"; nil means os.Stdin.
	Stdin io.Reader
}

func (c *JobRunCommand) Help() string {
	return helpText(`
Usage: nomad job run [options] <path>

  Submit a job file to the cluster, creating the job or updating it. The
  file is HCL unless -json is given or its name ends in ".json"; a path of
  "-" reads the job from standard input.

  Unless -detach is given, the command follows the evaluation the
  registration created and then the deployment it started, until the
  deployment succeeds (exit 0) or fails (exit 1). Placement failures exit 2.
`, `
Run Options:

  -detach
    Print the evaluation ID and return without monitoring.

  -verbose
    Print full IDs while monitoring, and the deployment's allocations at
    the end.

  -check-index=<index>
    Register only if the job's modify index is still <index>. An index of 0
    registers only if the job does not exist yet. Use the "Job Modify Index"
    printed by "nomad job plan" or the JobModifyIndex of "nomad job inspect".

  -json
    Parse the file as JSON ({"Job": {...}} or a bare job object).

  -var 'key=value'
    Value for a variable declared in the job file. Repeatable.

  -eval-priority=<priority>
    Priority for the evaluation the registration creates.

  -preserve-counts
    Keep the current count of each existing task group.

  -policy-override
    Ask the cluster to override soft-mandatory policy failures.

  -output
    Print the job as the JSON the API accepts, and do not submit it.
`)
}

func (c *JobRunCommand) Synopsis() string { return "Submit a job file" }

func (c *JobRunCommand) Run(args []string) int {
	var detach, verbose, asJSON, output, preserveCounts, policyOverride bool
	var checkIndex string
	var evalPriority int
	vars := varFlag{}
	fs := c.FlagSet("job run")
	fs.BoolVar(&detach, "detach", false, "")
	fs.BoolVar(&verbose, "verbose", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.BoolVar(&output, "output", false, "")
	fs.BoolVar(&preserveCounts, "preserve-counts", false, "")
	fs.BoolVar(&policyOverride, "policy-override", false, "")
	fs.StringVar(&checkIndex, "check-index", "", "")
	fs.IntVar(&evalPriority, "eval-priority", 0, "")
	fs.Var(vars, "var", "")
	pos, code, ok := c.parseArgs(fs, args, "<path>")
	if !ok {
		return code
	}

	var enforce bool
	var modifyIndex uint64
	if checkIndex != "" {
		n, err := strconv.ParseUint(checkIndex, 10, 64)
		if err != nil {
			return c.fail("Invalid -check-index %q: must be a non-negative integer", checkIndex)
		}
		enforce, modifyIndex = true, n
	}

	job, err := loadJob(pos[0], asJSON, vars, c.Stdin)
	if err != nil {
		return c.fail("Error getting job struct: %v", err)
	}
	// A namespace written in the job file wins over the flag and the
	// environment, as it does upstream; otherwise the job lands where the
	// command points.
	if str(job.Namespace) == "" {
		if ns := c.Namespace(); ns != "" {
			job.Namespace = &ns
		}
	}

	if output {
		out, err := prettyJSON(struct{ Job *api.Job }{job})
		if err != nil {
			return c.fail("Error encoding job: %v", err)
		}
		c.Ui.Output(out)
		return 0
	}

	client, ok := c.client()
	if !ok {
		return 1
	}
	opts := &api.RegisterOptions{
		EnforceIndex:   enforce,
		ModifyIndex:    modifyIndex,
		PolicyOverride: policyOverride,
		PreserveCounts: preserveCounts,
		EvalPriority:   evalPriority,
	}
	var wopts *api.WriteOptions
	if ns := str(job.Namespace); ns != "" {
		wopts = &api.WriteOptions{Namespace: ns}
	}
	resp, _, err := client.Jobs().RegisterOpts(job, opts, wopts)
	if err != nil {
		return c.fail("Error submitting job: %v", err)
	}
	if w := strings.TrimSpace(resp.Warnings); w != "" {
		c.Ui.Warn("Job Warnings:\n" + w)
	}
	if detach || resp.EvalID == "" {
		c.Ui.Output("Job registration successful")
	}
	if detach || resp.EvalID == "" {
		return c.finishEval(client, resp.EvalID, detach, "Evaluation ID: "+resp.EvalID)
	}
	return c.monitorRun(client, resp.EvalID, verbose)
}

// loadJob reads and parses a job file for run and validate.
func loadJob(path string, asJSON bool, vars map[string]string, stdin io.Reader) (*api.Job, error) {
	name := path
	if path == "-" {
		name = "<stdin>"
	}
	src, err := readInput(path, stdin)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if asJSON || strings.EqualFold(filepath.Ext(path), ".json") {
		if len(vars) > 0 {
			return nil, fmt.Errorf("-var applies only to HCL job files")
		}
		return jobspec.ParseJSONJob(src)
	}
	// file() and friends read relative to the job file, as upstream's CLI does; from stdin,
	// relative to the working directory.
	baseDir := "."
	if path != "-" {
		baseDir = filepath.Dir(path)
	}
	return jobspec.ParseLocal(name, src, vars, baseDir)
}

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

// JobValidateCommand checks a job file without submitting it.
type JobValidateCommand struct {
	Meta

	// Stdin is read when the file argument is "-"; nil means os.Stdin.
	Stdin io.Reader
}

func (c *JobValidateCommand) Help() string {
	return helpText(`
Usage: nomad job validate [options] <path>

  Parse a job file, fill in defaults and check it for mistakes: first those
  that need no cluster (a missing ID, an unknown type, groups and tasks that
  are empty or named twice, negative counts), then, when the agent answers,
  everything a registration would refuse. Nothing is submitted.
`, `
Validate Options:

  -json
    Parse the file as JSON.

  -var 'key=value'
    Value for a variable declared in the job file. Repeatable.
`)
}

func (c *JobValidateCommand) Synopsis() string { return "Check a job specification for errors" }

func (c *JobValidateCommand) Run(args []string) int {
	var asJSON bool
	vars := varFlag{}
	fs := c.FlagSet("job validate")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.Var(vars, "var", "")
	pos, code, ok := c.parseArgs(fs, args, "<path>")
	if !ok {
		return code
	}
	job, err := loadJob(pos[0], asJSON, vars, c.Stdin)
	if err != nil {
		return c.fail("Error getting job struct: %v", err)
	}
	job.Canonicalize()
	if problems := validateJob(job); len(problems) > 0 {
		return c.fail("Job validation errors:\n  * %s", strings.Join(problems, "\n  * "))
	}
	// Then the servers' own checks (names, limits, placement rules), as upstream does; an
	// agent that cannot be reached leaves the local checks as the answer.
	problems, warnings, ok := c.serverProblems(job)
	if ok && len(problems) > 0 {
		return c.fail("Job validation errors:\n  * %s", strings.Join(problems, "\n  * "))
	}
	if w := strings.TrimSpace(warnings); w != "" {
		c.Ui.Warn("Job Warnings:\n" + w + "\n")
	}
	c.Ui.Output("Job validation successful")
	return 0
}

// serverProblems asks the agent to validate job: the errors, and the warnings about fields
// it accepts without acting on them; ok is false when it could not answer.
func (c *JobValidateCommand) serverProblems(job *api.Job) (problems []string, warnings string, ok bool) {
	client, err := c.Meta.Client()
	if err != nil {
		return nil, "", false
	}
	var w *api.WriteOptions
	if ns := str(job.Namespace); ns != "" {
		w = &api.WriteOptions{Namespace: ns}
	} else if ns := c.Namespace(); ns != "" {
		w = &api.WriteOptions{Namespace: ns}
	}
	resp, _, err := client.Jobs().Validate(job, w)
	if err != nil {
		return nil, "", false
	}
	return resp.ValidationErrors, resp.Warnings, true
}

// validateJob runs the checks that need no server. The agent validates again
// on registration; this only catches mistakes early.
func validateJob(job *api.Job) []string {
	var problems []string
	add := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }

	id := str(job.ID)
	switch {
	case id == "":
		add("Missing job ID")
	case strings.ContainsAny(id, " \t\n"):
		add("Job ID contains a space")
	case strings.Contains(id, "\x00"):
		add("Job ID contains a null character")
	}
	if str(job.Name) == "" {
		add("Missing job name")
	}
	switch t := str(job.Type); t {
	case "service", "batch", "system", "sysbatch":
	default:
		add("Invalid job type %q", t)
	}
	if p := intv(job.Priority); p < 1 || p > 100 {
		add("Job priority must be between 1 and 100, got %d", p)
	}
	if len(job.TaskGroups) == 0 {
		add("Missing job task groups")
	}
	groups := map[string]bool{}
	for i, tg := range job.TaskGroups {
		name := str(tg.Name)
		if name == "" {
			add("Task group %d is missing a name", i+1)
		} else if groups[name] {
			add("Task group %q is defined more than once", name)
		}
		groups[name] = true
		if intv(tg.Count) < 0 {
			add("Task group %q has a negative count", name)
		}
		if len(tg.Tasks) == 0 {
			add("Task group %q has no tasks", name)
		}
		tasks := map[string]bool{}
		for j, t := range tg.Tasks {
			switch {
			case t.Name == "":
				add("Task %d of group %q is missing a name", j+1, name)
			case tasks[t.Name]:
				add("Task %q is defined more than once in group %q", t.Name, name)
			}
			tasks[t.Name] = true
			if t.Driver == "" {
				add("Task %q in group %q is missing a driver", t.Name, name)
			}
		}
	}
	return problems
}
