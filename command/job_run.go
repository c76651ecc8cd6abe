package command

import (
	"fmt"
	"io"
	"path/filepath"
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
