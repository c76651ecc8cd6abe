package command

import (
	"flag"
	"fmt"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

// newJobTagApply names a job version.
func newJobTagApply(m Meta) cli.Command {
	var name, description string
	version := optUint{}
	return &command{Meta: m, name: "job tag apply", synopsis: "Tag a job version",
		usage: `
Usage: nomad job tag apply [options] <job>

  Tag a version of a job with a name. Tagged versions are never pruned from
  the job's history, a job with any tagged version is never garbage
  collected, and "nomad job revert" accepts the tag name as its target.
`,
		heading: "Tag",
		options: []option{
			flagOpt(&name, "", "-name=<name>", "Name of the tag. Required; unique within the job."),
			flagOpt(&description, "", "-description=<text>", "Free-form note stored with the tag."),
			valueOpt(&version, "-version=<version>", "Version to tag. Defaults to the job's current version."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			client, jobID, code, ok := c.connectTag(fs, args, &name)
			if !ok {
				return code
			}
			// The version is always sent explicitly: an absent version and version
			// 0 look the same on the wire.
			if !version.set {
				job, _, err := client.Jobs().Info(jobID, nil)
				if err != nil {
					return c.fail("Error querying job: %v", err)
				}
				version.v = u64(job.Version)
			}
			if _, err := client.Jobs().TagVersion(jobID, version.v, name, description, nil); err != nil {
				return c.fail("Error tagging job version: %v", err)
			}
			c.Ui.Output(fmt.Sprintf("Job %q version %d tagged %q", jobID, version.v, name))
			return 0
		},
	}
}

// newJobTagUnset removes a version tag.
func newJobTagUnset(m Meta) cli.Command {
	var name string
	return &command{Meta: m, name: "job tag unset", synopsis: "Remove a tag from a job version",
		usage: `
Usage: nomad job tag unset -name=<name> <job>

  Remove a tag from a job version. The version stays in the history until
  it is pruned like any untagged version, which may be at once when the
  version limit is already reached. Since that can erase history, it needs
  the purge-job capability in the job's namespace; the untag and any version
  it lets go are published as JobVersionUntagged and JobVersionPruned events
  naming who did it.
`,
		heading: "Tag",
		options: []option{
			flagOpt(&name, "", "-name=<name>", "Name of the tag to remove. Required."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			client, jobID, code, ok := c.connectTag(fs, args, &name)
			if !ok {
				return code
			}
			if _, err := client.Jobs().UntagVersion(jobID, name, nil); err != nil {
				return c.fail("Error removing tag: %v", err)
			}
			c.Ui.Output(fmt.Sprintf("Tag %q removed from job %q", name, jobID))
			return 0
		},
	}
}

// connectTag is how both tag commands begin: one job argument, a required
// -name (read through name once the flags are parsed), a client, and the job
// resolved from its ID or prefix.
func (m *Meta) connectTag(fs *flag.FlagSet, args []string, name *string) (client *api.Client, jobID string, code int, ok bool) {
	pos, code, ok := m.parseArgs(fs, args, "<job>")
	if !ok {
		return nil, "", code, false
	}
	if *name == "" {
		return nil, "", m.fail("A tag name is required: -name=<name>"), false
	}
	client, jobID, ok = m.clientForJob(pos[0])
	if !ok {
		return nil, "", 1, false
	}
	return client, jobID, 0, true
}
