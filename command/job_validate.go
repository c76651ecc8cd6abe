package command

import (
	"fmt"
	"io"
	"strings"

	"github.com/hashicorp/nomad/api"
)

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
