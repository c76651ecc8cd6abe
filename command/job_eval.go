package command

import "github.com/hashicorp/nomad/api"

// JobEvalCommand forces a new evaluation of a job.
type JobEvalCommand struct {
	Meta
	detach bool
	force  bool
}

func (c *JobEvalCommand) Help() string {
	return helpText(`
Usage: nomad job eval [options] <job>

  Create a new evaluation of a job as it stands, so the scheduler looks at it
  again (after a node joined, say).
`, optionsHelp("Eval", c.options()))
}

func (c *JobEvalCommand) options() []option {
	return []option{
		boolOpt(&c.force, "-force-reschedule", "Reschedule failed allocations now, whatever their reschedule policy."),
		boolOpt(&c.detach, "-detach", "Print the evaluation ID and return without monitoring."),
	}
}

func (c *JobEvalCommand) Synopsis() string { return "Force an evaluation of a job" }

func (c *JobEvalCommand) Run(args []string) int {
	fs := c.flagSetWith("job eval", c.options())
	_, client, jobID, code, ok := c.connectJob(fs, args, "<job>")
	if !ok {
		return code
	}
	evalID, _, err := client.Jobs().EvaluateWithOpts(jobID, api.EvalOptions{ForceReschedule: c.force}, nil)
	if err != nil {
		return c.fail("Error evaluating job: %v", err)
	}
	return c.finishEval(client, evalID, c.detach, evalID)
}
