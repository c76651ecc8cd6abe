package command

import (
	"flag"
	"fmt"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

// newJobStop stops a job, or purges it with -purge.
func newJobStop(m Meta) cli.Command {
	var purge, yes, detach, global, noShutdownDelay bool
	var evalPriority int
	return &command{Meta: m, name: "job stop", synopsis: "Stop a running job",
		usage: `
Usage: nomad job stop [options] <job>

  Stop a running job. Its allocations are stopped; the job itself stays
  readable, marked stopped, until garbage collection removes it.

  With -purge the job is removed at once, together with its versions and
  allocations. Purging needs the "purge-job" capability; unless -yes is
  given it first prints what the purge would remove and leave (the agent's
  purge plan) and asks for confirmation. It leaves a purge record that
  "nomad job purged" lists and "nomad job restore" can re-register. A
  protected job ("nomad job protect") cannot be purged.
`,
		options: []option{
			boolOpt(&purge, "-purge", "Remove the job from the cluster immediately instead of waiting for\ngarbage collection."),
			boolOpt(&yes, "-yes, -y", "Do not print the purge plan nor ask for confirmation (for scripts and\nother non-interactive use)."),
			boolOpt(&detach, "-detach", "Print the evaluation ID and return without monitoring."),
			boolOpt(&global, "-global", "Stop a multi-region job in every region."),
			boolOpt(&noShutdownDelay, "-no-shutdown-delay", "Ignore the shutdown_delay of the job's groups and tasks."),
			flagOpt(&evalPriority, 0, "-eval-priority=<priority>", "Priority for the evaluation the stop creates."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			_, client, jobID, code, ok := c.connectJob(fs, args, "<job>")
			if !ok {
				return code
			}

			// Purging cannot be undone from the job's own history, so it is the one
			// stop that asks first.
			if purge && !yes {
				plan, err := readPurgePlan(client, jobID)
				if err != nil {
					return c.fail("Error reading purge plan: %v", err)
				}
				if plan != nil {
					if plan.Protected {
						return c.fail("Job %q is protected from purge (reason: %s); a holder of protect-job must run \"nomad job unprotect\" first",
							jobID, plan.ProtectionReason)
					}
					c.Ui.Output(formatPurgePlan(plan) + "\n")
				}
				question := fmt.Sprintf("Are you sure you want to purge job %q?", jobID)
				if proceed, code := c.confirm(question, "Cancelling job purge"); !proceed {
					return code
				}
			}

			evalID, _, err := client.Jobs().DeregisterOpts(jobID, &api.DeregisterOptions{
				Purge:           purge,
				Global:          global,
				EvalPriority:    evalPriority,
				NoShutdownDelay: noShutdownDelay,
			}, nil)
			if err != nil {
				return c.fail("Error deregistering job: %v", err)
			}
			return c.finishEval(client, evalID, detach, evalID)
		},
	}
}
