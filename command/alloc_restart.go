package command

import (
	"flag"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

// newAllocRestart restarts the running tasks of an allocation in place.
func newAllocRestart(m Meta) cli.Command {
	var task string
	var all bool
	return &command{Meta: m, name: "alloc restart", synopsis: "Restart a running allocation",
		usage: `
Usage: nomad alloc restart [options] <allocation> [<task>]

  Restart a running task of an allocation in place, or every running task of
  the allocation when no task is named: each is stopped and started again on
  the same node at once, which does not count against its restart policy.

  <allocation> is an allocation ID or a unique prefix of at least two
  characters.

  When ACLs are enabled, this needs alloc-lifecycle and read-job in the
  allocation's namespace.
`,
		options: []option{
			flagOpt(&task, "", "-task=<task>", "The task, instead of the second argument."),
			boolOpt(&all, "-all-tasks", "Restart every running task; no task may be named with it."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			pos, code, ok := c.parse(fs, args)
			if !ok {
				return code
			}
			if all && (task != "" || len(pos) > 1) {
				return c.fail("-all-tasks restarts every task: name none with it")
			}
			alloc, task, client, ok := c.allocAndTask(pos, task)
			if !ok {
				return 1
			}
			q := &api.QueryOptions{Namespace: alloc.Namespace}
			var err error
			if all {
				err = client.Allocations().RestartAllTasks(alloc, q)
			} else {
				err = client.Allocations().Restart(alloc, task, q)
			}
			if err != nil {
				return c.fail("Error restarting allocation: %v", err)
			}
			return 0
		},
	}
}
