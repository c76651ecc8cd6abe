package command

import (
	"flag"
	"fmt"
	"strconv"

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

// newJobEval forces a new evaluation of a job.
func newJobEval(m Meta) cli.Command {
	var detach, force bool
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

// newJobRevert reverts a job to an earlier version or tag.
func newJobRevert(m Meta) cli.Command {
	var detach bool
	return &command{Meta: m, name: "job revert", synopsis: "Register an earlier job version again",
		usage: `
Usage: nomad job revert [options] <job> <version|tag>

  Register an earlier version of a job again. The target is a version
  number or the name of a version tag. Reverting creates a new version
  whose spec equals the target; the tag itself stays on the old version.
`,
		options: []option{
			boolOpt(&detach, "-detach", "Print the evaluation ID and return without monitoring."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			pos, client, jobID, code, ok := c.connectJob(fs, args, "<job>", "<version|tag>")
			if !ok {
				return code
			}

			// A number is a version; anything else must name a tag. Looking the tag
			// up here keeps the revert request itself the same as upstream's.
			version, err := strconv.ParseUint(pos[1], 10, 64)
			if err != nil {
				tagged, _, err := client.Jobs().VersionByTag(jobID, pos[1], nil)
				if err != nil {
					return c.fail("Error finding version tag %q of job %q: %v", pos[1], jobID, err)
				}
				version = u64(tagged.Version)
			}

			resp, _, err := client.Jobs().Revert(jobID, version, nil, nil, "", "")
			if err != nil {
				return c.fail("Error reverting job: %v", err)
			}
			return c.finishEval(client, resp.EvalID, detach, resp.EvalID)
		},
	}
}

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
