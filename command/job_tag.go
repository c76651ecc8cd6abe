package command

import (
	"cmp"
	"flag"
	"fmt"
	"net/url"

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

// jobProtection is GET /v1/job/:id/protection, this fork's own API.
type jobProtection struct {
	Protected   bool
	Reason      string
	Actor       *eventActor
	ModifyTime  int64
	ModifyIndex uint64
}

func jobProtectionPath(jobID string) string {
	return "/v1/job/" + url.PathEscape(jobID) + "/protection"
}

// readJobProtection reads a job's protection; nil, without an error, from an agent that
// has no such route (a 404), so status output degrades instead of failing.
func readJobProtection(client *api.Client, jobID, namespace string) (*jobProtection, error) {
	var p jobProtection
	if _, err := client.Raw().Query(jobProtectionPath(jobID), &p, &api.QueryOptions{Namespace: namespace}); err != nil {
		if isNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return &p, nil
}

// protectionRow is the job status header row of a protected job; "" when it is not.
func protectionRow(p *jobProtection) string {
	if p == nil || !p.Protected {
		return ""
	}
	row := "Protected|yes: " + p.Reason
	if a := p.Actor; a != nil {
		row += " (by " + cmp.Or(a.Name, a.AccessorID, a.Type) + ")"
	}
	return row
}

// newJobProtect protects a job from purge and garbage collection.
func newJobProtect(m Meta) cli.Command {
	var reason string
	return &command{Meta: m, name: "job protect", synopsis: "Protect a job from purge",
		usage: `
Usage: nomad job protect -reason <text> <job>

  Protect a job from deletion: while protected, no token (management
  included) can purge it and the garbage collector never removes it. It can
  still be stopped, scaled and updated; registering it again keeps the
  protection. Needs the "protect-job" capability, which no shorthand policy
  (read, write, scale) includes.
`,
		options: []option{
			flagOpt(&reason, "", "-reason=<text>", "Why the job is protected (required, at most 256 characters). Shown to\nwhoever tries to purge it."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			pos, code, ok := c.parseArgs(fs, args, "<job>")
			if !ok {
				return code
			}
			if reason == "" {
				return c.fail("A -reason is required to protect a job")
			}
			return setJobProtection(&c.Meta, pos[0], true, reason)
		},
	}
}

// newJobUnprotect clears a job's protection.
func newJobUnprotect(m Meta) cli.Command {
	return &command{Meta: m, name: "job unprotect", synopsis: "Clear a job's purge protection",
		usage: `
Usage: nomad job unprotect <job>

  Clear a job's deletion protection, so that it can be purged again and the
  garbage collector may remove it once stopped. Needs the "protect-job"
  capability.
`,
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			pos, code, ok := c.parseArgs(fs, args, "<job>")
			if !ok {
				return code
			}
			return setJobProtection(&c.Meta, pos[0], false, "")
		},
	}
}

func setJobProtection(m *Meta, job string, protected bool, reason string) int {
	client, jobID, ok := m.clientForJob(job)
	if !ok {
		return 1
	}
	body := map[string]any{"Protected": protected, "Reason": reason}
	if _, err := client.Raw().Write(jobProtectionPath(jobID), body, nil, nil); err != nil {
		return m.fail("Error setting job protection: %v", err)
	}
	if protected {
		m.Ui.Output(fmt.Sprintf("Job %q protected: %s", jobID, reason))
	} else {
		m.Ui.Output(fmt.Sprintf("Job %q unprotected", jobID))
	}
	return 0
}
