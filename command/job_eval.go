package command

import (
	"flag"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

// newJobEval forces a new evaluation of a job.
func newJobEval(m Meta) cli.Command {
	var detach bool
	var force bool
	return &command{Meta: m, name: "job eval", synopsis: "Force an evaluation of a job",
		usage: `
Usage: nomad job eval [options] <job>

  Create a new evaluation of a job as it stands, so the scheduler looks at it
  again (after a node joined, say).
`,
		options: []option{
			boolOpt(&force, "-force-reschedule", "Reschedule failed allocations now, whatever their reschedule policy."),
			boolOpt(&detach, "-detach", "Print the evaluation ID and return without monitoring."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			_, client, jobID, code, ok := c.connectJob(fs, args, "<job>")
			if !ok {
				return code
			}
			evalID, _, err := client.Jobs().EvaluateWithOpts(jobID, api.EvalOptions{ForceReschedule: force}, nil)
			if err != nil {
				return c.fail("Error evaluating job: %v", err)
			}
			return c.finishEval(client, evalID, detach, evalID)
		},
	}
}
