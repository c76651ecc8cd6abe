package command

import (
	"flag"
	"fmt"
	"strconv"

	"github.com/hashicorp/cli"
)

// newJobScale changes a task group's count.
func newJobScale(m Meta) cli.Command {
	var detach bool
	return &command{Meta: m, name: "job scale", synopsis: "Change the count of a job's task group",
		usage: `
Usage: nomad job scale [options] <job> [<group>] <count>

  Set the count of one task group. The group may be left out when the job
  has only one. Scaling a group to 0 stops its allocations but keeps the
  job registered; garbage collection never removes such a job.
`,
		options: []option{
			boolOpt(&detach, "-detach", "Print the evaluation ID and return without monitoring."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			pos, code, ok := c.parse(fs, args)
			if !ok {
				return code
			}
			if len(pos) != 2 && len(pos) != 3 {
				return c.fail("This command takes two or three arguments: <job> [<group>] <count>")
			}
			count, err := strconv.Atoi(pos[len(pos)-1])
			if err != nil || count < 0 {
				return c.fail("Invalid count %q: must be a non-negative integer", pos[len(pos)-1])
			}
			client, jobID, ok := c.clientForJob(pos[0])
			if !ok {
				return 1
			}

			var group string
			if len(pos) == 3 {
				group = pos[1]
			} else {
				job, _, err := client.Jobs().Info(jobID, nil)
				if err != nil {
					return c.fail("Error querying job: %v", err)
				}
				if len(job.TaskGroups) != 1 {
					return c.fail("Job %q has %d task groups; name the group to scale", jobID, len(job.TaskGroups))
				}
				group = str(job.TaskGroups[0].Name)
			}

			resp, _, err := client.Jobs().Scale(jobID, group, &count, "submitted using the Nomad CLI", false, nil, nil)
			if err != nil {
				return c.fail("Error scaling job: %v", err)
			}
			c.Ui.Output(fmt.Sprintf("Scaled task group %q of job %q to %d", group, jobID, count))
			if w := resp.Warnings; w != "" {
				c.Ui.Warn("Job Warnings:\n" + w)
			}
			return c.finishEval(client, resp.EvalID, detach, "Evaluation ID: "+resp.EvalID)
		},
	}
}
