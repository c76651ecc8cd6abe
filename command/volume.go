package command

import (
	"flag"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

const volumeHelp = `
Usage: nomad volume <subcommand> [options] [args]

  Inspect the host volumes the clients offer. Volumes are declared in each
  client's configuration ("host_volume" blocks); CSI and dynamic host
  volumes are not built here, so the subcommands that create, register,
  claim, detach, snapshot or delete them answer with that sentence.
`

// volumeUnavailable is why upstream's volume write commands have nothing to act on here.
var volumeUnavailable = unavailableFeature{
	"CSI volumes and dynamic host volumes are not built in this project: host volumes are declared in the client configuration's host_volume blocks, and \"nomad volume status\" lists them.",
	[]string{
		"volume create", "volume register", "volume deregister", "volume delete", "volume detach",
		"volume init", "volume snapshot", "volume snapshot create", "volume snapshot delete",
		"volume snapshot list", "volume claim", "volume claim list", "volume claim delete",
	},
}

// newVolumeStatus lists the host volumes as the nodes report them.
func newVolumeStatus(m Meta) cli.Command {
	var typ, nodePrefix, pool, tmpl string
	var asJSON bool
	return &command{Meta: m, name: "volume status", synopsis: "Display status information about volumes",
		usage: `
Usage: nomad volume status [options] [<name>]

  List the host volumes every node offers, as the nodes report them from their
  configuration. With a name, show only the volumes of that name.
`,
		options: []option{
			flagOpt(&typ, "host", "-type=<type>", "Only \"host\" (the default) is built; \"csi\" answers that CSI is not built."),
			flagOpt(&nodePrefix, "", "-node=<node-id>", "Only the volumes of nodes whose ID starts with this prefix."),
			flagOpt(&pool, "", "-node-pool=<pool>", "Only the volumes of nodes in this node pool."),
			boolOpt(&asJSON, "-json", "Print the volumes as JSON."),
			flagOpt(&tmpl, "", "-t=<template>", "Format the volumes with a Go template."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			pos, code, ok := c.parseAtMostOne(fs, args, "This command takes either no arguments or one: <name>")
			if !ok {
				return code
			}
			switch typ {
			case "host":
			case "csi":
				return c.fail("%s", volumeUnavailable.sentence)
			default:
				return c.fail("Invalid -type %q: one of host, csi", typ)
			}
			client, ok := c.client()
			if !ok {
				return 1
			}
			stubs, _, err := client.Nodes().List(&api.QueryOptions{Prefix: nodePrefix})
			if err != nil {
				return c.fail("Error listing nodes: %v", err)
			}
			rows := []hostVolumeRow{}
			for _, stub := range stubs {
				if pool != "" && stub.NodePool != pool {
					continue
				}
				// The list stub leaves the volumes out; the node itself has them.
				node, _, err := client.Nodes().Info(stub.ID, nil)
				if err != nil {
					return c.fail("Error reading node %s: %v", shortID(stub.ID), err)
				}
				for name, hv := range node.HostVolumes {
					if hv == nil || (len(pos) == 1 && name != pos[0]) {
						continue
					}
					rows = append(rows, hostVolumeRow{
						Name: name, NodeID: node.ID, NodeName: node.Name, NodePool: node.NodePool,
						Path: hv.Path, ReadOnly: hv.ReadOnly,
					})
				}
			}
			sort.Slice(rows, func(i, j int) bool {
				if rows[i].Name != rows[j].Name {
					return rows[i].Name < rows[j].Name
				}
				return rows[i].NodeID < rows[j].NodeID
			})
			if len(pos) == 1 && len(rows) == 0 {
				return c.fail("No host volume named %q on any node", pos[0])
			}
			return printTemplated(&c.Meta, rows, asJSON, tmpl, formatHostVolumes)
		},
	}
}

// hostVolumeRow is one volume on one node: the shape -json prints.
type hostVolumeRow struct {
	Name     string
	NodeID   string
	NodeName string
	NodePool string
	Path     string
	ReadOnly bool
}

func formatHostVolumes(rows []hostVolumeRow) string {
	if len(rows) == 0 {
		return "No host volumes"
	}
	out := []string{"Name|Node ID|Node Name|Node Pool|Path|Read Only"}
	for _, r := range rows {
		out = append(out, strings.Join([]string{r.Name, shortID(r.NodeID), r.NodeName, r.NodePool, r.Path, fmt.Sprint(r.ReadOnly)}, "|"))
	}
	return "Host Volumes\n" + formatList(out)
}

const pluginHelp = `
Usage: nomad plugin <subcommand> [options] [args]

  Inspect the storage plugins that nodes and controllers run.
`

// newPluginStatus lists CSI plugins or shows one.
func newPluginStatus(m Meta) cli.Command {
	var pluginType string
	var verbose, asJSON bool
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
