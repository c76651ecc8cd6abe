package command

import (
	"flag"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

// newAllocStop stops an allocation so that the scheduler replaces it.
func newAllocStop(m Meta) cli.Command {
	var detach bool
	var noShutdownDelay bool
	return &command{Meta: m, name: "alloc stop", synopsis: "Stop and reschedule a running allocation",
		usage: `
Usage: nomad alloc stop [options] <allocation>

  Stop an allocation: it is marked to migrate, its tasks are stopped, and the
  scheduler places a replacement, which may land on the same node. The
  evaluation this creates is monitored until it completes.

  <allocation> is an allocation ID or a unique prefix of at least two
  characters.

  When ACLs are enabled, this needs alloc-lifecycle and read-job in the
  allocation's namespace.
`,
		options: []option{
			boolOpt(&detach, "-detach", "Print the evaluation ID and return without monitoring."),
			boolOpt(&noShutdownDelay, "-no-shutdown-delay", "Ignore the shutdown_delay of the allocation's group and tasks."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			pos, code, ok := c.parseArgs(fs, args, "allocation")
			if !ok {
				return code
			}
			client, alloc, ok := c.clientAlloc(pos[0], false)
			if !ok {
				return 1
			}
			q := &api.QueryOptions{Namespace: alloc.Namespace}
			if noShutdownDelay {
				q.Params = map[string]string{"no_shutdown_delay": "true"}
			}
			resp, err := client.Allocations().Stop(alloc, q)
			if err != nil {
				return c.fail("Error stopping allocation: %v", err)
			}
			return c.finishEval(client, resp.EvalID, detach, resp.EvalID)
		},
	}
}
