package command

import (
	"time"

	"github.com/hashicorp/nomad/api"
)

// JobAllocsCommand lists a job's allocations.
type JobAllocsCommand struct {
	Meta
}

func (c *JobAllocsCommand) Help() string {
	return helpText(`
Usage: nomad job allocs [options] <job>

  List the allocations of a job.
`, `
Allocs Options:

  -all
    Include allocations of earlier instances of the job with the same ID (a
    job purged and registered again).

  -json
    Output the allocations as JSON.
`)
}

func (c *JobAllocsCommand) Synopsis() string { return "List allocations for a job" }

func (c *JobAllocsCommand) Run(args []string) int {
	var all, asJSON bool
	fs := c.FlagSet("job allocs")
	fs.BoolVar(&all, "all", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	pos, client, code, ok := c.connect(fs, args, "<job>")
	if !ok {
		return code
	}
	allocs, _, err := client.Jobs().Allocations(pos[0], all, nil)
	if err != nil {
		return c.fail("Error retrieving allocations: %v", err)
	}
	return printResult(&c.Meta, allocs, asJSON, func(a []*api.AllocationListStub) string {
		return formatAllocs(a, time.Now())
	})
}

// JobDeploymentsCommand lists a job's deployments.
type JobDeploymentsCommand struct {
	Meta
}

func (c *JobDeploymentsCommand) Help() string {
	return helpText(`
Usage: nomad job deployments [options] <job>

  List the deployments of a job, newest first.
`, `
Deployments Options:

  -latest
    Show only the latest deployment.

  -all
    Include deployments of earlier instances of the job with the same ID.

  -json
    Output the deployments as JSON.
`)
}

func (c *JobDeploymentsCommand) Synopsis() string { return "List deployments for a job" }

func (c *JobDeploymentsCommand) Run(args []string) int {
	var latest, all, asJSON bool
	fs := c.FlagSet("job deployments")
	fs.BoolVar(&latest, "latest", false, "")
	fs.BoolVar(&all, "all", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	pos, client, code, ok := c.connect(fs, args, "<job>")
	if !ok {
		return code
	}
	if latest {
		d, _, err := client.Jobs().LatestDeployment(pos[0], nil)
		if err != nil {
			return c.fail("Error retrieving deployments: %v", err)
		}
		if d == nil {
			if asJSON {
				return c.printJSON(nil)
			}
			c.Ui.Output("No deployment found")
			return 0
		}
		return printResult(&c.Meta, d, asJSON, formatDeployment)
	}
	list, _, err := client.Jobs().Deployments(pos[0], all, nil)
	if err != nil {
		return c.fail("Error retrieving deployments: %v", err)
	}
	return printResult(&c.Meta, list, asJSON, formatDeploymentList)
}
