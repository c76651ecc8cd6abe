package command

import (
	"flag"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

// newAllocChecks prints the latest results of an allocation's nomad service checks.
func newAllocChecks(m Meta) cli.Command {
	var verbose, asJSON bool
	var tmpl string
	return &command{Meta: m, name: "alloc checks", synopsis: "Print the check results of an allocation",
		usage: `
Usage: nomad alloc checks [options] <allocation>

  Print the latest result of each check of the allocation's services that use
  the Nomad service provider, as the client running the allocation last saw it.

  <allocation> is an allocation ID or a unique prefix of at least two
  characters.

  When ACLs are enabled, this needs read-job in the allocation's namespace.
`,
		options: []option{
			boolOpt(&verbose, "-verbose", "Show full allocation IDs."),
			boolOpt(&asJSON, "-json", "Print the check results as JSON."),
			flagOpt(&tmpl, "", "-t <template>", "Format the check results with a Go template."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			pos, code, ok := c.parseArgs(fs, args, "<allocation>")
			if !ok {
				return code
			}
			client, alloc, ok := c.clientAlloc(pos[0], false)
			if !ok {
				return 1
			}
			checks, err := client.Allocations().Checks(alloc.ID, &api.QueryOptions{Namespace: alloc.Namespace})
			if err != nil {
				return c.fail("Error querying the allocation's checks: %v", err)
			}
			return printTemplated(&c.Meta, checks, asJSON, tmpl, func(checks api.AllocCheckStatuses) string {
				return formatAllocChecks(checks)
			})
		},
	}
}

// formatAllocChecks prints one block per check, ordered by service then check name.
func formatAllocChecks(checks api.AllocCheckStatuses) string {
	if len(checks) == 0 {
		return "No Nomad service checks in this allocation"
	}
	list := make([]api.AllocCheckStatus, 0, len(checks))
	for _, s := range checks {
		list = append(list, s)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].Service != list[j].Service {
			return list[i].Service < list[j].Service
		}
		return list[i].Check < list[j].Check
	})
	blocks := []string{fmt.Sprintf("Status of %d Nomad Service Checks", len(list))}
	for _, s := range list {
		task := s.Task
		if task == "" {
			task = "(group)"
		}
		rows := []string{
			"ID|" + s.ID,
			"Name|" + s.Check,
			"Group|" + s.Group,
			"Task|" + task,
			"Service|" + s.Service,
			"Status|" + s.Status,
		}
		if s.StatusCode != 0 {
			rows = append(rows, fmt.Sprintf("StatusCode|%d", s.StatusCode))
		}
		rows = append(rows,
			"Mode|"+s.Mode,
			"Timestamp|"+time.Unix(s.Timestamp, 0).Format(time.RFC3339),
			"Output|"+strings.TrimSpace(s.Output),
		)
		blocks = append(blocks, formatKV(rows))
	}
	return strings.Join(blocks, "\n\n")
}
