package command

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

// newNamespaceApply creates or updates a namespace.
func newNamespaceApply(m Meta) cli.Command {
	description := optString{}
	return &command{Meta: m, name: "namespace apply", synopsis: "Create or update a namespace",
		usage: `
Usage: nomad namespace apply [options] <name | file>

  Create a namespace, or update an existing one. Given a name, settings not
  given on the command line keep their current values. Given a file ("-"
  reads stdin), the file is the whole namespace: settings it leaves out are
  cleared. The file is HCL:

    name        = "dev"
    description = "Developers"
    meta {
      team = "dev"
    }
    capabilities {
      enabled_task_drivers  = ["docker", "exec"]
      disabled_task_drivers = ["raw_exec"]
      disabled_network_modes = ["host"]
    }

  or the JSON form of the API's Namespace object. A capabilities block is
  enforced when jobs are registered, planned, reverted and dispatched.
`,
		options: []option{
			valueOpt(&description, "-description=<text>", "Human-readable description of the namespace."),
		},
		args: []string{"<name | file>"},
		withClient: func(c *command, client *api.Client, pos []string) int {
			var ns *api.Namespace
			if isSpecFile(pos[0]) {
				src, err := readInput(pos[0], nil)
				if err != nil {
					return c.fail("Error reading %s: %v", pos[0], err)
				}
				if ns, err = parseNamespaceSpec(src); err != nil {
					return c.fail("Error parsing namespace: %v", err)
				}
			} else {
				var err error
				ns, _, err = client.Namespaces().Info(pos[0], nil)
				switch {
				case isNotFound(err):
					ns = &api.Namespace{Name: pos[0]}
				case err != nil:
					return c.fail("Error looking up namespace: %v", err)
				}
			}
			if description.set {
				ns.Description = description.v
			}
			if _, err := client.Namespaces().Register(ns, nil); err != nil {
				return c.fail("Error applying namespace: %v", err)
			}
			c.Ui.Output(fmt.Sprintf("Successfully applied namespace %q!", ns.Name))
			return 0
		},
	}
}

func newNamespaceList(m Meta) cli.Command {
	return &readCommand[[]*api.Namespace]{Meta: m, name: "namespace list",
		synopsis: "List namespaces", jsonWhat: "the namespaces",
		usage: `
Usage: nomad namespace list [options]

  List the namespaces the token can see.
`,
		fetch: func(client *api.Client, _ []string) ([]*api.Namespace, error) {
			return queried(client.Namespaces().List(nil))
		},
		failure: "Error listing namespaces: %v", format: formatNamespaceList}
}

// formatNamespaceList sorts the list by name; -json keeps the agent's order.
func formatNamespaceList(list []*api.Namespace) string {
	if len(list) == 0 {
		return "No namespaces found"
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	rows := []string{"Name|Description"}
	for _, ns := range list {
		rows = append(rows, ns.Name+"|"+ns.Description)
	}
	return formatList(rows)
}

func newNamespaceStatus(m Meta) cli.Command {
	return &readCommand[*api.Namespace]{Meta: m, name: "namespace status", args: []string{"<name>"},
		synopsis: "Show a namespace", jsonWhat: "the namespace",
		usage: `
Usage: nomad namespace status [options] <name>

  Show a namespace's settings.
`,
		fetch: func(client *api.Client, pos []string) (*api.Namespace, error) {
			return queried(client.Namespaces().Info(pos[0], nil))
		},
		failure: "Error looking up namespace: %v", format: formatNamespace}
}

func formatNamespace(ns *api.Namespace) string {
	rows := []string{
		"Name|" + ns.Name,
		"Description|" + ns.Description,
		"Quota|" + orNone(ns.Quota),
	}
	if len(ns.Meta) > 0 {
		keys := slices.Sorted(maps.Keys(ns.Meta))
		pairs := make([]string, len(keys))
		for i, k := range keys {
			pairs[i] = k + "=" + ns.Meta[k]
		}
		rows = append(rows, "Metadata|"+strings.Join(pairs, ","))
	}
	// Shown even when unset: a reader checking whether raw_exec is kept out must see that
	// nothing is, not an absent line.
	c := ns.Capabilities
	if c == nil {
		c = &api.NamespaceCapabilities{}
	}
	rows = append(rows,
		"Enabled Task Drivers|"+orAll(c.EnabledTaskDrivers),
		"Disabled Task Drivers|"+orNone(strings.Join(c.DisabledTaskDrivers, ",")),
		"Enabled Network Modes|"+orAll(c.EnabledNetworkModes),
		"Disabled Network Modes|"+orNone(strings.Join(c.DisabledNetworkModes, ",")),
	)
	return formatKV(rows)
}

func newNamespaceDelete(m Meta) cli.Command {
	return &deleteCommand{Meta: m, name: "namespace delete", arg: "<name>", synopsis: "Delete a namespace",
		usage: `
Usage: nomad namespace delete [options] <name>

  Delete a namespace. The agent refuses while the namespace still holds
  jobs; the "default" namespace cannot be deleted.
`,
		del:     func(client *api.Client, name string) error { return written(client.Namespaces().Delete(name, nil)) },
		failure: "Error deleting namespace: %v", done: "Successfully deleted namespace %q!"}
}

// orAll shows an empty allow list as what it means.
func orAll(list []string) string {
	if len(list) == 0 {
		return "<all>"
	}
	return strings.Join(list, ",")
}

// newNamespaceInspect prints a namespace as the API returns it.
func newNamespaceInspect(m Meta) cli.Command {
	var tmpl string
	return &command{Meta: m, name: "namespace inspect", synopsis: "Inspect a namespace",
		usage: `
Usage: nomad namespace inspect [options] <name>

  Print a namespace as JSON, as the API returns it.
`,
		options: []option{
			flagOpt(&tmpl, "", "-t=<template>", "Format the namespace with a Go template instead."),
		},
		args: []string{"<name>"},
		withClient: func(c *command, client *api.Client, pos []string) int {
			ns, _, err := client.Namespaces().Info(pos[0], nil)
			if err != nil {
				return c.fail("Error looking up namespace: %v", err)
			}
			return printTemplated(&c.Meta, ns, tmpl == "", tmpl, nil)
		},
	}
}
