package command

import "github.com/hashicorp/nomad/api"

// AllocStopCommand stops an allocation so that the scheduler replaces it.
type AllocStopCommand struct {
	Meta
	detach          bool
	noShutdownDelay bool
}

func (c *AllocStopCommand) Help() string {
	return helpText(`
Usage: nomad alloc stop [options] <allocation>

  Stop an allocation: it is marked to migrate, its tasks are stopped, and the
  scheduler places a replacement, which may land on the same node. The
  evaluation this creates is monitored until it completes.

  <allocation> is an allocation ID or a unique prefix of at least two
  characters.

  When ACLs are enabled, this needs alloc-lifecycle and read-job in the
  allocation's namespace.
`, optionsHelp("Stop", c.options()))
}

func (c *AllocStopCommand) options() []option {
	return []option{
		boolOpt(&c.detach, "-detach", "Print the evaluation ID and return without monitoring."),
		boolOpt(&c.noShutdownDelay, "-no-shutdown-delay", "Ignore the shutdown_delay of the allocation's group and tasks."),
	}
}

func (c *AllocStopCommand) Synopsis() string { return "Stop and reschedule a running allocation" }

func (c *AllocStopCommand) Run(args []string) int {
	fs := c.flagSetWith("alloc stop", c.options())
	pos, code, ok := c.parseArgs(fs, args, "allocation")
	if !ok {
		return code
	}
	client, alloc, ok := c.clientAlloc(pos[0], false)
	if !ok {
		return 1
	}
	q := &api.QueryOptions{Namespace: alloc.Namespace}
	if c.noShutdownDelay {
		q.Params = map[string]string{"no_shutdown_delay": "true"}
	}
	resp, err := client.Allocations().Stop(alloc, q)
	if err != nil {
		return c.fail("Error stopping allocation: %v", err)
	}
	return c.finishEval(client, resp.EvalID, c.detach, resp.EvalID)
}
