package command

import (
	"fmt"

	"github.com/hashicorp/nomad/api"
)

// evalDeleteBatch is how many evaluations one delete request names; the servers refuse
// more in one request.
const evalDeleteBatch = 7281

// EvalDeleteCommand deletes evaluations while the eval broker is paused.
type EvalDeleteCommand struct {
	Meta
	filter string
	yes    bool
}

func (c *EvalDeleteCommand) Help() string {
	return helpText(`
Usage: nomad eval delete [options] [<evaluation>]

  Delete evaluations: one by ID (or unique prefix), or every evaluation a
  filter expression selects. Meant for outages with a backlog the schedulers
  cannot work off; the servers only delete while the eval broker is paused:

    nomad operator scheduler set-config -pause-eval-broker=true
    nomad eval delete -filter 'Status == "pending"'
    nomad operator scheduler set-config -pause-eval-broker=false

  Needs a management token when ACLs are enabled.
`, optionsHelp("Delete", c.options()))
}

func (c *EvalDeleteCommand) options() []option {
	return []option{
		flagOpt(&c.filter, "", "-filter=<expression>", "Delete every evaluation the expression selects (\"nomad eval list\n-filter\" shows which), in every namespace unless -namespace is given."),
		boolOpt(&c.yes, "-yes", "Do not ask for confirmation before deleting by filter."),
	}
}

func (c *EvalDeleteCommand) Synopsis() string { return "Delete evaluations" }

func (c *EvalDeleteCommand) Run(args []string) int {
	fs := c.flagSetWith("eval delete", c.options())
	pos, code, ok := c.parse(fs, args)
	if !ok {
		return code
	}
	switch {
	case len(pos) > 1:
		return c.fail("This command takes either no arguments or one: <evaluation>")
	case len(pos) == 1 && c.filter != "":
		return c.fail("Give either an evaluation ID or -filter, not both")
	case len(pos) == 0 && c.filter == "":
		return c.fail("Give an evaluation ID or -filter to select what to delete")
	}
	client, ok := c.client()
	if !ok {
		return 1
	}
	cfg, _, err := client.Operator().SchedulerGetConfiguration(nil)
	if err != nil {
		return c.fail("Error reading the scheduler configuration: %v", err)
	}
	if cfg.SchedulerConfig == nil || !cfg.SchedulerConfig.PauseEvalBroker {
		c.Ui.Error("The eval broker is not paused: evaluations can only be deleted while it is.")
		c.Ui.Error(`Pause it with "nomad operator scheduler set-config -pause-eval-broker=true", and resume it afterwards with -pause-eval-broker=false.`)
		return 1
	}

	var ids []string
	if len(pos) == 1 {
		id, ok := c.resolveEval(client, pos[0])
		if !ok {
			return 1
		}
		ids = []string{id}
	} else {
		if ids, ok = c.matchEvals(client, c.filter); !ok {
			return 1
		}
		if len(ids) == 0 {
			c.Ui.Output("No evaluations matched the filter")
			return 0
		}
		if !c.yes {
			proceed, code := c.confirm(fmt.Sprintf("Are you sure you want to delete %s?", plural(len(ids), "evaluation")), "Cancelled: no evaluation deleted")
			if !proceed {
				return code
			}
		}
	}
	deleted := 0
	for start := 0; start < len(ids); start += evalDeleteBatch {
		batch := ids[start:min(start+evalDeleteBatch, len(ids))]
		if _, err := client.Evaluations().Delete(batch, nil); err != nil {
			if deleted > 0 {
				c.Ui.Output(fmt.Sprintf("Deleted %s before the error", plural(deleted, "evaluation")))
			}
			return c.fail("Error deleting evaluations: %v", err)
		}
		deleted += len(batch)
	}
	c.Ui.Output(fmt.Sprintf("Successfully deleted %s", plural(deleted, "evaluation")))
	return 0
}

// matchEvals lists the IDs of every evaluation the filter selects, page after page.
func (c *EvalDeleteCommand) matchEvals(client *api.Client, filter string) ([]string, bool) {
	q := &api.QueryOptions{Filter: filter, PerPage: 1000}
	if c.Namespace() == "" {
		q.Namespace = api.AllNamespacesNamespace
	}
	var ids []string
	for {
		evals, qm, err := client.Evaluations().List(q)
		if err != nil {
			c.fail("Error listing the evaluations the filter selects: %v", err)
			return nil, false
		}
		for _, e := range evals {
			ids = append(ids, e.ID)
		}
		if qm.NextToken == "" {
			return ids, true
		}
		q.NextToken = qm.NextToken
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
