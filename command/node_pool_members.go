package command

import (
	"flag"

	"github.com/hashicorp/nomad/api"
)

// NodePoolInitCommand writes an example node pool specification.
type NodePoolInitCommand struct {
	Meta
}

var nodePoolSpecExample = specInit{
	noun:           "node pool",
	defaultHCLFile: "pool.nomad.hcl",
	defaultJSON:    "pool.nomad.json",
	hcl: `# A node pool specification, as "nomad node pool apply" reads it.
#
# Clients join a pool with node_pool = "<name>" in their client block; jobs
# run in it with node_pool = "<name>".
node_pool "example" {
  description = "An example node pool"

  # Free-form metadata, shown by "nomad node pool info".
  meta {
    owner = "platform-team"
  }

  # How the scheduler packs this pool's nodes: "binpack" or "spread". Omit
  # it to use the cluster's scheduler configuration.
  # scheduler_config {
  #   scheduler_algorithm = "spread"
  # }
}
`,
	json: `{
  "Name": "example",
  "Description": "An example node pool",
  "Meta": {
    "owner": "platform-team"
  }
}
`,
}

func (c *NodePoolInitCommand) Help() string {
	return helpText(`
Usage: nomad node pool init [options] [<filename>]

  Write an example node pool specification to a file, to edit and then apply
  with "nomad node pool apply <filename>".
`, nodePoolSpecExample.options())
}

func (c *NodePoolInitCommand) Synopsis() string {
	return "Create an example node pool specification file"
}

func (c *NodePoolInitCommand) Run(args []string) int {
	return nodePoolSpecExample.run(&c.Meta, c.FlagSet("node pool init"), args)
}

// listFlags are the flags of the node pool listings: a filter expression, paging, and
// the output forms.
type listFlags struct {
	filter, pageToken, tmpl string
	perPage                 int
	asJSON                  bool
}

func (l *listFlags) register(m *Meta, name string) *flag.FlagSet {
	fs := m.FlagSet(name)
	fs.StringVar(&l.filter, "filter", "", "")
	fs.StringVar(&l.pageToken, "page-token", "", "")
	fs.IntVar(&l.perPage, "per-page", 0, "")
	fs.StringVar(&l.tmpl, "t", "", "")
	fs.BoolVar(&l.asJSON, "json", false, "")
	return fs
}

func (l *listFlags) query() *api.QueryOptions {
	return &api.QueryOptions{Filter: l.filter, NextToken: l.pageToken, PerPage: int32(l.perPage)}
}

// nextPage tells how to get the page after this one, when there is one.
func (l *listFlags) nextPage(m *Meta, qm *api.QueryMeta, command string) {
	if qm != nil && qm.NextToken != "" && !l.asJSON && l.tmpl == "" {
		m.Ui.Output("\nResults have been paginated. To get the next page run:\n\n" +
			command + " -page-token " + qm.NextToken)
	}
}

const listOptionsHelp = `
  -filter=<expression>
    Only the results the filter expression selects.

  -per-page=<n>
    How many results to show per page.

  -page-token=<token>
    Where to start the page, as a previous page printed it.

  -json
    Print the results as JSON.

  -t=<template>
    Format the results with a Go template.
`

// NodePoolJobsCommand lists the jobs of a node pool.
type NodePoolJobsCommand struct {
	Meta
}

func (c *NodePoolJobsCommand) Help() string {
	return helpText(`
Usage: nomad node pool jobs [options] <pool>

  List the jobs that run in a node pool, in the namespaces the token may
  list jobs of ("-namespace=*" for every namespace).
`, "\nJobs Options:\n"+listOptionsHelp)
}

func (c *NodePoolJobsCommand) Synopsis() string { return "List the jobs of a node pool" }

func (c *NodePoolJobsCommand) Run(args []string) int {
	var lf listFlags
	pos, client, code, ok := c.connect(lf.register(&c.Meta, "node pool jobs"), args, "<pool>")
	if !ok {
		return code
	}
	jobs, qm, err := client.NodePools().ListJobs(pos[0], lf.query())
	if err != nil {
		return c.fail("Error listing the jobs of node pool %q: %v", pos[0], err)
	}
	code = printTemplated(&c.Meta, jobs, lf.asJSON, lf.tmpl, func(jobs []*api.JobListStub) string {
		if len(jobs) == 0 {
			return "No jobs found"
		}
		return formatJobList(jobs, true)
	})
	if code == 0 {
		lf.nextPage(&c.Meta, qm, "nomad node pool jobs "+pos[0])
	}
	return code
}

// NodePoolNodesCommand lists the nodes of a node pool.
type NodePoolNodesCommand struct {
	Meta
}

func (c *NodePoolNodesCommand) Help() string {
	return helpText(`
Usage: nomad node pool nodes [options] <pool>

  List the nodes in a node pool.
`, "\nNodes Options:\n"+listOptionsHelp+`
  -verbose
    Show full node IDs, addresses and versions.
`)
}

func (c *NodePoolNodesCommand) Synopsis() string { return "List the nodes of a node pool" }

func (c *NodePoolNodesCommand) Run(args []string) int {
	var lf listFlags
	var verbose bool
	fs := lf.register(&c.Meta, "node pool nodes")
	fs.BoolVar(&verbose, "verbose", false, "")
	pos, client, code, ok := c.connect(fs, args, "<pool>")
	if !ok {
		return code
	}
	nodes, qm, err := client.NodePools().ListNodes(pos[0], lf.query())
	if err != nil {
		return c.fail("Error listing the nodes of node pool %q: %v", pos[0], err)
	}
	code = printTemplated(&c.Meta, nodes, lf.asJSON, lf.tmpl, func(nodes []*api.NodeListStub) string {
		if len(nodes) == 0 {
			return "No nodes found"
		}
		return formatNodeList(nodes, verbose)
	})
	if code == 0 {
		lf.nextPage(&c.Meta, qm, "nomad node pool nodes "+pos[0])
	}
	return code
}
