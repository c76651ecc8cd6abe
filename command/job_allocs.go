package command

import (
	"time"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

// newJobAllocs lists a job's allocations.
func newJobAllocs(m Meta) cli.Command {
	var all bool
	var asJSON bool
	return &command{Meta: m, name: "job allocs", synopsis: "List allocations for a job",
		usage: `
Usage: nomad job allocs [options] <job>

  List the allocations of a job.
`,
		options: []option{
			boolOpt(&all, "-all", "Include allocations of earlier instances of the job with the same ID (a\njob purged and registered again)."),
			boolOpt(&asJSON, "-json", "Output the allocations as JSON."),
		},
		args: []string{"<job>"},
		withClient: func(c *command, client *api.Client, pos []string) int {
			allocs, _, err := client.Jobs().Allocations(pos[0], all, nil)
			if err != nil {
				return c.fail("Error retrieving allocations: %v", err)
			}
			return printResult(&c.Meta, allocs, asJSON, func(a []*api.AllocationListStub) string {
				return formatAllocs(a, time.Now())
			})
		},
	}
}

// newJobDeployments lists a job's deployments.
func newJobDeployments(m Meta) cli.Command {
	var latest, asJSON bool
	var all bool
	return &command{Meta: m, name: "job deployments", synopsis: "List deployments for a job",
		usage: `
Usage: nomad job deployments [options] <job>

  List the deployments of a job, newest first.
`,
		options: []option{
			boolOpt(&latest, "-latest", "Show only the latest deployment."),
			boolOpt(&all, "-all", "Include deployments of earlier instances of the job with the same ID."),
			boolOpt(&asJSON, "-json", "Output the deployments as JSON."),
		},
		args: []string{"<job>"},
		withClient: func(c *command, client *api.Client, pos []string) int {
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
		},
	}
}
