package command

import (
	"flag"
	"fmt"
	"sort"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

const pluginHelp = `
Usage: nomad plugin <subcommand> [options] [args]

  Inspect the storage plugins that nodes and controllers run.
`

// newPluginStatus lists CSI plugins or shows one.
func newPluginStatus(m Meta) cli.Command {
	var pluginType string
	var verbose bool
	var asJSON bool
	var tmpl string
	return &command{Meta: m, name: "plugin status", synopsis: "Display status information about plugins",
		usage: `
Usage: nomad plugin status [options] [plugin]

  Without a plugin, list the CSI plugins and how many of their controllers and
  node instances are healthy. With a plugin ID or unique prefix, show that
  plugin. This build runs no CSI plugins, so the list is empty. Needs
  plugin:read access when ACLs are on.
`,
		heading: "Plugin Status",
		options: []option{
			flagOpt(&pluginType, "csi", "-type=csi", "The plugin type; csi is the only one."),
			boolOpt(&verbose, "-verbose", "Show full IDs."),
			boolOpt(&asJSON, "-json", "Print the API's JSON."),
			flagOpt(&tmpl, "", "-t=<template>", "Format the response with a Go template."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			pos, code, ok := c.parseAtMostOne(fs, args, "This command takes either no arguments or one: <plugin>")
			if !ok {
				return code
			}
			if pluginType != "csi" {
				return c.fail("Unsupported plugin type %q: the only type is csi", pluginType)
			}
			client, ok := c.client()
			if !ok {
				return 1
			}
			var q *api.QueryOptions
			if len(pos) == 1 {
				q = &api.QueryOptions{Prefix: pos[0]}
			}
			plugins, _, err := client.CSIPlugins().List(q)
			if err != nil {
				return c.fail("Error querying CSI plugins: %v", err)
			}
			sort.Slice(plugins, func(i, j int) bool { return plugins[i].ID < plugins[j].ID })
			if len(pos) == 0 {
				return printTemplated(&c.Meta, plugins, asJSON, tmpl, func(ps []*api.CSIPluginListStub) string {
					return "Container Storage Interface\n" + formatPluginList(ps, verbose)
				})
			}
			id := pos[0]
			switch {
			case len(plugins) == 0:
				return c.fail("No plugin(s) with prefix or ID %q found", id)
			case len(plugins) > 1 && plugins[0].ID != id:
				return c.fail("Prefix matched multiple plugins\n\n%s", formatPluginList(plugins, true))
			}
			plugin, _, err := client.CSIPlugins().Info(plugins[0].ID, nil)
			if err != nil {
				return c.fail("Error querying CSI plugin: %v", err)
			}
			return printTemplated(&c.Meta, plugin, asJSON, tmpl, func(p *api.CSIPlugin) string {
				return formatKV([]string{
					"ID|" + p.ID,
					"Provider|" + p.Provider,
					"Version|" + p.Version,
					fmt.Sprintf("Controllers Healthy|%d", p.ControllersHealthy),
					fmt.Sprintf("Controllers Expected|%d", p.ControllersExpected),
					fmt.Sprintf("Nodes Healthy|%d", p.NodesHealthy),
					fmt.Sprintf("Nodes Expected|%d", p.NodesExpected),
				})
			})
		},
	}
}

func formatPluginList(plugins []*api.CSIPluginListStub, verbose bool) string {
	if len(plugins) == 0 {
		return "No CSI plugins"
	}
	rows := []string{"ID|Provider|Controllers Healthy/Expected|Nodes Healthy/Expected"}
	for _, p := range plugins {
		id := p.ID
		// Plugin IDs are names, not UUIDs: shortID's cut would make them ambiguous.
		if !verbose && len(id) > 20 {
			id = id[:20]
		}
		rows = append(rows, fmt.Sprintf("%s|%s|%d/%d|%d/%d", id, p.Provider,
			p.ControllersHealthy, p.ControllersExpected, p.NodesHealthy, p.NodesExpected))
	}
	return formatList(rows)
}
