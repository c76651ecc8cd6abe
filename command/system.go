package command

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

// SystemGCCommand forces a garbage collection of jobs, evaluations, allocations and nodes.
type SystemGCCommand struct {
	Meta
}

func (c *SystemGCCommand) Help() string {
	return helpText(`
Usage: nomad system gc [options]

  Run the garbage collector now, ignoring its age thresholds: stopped and dead
  jobs with their terminal evaluations and allocations, and down nodes, are
  removed. Tagged job versions are kept.
`, "")
}

func (c *SystemGCCommand) Synopsis() string { return "Run the system garbage collection process" }

func (c *SystemGCCommand) Run(args []string) int {
	fs := c.FlagSet("system gc")
	_, client, code, ok := c.connect(fs, args)
	if !ok {
		return code
	}
	if err := client.System().GarbageCollect(); err != nil {
		return c.fail("Error running system garbage-collection: %v", err)
	}
	return 0
}

// SystemReconcileSummariesCommand recounts job summaries.
type SystemReconcileSummariesCommand struct {
	Meta
}

func (c *SystemReconcileSummariesCommand) Help() string {
	return helpText(`
Usage: nomad system reconcile summaries [options]

  Recount every job's summary (allocations by group and status) from the
  allocations the cluster holds, repairing counts that drifted.
`, "")
}

func (c *SystemReconcileSummariesCommand) Synopsis() string {
	return "Reconciles the summaries of all registered jobs"
}

func (c *SystemReconcileSummariesCommand) Run(args []string) int {
	fs := c.FlagSet("system reconcile summaries")
	_, client, code, ok := c.connect(fs, args)
	if !ok {
		return code
	}
	if err := client.System().ReconcileSummaries(); err != nil {
		return c.fail("Error while reconciling job summaries: %v", err)
	}
	c.Ui.Output("Successfully reconciled job summaries")
	return 0
}
