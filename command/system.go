package command

import (
	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

const systemHelp = `
Usage: nomad system <subcommand> [options]

  Cluster-wide maintenance: force a garbage collection, or recount job
  summaries. Both need a management token when ACLs are enabled.
`

const systemReconcileHelp = `
Usage: nomad system reconcile <subcommand> [options]

  Rebuild state derived from other state: "summaries" recounts every job's
  summary from its allocations.
`

// newSystemGC forces a garbage collection of jobs, evaluations, allocations and nodes.
func newSystemGC(m Meta) cli.Command {
	return &command{Meta: m, name: "system gc", synopsis: "Run the system garbage collection process",
		usage: `
Usage: nomad system gc [options]

  Run the garbage collector now, ignoring its age thresholds: stopped and dead
  jobs with their terminal evaluations and allocations, and down nodes, are
  removed. Tagged job versions are kept.
`,
		withClient: func(c *command, client *api.Client, _ []string) int {
			if err := client.System().GarbageCollect(); err != nil {
				return c.fail("Error running system garbage-collection: %v", err)
			}
			return 0
		},
	}
}

// newSystemReconcileSummaries recounts job summaries.
func newSystemReconcileSummaries(m Meta) cli.Command {
	return &command{Meta: m, name: "system reconcile summaries", synopsis: "Reconciles the summaries of all registered jobs",
		usage: `
Usage: nomad system reconcile summaries [options]

  Recount every job's summary (allocations by group and status) from the
  allocations the cluster holds, repairing counts that drifted.
`,
		withClient: func(c *command, client *api.Client, _ []string) int {
			if err := client.System().ReconcileSummaries(); err != nil {
				return c.fail("Error while reconciling job summaries: %v", err)
			}
			c.Ui.Output("Successfully reconciled job summaries")
			return 0
		},
	}
}
