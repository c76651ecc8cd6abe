package command

import (
	"flag"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api/contexts"
)

// newStatus is the general status command: alone it lists jobs; with an identifier it
// searches every kind of object by prefix (/v1/search) and shows the one it names with that
// kind's own status command.
func newStatus(m Meta) cli.Command {
	var short, asJSON bool
	return &command{Meta: m, name: "status", synopsis: "Display the status output for a resource",
		usage: `
Usage: nomad status [options] [identifier]

  Without an argument, list the jobs of the namespace. With an identifier (an
  ID or a unique prefix of one), find what it names among jobs, allocations,
  evaluations, nodes, deployments, namespaces and node pools, and show it as
  that kind's status command does ("nomad job status", "nomad alloc status",
  ...). A prefix that matches several objects lists them.
`,
		options: []option{
			boolOpt(&asJSON, "-json", "Print the API's JSON instead of tables."),
			boolOpt(&short, "-short", "Show a shorter view, where the object's status command has one."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			pos, code, ok := c.parseAtMostOne(fs, args, "This command takes either no arguments or one: <identifier>")
			if !ok {
				return code
			}
			if len(pos) == 0 {
				return (&JobStatusCommand{Meta: c.Meta}).Run(args)
			}
			client, ok := c.client()
			if !ok {
				return 1
			}
			prefix := pos[0]
			res, _, err := client.Search().PrefixSearch(prefix, contexts.All, nil)
			if err != nil {
				return c.fail("Error querying search with id: %q: %v", prefix, err)
			}

			type found struct {
				kind int
				id   string
			}
			var all []found
			var exact []found
			for i, k := range statusKinds {
				for _, id := range res.Matches[k.ctx] {
					all = append(all, found{i, id})
					if id == prefix {
						exact = append(exact, found{i, id})
					}
				}
			}
			pick := func(f found) int {
				// The kind's own command gets the same flags with the full ID in place of the prefix.
				rest := make([]string, 0, len(args))
				replaced := false
				for _, a := range args {
					if !replaced && a == prefix {
						a, replaced = f.id, true
					}
					rest = append(rest, a)
				}
				if statusKinds[f.kind].ctx != contexts.Jobs && statusKinds[f.kind].ctx != contexts.Allocs {
					rest = dropFlag(rest, "short")
				}
				return statusKinds[f.kind].run(Meta{Ui: c.Ui}, rest)
			}
			switch {
			case len(exact) == 1:
				return pick(exact[0])
			case len(all) == 1:
				return pick(all[0])
			case len(all) == 0:
				return c.fail("No matches found.")
			}
			var b strings.Builder
			fmt.Fprintf(&b, "Prefix matched multiple objects:\n")
			for i, k := range statusKinds {
				var ids []string
				for _, f := range all {
					if f.kind == i {
						ids = append(ids, f.id)
					}
				}
				if len(ids) == 0 {
					continue
				}
				sort.Strings(ids)
				fmt.Fprintf(&b, "\n%s\n", strings.ToUpper(k.noun[:1])+k.noun[1:])
				for _, id := range ids {
					fmt.Fprintf(&b, "  %s\n", id)
				}
			}
			c.Ui.Output(strings.TrimRight(b.String(), "\n"))
			return 0
		},
	}
}

// statusKinds maps the search contexts status follows to the commands that show them, in
// the order an ambiguous prefix is listed.
var statusKinds = []struct {
	ctx  contexts.Context
	noun string
	run  func(m Meta, args []string) int
}{
	{contexts.Jobs, "jobs", func(m Meta, a []string) int { return (&JobStatusCommand{Meta: m}).Run(a) }},
	{contexts.Allocs, "allocations", func(m Meta, a []string) int { return (&AllocStatusCommand{Meta: m}).Run(a) }},
	{contexts.Evals, "evaluations", func(m Meta, a []string) int { return newEvalStatus(m).Run(a) }},
	{contexts.Nodes, "nodes", func(m Meta, a []string) int { return newNodeStatus(m).Run(a) }},
	{contexts.Deployments, "deployments", func(m Meta, a []string) int { return newDeploymentStatus(m).Run(a) }},
	{contexts.Namespaces, "namespaces", func(m Meta, a []string) int { return newNamespaceStatus(m).Run(a) }},
	{contexts.NodePools, "node pools", func(m Meta, a []string) int { return newNodePoolInfo(m).Run(a) }},
}

// dropFlag removes a boolean flag (-name, --name, -name=value) from args.
func dropFlag(args []string, name string) []string {
	out := args[:0:0]
	for _, a := range args {
		trimmed := strings.TrimLeft(a, "-")
		if strings.HasPrefix(a, "-") && (trimmed == name || strings.HasPrefix(trimmed, name+"=")) {
			continue
		}
		out = append(out, a)
	}
	return out
}
