package command

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

const serviceHelp = `
Usage: nomad service <subcommand> [options] [args]

  List, read and delete the registrations of services whose provider is
  "nomad": clients register them while the tasks that serve them run.
`

// newServiceList lists the service names of a namespace.
func newServiceList(m Meta) cli.Command {
	var asJSON bool
	return &command{Meta: m, name: "service list", synopsis: "List service registrations",
		usage: `
Usage: nomad service list [options]

  List the services registered in the namespace (-namespace; "*" lists every
  namespace the token may read), each with the tags of its instances.
`,
		options: []option{
			boolOpt(&asJSON, "-json", "Print the list as JSON."),
		},
		withClient: func(c *command, client *api.Client, _ []string) int {
			list, _, err := client.Services().List(nil)
			if err != nil {
				return c.fail("Error listing service registrations: %v", err)
			}
			allNS := c.Namespace() == "*"
			return printResult(&c.Meta, list, asJSON, func(list []*api.ServiceRegistrationListStub) string {
				return formatServiceList(list, allNS)
			})
		},
	}
}

func formatServiceList(list []*api.ServiceRegistrationListStub, allNS bool) string {
	header := "Service Name|Tags"
	if allNS {
		header = "Service Name|Namespace|Tags"
	}
	rows := []string{header}
	for _, ns := range list {
		for _, s := range ns.Services {
			tags := "[" + strings.Join(s.Tags, ",") + "]"
			if allNS {
				rows = append(rows, s.ServiceName+"|"+ns.Namespace+"|"+tags)
			} else {
				rows = append(rows, s.ServiceName+"|"+tags)
			}
		}
	}
	if len(rows) == 1 {
		return "No service registrations found"
	}
	return formatList(rows)
}

// newServiceInfo shows the instances of one service.
func newServiceInfo(m Meta) cli.Command {
	var asJSON, verbose bool
	return &command{Meta: m, name: "service info", synopsis: "Show the instances of a service",
		usage: `
Usage: nomad service info [options] <service name>

  Show the registered instances of a service in the namespace.
`,
		options: []option{
			boolOpt(&asJSON, "-json", "Print the registrations as JSON."),
			boolOpt(&verbose, "-verbose", "Show every field of each registration, with full IDs, and the latest\nresults of the service's checks, read from the client running its\nallocation (read-job)."),
		},
		args: []string{"<service name>"},
		withClient: func(c *command, client *api.Client, pos []string) int {
			regs, _, err := client.Services().Get(pos[0], nil)
			if err != nil {
				return c.fail("Error listing service registrations: %v", err)
			}
			if len(regs) == 0 && !asJSON {
				c.Ui.Output("No service registrations found")
				return 0
			}
			return printResult(&c.Meta, regs, asJSON, func(regs []*api.ServiceRegistration) string {
				if verbose {
					return formatServicesVerbose(regs, func(r *api.ServiceRegistration) string { return serviceChecks(client, r) })
				}
				return formatServiceInstances(regs)
			})
		},
	}
}

func serviceAddr(r *api.ServiceRegistration) string {
	return net.JoinHostPort(r.Address, strconv.Itoa(r.Port))
}

func formatServiceInstances(regs []*api.ServiceRegistration) string {
	rows := []string{"Job ID|Address|Tags|Node ID|Alloc ID"}
	for _, r := range regs {
		rows = append(rows, fmt.Sprintf("%s|%s|[%s]|%s|%s", r.JobID, serviceAddr(r), strings.Join(r.Tags, ","),
			shortID(r.NodeID), shortID(r.AllocID)))
	}
	return formatList(rows)
}

// serviceChecks summarises the checks of one registration's service in its allocation, as
// "name: status" pairs; the registration itself carries no health.
func serviceChecks(client *api.Client, r *api.ServiceRegistration) string {
	st, err := client.Allocations().Checks(r.AllocID, &api.QueryOptions{Namespace: r.Namespace})
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	var parts []string
	for _, c := range st {
		if c.Service == r.ServiceName {
			parts = append(parts, c.Check+": "+c.Status)
		}
	}
	if len(parts) == 0 {
		return "<none>"
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func formatServicesVerbose(regs []*api.ServiceRegistration, checks func(*api.ServiceRegistration) string) string {
	blocks := make([]string, 0, len(regs))
	for _, r := range regs {
		blocks = append(blocks, formatKV([]string{
			"ID|" + r.ID,
			"Service Name|" + r.ServiceName,
			"Namespace|" + r.Namespace,
			"Job ID|" + r.JobID,
			"Alloc ID|" + r.AllocID,
			"Node ID|" + r.NodeID,
			"Datacenter|" + r.Datacenter,
			"Address|" + serviceAddr(r),
			"Tags|[" + strings.Join(r.Tags, ",") + "]",
			"Checks|" + checks(r),
		}))
	}
	return strings.Join(blocks, "\n\n")
}

// ServiceDeleteCommand deletes one registration.
type ServiceDeleteCommand struct {
	Meta
}

func (c *ServiceDeleteCommand) Help() string {
	return helpText(`
Usage: nomad service delete [options] <service name> <service id>

  Delete one registration of a service. The client that registered it
  registers it again while its task runs; stop the task to remove it for good.
`, "")
}

func (c *ServiceDeleteCommand) Synopsis() string { return "Delete a service registration" }

func (c *ServiceDeleteCommand) Run(args []string) int {
	pos, client, code, ok := c.connect(c.FlagSet("service delete"), args, "<service name>", "<service id>")
	if !ok {
		return code
	}
	if _, err := client.Services().Delete(pos[0], pos[1], nil); err != nil {
		return c.fail("Error deleting service registration: %v", err)
	}
	c.Ui.Output("Successfully deleted service registration")
	return 0
}
