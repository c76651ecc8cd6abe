package command

import (
	"time"

	"github.com/hashicorp/nomad/api"
)

// JobAllocsCommand lists a job's allocations.
type JobAllocsCommand struct {
	Meta
	all    bool
	asJSON bool
}

func (c *JobAllocsCommand) Help() string {
	return helpText(`
Usage: nomad job allocs [options] <job>

  List the allocations of a job.
`, optionsHelp("Allocs", c.options()))
}

func (c *JobAllocsCommand) options() []option {
	return []option{
		boolOpt(&c.all, "-all", "Include allocations of earlier instances of the job with the same ID (a\njob purged and registered again)."),
		boolOpt(&c.asJSON, "-json", "Output the allocations as JSON."),
	}
}

func (c *JobAllocsCommand) Synopsis() string { return "List allocations for a job" }

func (c *JobAllocsCommand) Run(args []string) int {
	fs := c.flagSetWith("job allocs", c.options())
	pos, client, code, ok := c.connect(fs, args, "<job>")
	if !ok {
		return code
	}
	allocs, _, err := client.Jobs().Allocations(pos[0], c.all, nil)
	if err != nil {
		return c.fail("Error retrieving allocations: %v", err)
	}
	return printResult(&c.Meta, allocs, c.asJSON, func(a []*api.AllocationListStub) string {
		return formatAllocs(a, time.Now())
	})
}

// JobDeploymentsCommand lists a job's deployments.
type JobDeploymentsCommand struct {
	Meta
	latest bool
	all    bool
	asJSON bool
}

func (c *JobDeploymentsCommand) Help() string {
	return helpText(`
Usage: nomad job deployments [options] <job>

  List the deployments of a job, newest first.
`, optionsHelp("Deployments", c.options()))
}

func (c *JobDeploymentsCommand) options() []option {
	return []option{
		boolOpt(&c.latest, "-latest", "Show only the latest deployment."),
		boolOpt(&c.all, "-all", "Include deployments of earlier instances of the job with the same ID."),
		boolOpt(&c.asJSON, "-json", "Output the deployments as JSON."),
	}
}

func (c *JobDeploymentsCommand) Synopsis() string { return "List deployments for a job" }

func (c *JobDeploymentsCommand) Run(args []string) int {
	fs := c.flagSetWith("job deployments", c.options())
	pos, client, code, ok := c.connect(fs, args, "<job>")
	if !ok {
		return code
	}
	if c.latest {
		d, _, err := client.Jobs().LatestDeployment(pos[0], nil)
		if err != nil {
			return c.fail("Error retrieving deployments: %v", err)
		}
		if d == nil {
			if c.asJSON {
				return c.printJSON(nil)
			}
			c.Ui.Output("No deployment found")
			return 0
		}
		return printResult(&c.Meta, d, c.asJSON, formatDeployment)
	}
	list, _, err := client.Jobs().Deployments(pos[0], c.all, nil)
	if err != nil {
		return c.fail("Error retrieving deployments: %v", err)
	}
	return printResult(&c.Meta, list, c.asJSON, formatDeploymentList)
}
