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

// newAllocSignal sends a signal to the running tasks of an allocation.
func newAllocSignal(m Meta) cli.Command {
	var signal, task string
	return &command{Meta: m, name: "alloc signal", synopsis: "Signal a running allocation",
		usage: `
Usage: nomad alloc signal [options] <allocation> [<task>]

  Send a signal to a running task of an allocation, or to every running task
  of the allocation when no task is named. The agent of the node that runs the
  allocation delivers it.

  <allocation> is an allocation ID or a unique prefix of at least two
  characters.

  When ACLs are enabled, this needs alloc-lifecycle and read-job in the
  allocation's namespace.
`,
		options: []option{
			flagOpt(&signal, "", "-s=<signal>", "The signal to send, such as SIGHUP or USR1. Required: no signal is sent\nby default."),
			flagOpt(&task, "", "-task=<task>", "The task, instead of the second argument."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			pos, code, ok := c.parse(fs, args)
			if !ok {
				return code
			}
			if signal == "" {
				return c.fail("A signal is required: give one with -s, such as -s SIGHUP")
			}
			alloc, task, client, ok := c.allocAndTask(pos, task)
			if !ok {
				return 1
			}
			if err := client.Allocations().Signal(alloc, &api.QueryOptions{Namespace: alloc.Namespace}, task, signal); err != nil {
				return c.fail("Error signalling allocation: %v", err)
			}
			return 0
		},
	}
}

// allocAndTask finds the allocation (first argument) and the optional task (second argument
// or -task, which must agree, and must be one of the allocation's). An empty task means every
// task of the allocation.
func (m *Meta) allocAndTask(pos []string, task string) (*api.Allocation, string, *api.Client, bool) {
	if len(pos) < 1 || len(pos) > 2 {
		m.fail("This command takes one or two arguments: <allocation> [<task>]")
		return nil, "", nil, false
	}
	if len(pos) == 2 {
		if task != "" && task != pos[1] {
			m.fail("The task is named twice: -task=%s and %s", task, pos[1])
			return nil, "", nil, false
		}
		task = pos[1]
	}
	client, alloc, ok := m.clientAlloc(pos[0], false)
	if !ok {
		return nil, "", nil, false
	}
	if task != "" {
		if task, ok = m.pickTask(alloc, task); !ok {
			return nil, "", nil, false
		}
	}
	return alloc, task, client, true
}

// newAllocStop stops an allocation so that the scheduler replaces it.
func newAllocStop(m Meta) cli.Command {
	var detach, noShutdownDelay bool
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
