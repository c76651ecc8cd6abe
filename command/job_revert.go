package command

import (
	"flag"
	"strconv"

	"github.com/hashicorp/cli"
)

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
