package command

import (
	"flag"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

const nodeHelp = `
Usage: nomad node <subcommand> [options] [args]

  Interact with client nodes: list them and show one, drain them, mark
  them eligible or ineligible for new allocations, and create the
  introduction tokens new nodes join with.
`

// newNodeStatus lists nodes or shows one.
func newNodeStatus(m Meta) cli.Command {
	var self, verbose, asJSON bool
	return &command{Meta: m, name: "node status", synopsis: "Display status information about nodes",
		usage: `
Usage: nomad node status [options] [node]

  Without a node, list every node. With a node ID or a unique prefix, show
  that node and its allocations. Needs node read access when ACLs are on.
`,
		heading: "Node Status",
		options: []option{
			boolOpt(&self, "-self", "Show the node of the agent the command talks to."),
			boolOpt(&verbose, "-verbose", "Show full IDs, and the address and version of each node."),
			boolOpt(&asJSON, "-json", "Print the API's JSON."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			pos, code, ok := c.parse(fs, args)
			if !ok {
				return code
			}
			if len(pos) > 1 || (self && len(pos) > 0) {
				return c.fail("This command takes either one argument or -self: <node>")
			}
			client, ok := c.client()
			if !ok {
				return 1
			}
			if len(pos) == 0 && !self {
				nodes, _, err := client.Nodes().List(nil)
				if err != nil {
					return c.fail("Error querying node status: %v", err)
				}
				sort.Slice(nodes, func(i, j int) bool { return nodes[i].ID < nodes[j].ID })
				return printResult(&c.Meta, nodes, asJSON, func(ns []*api.NodeListStub) string { return formatNodeList(ns, verbose) })
			}
			nodeID, ok := c.nodeArg(client, pos, self)
			if !ok {
				return 1
			}
			node, _, err := client.Nodes().Info(nodeID, nil)
			if err != nil {
				return c.fail("Error querying node info: %v", err)
			}
			if asJSON {
				return c.printJSON(node)
			}
			allocs, _, err := client.Nodes().Allocations(nodeID, nil)
			if err != nil {
				return c.fail("Error querying node allocations: %v", err)
			}
			// Only a ready node's client answers; the others are shown without host statistics.
			var stats *api.HostStats
			if node.Status == "ready" {
				if stats, err = client.Nodes().Stats(nodeID, nil); err != nil {
					c.Ui.Warn(fmt.Sprintf("Couldn't retrieve the node's host statistics: %v", err))
				}
			}
			c.Ui.Output(formatNode(node, allocs, verbose, time.Now(), stats))
			return 0
		},
	}
}

// formatNodeList is upstream's node table.
func formatNodeList(nodes []*api.NodeListStub, verbose bool) string {
	if len(nodes) == 0 {
		return "No nodes registered"
	}
	head := "ID|Node Pool|DC|Name|Class|Drain|Eligibility|Status"
	if verbose {
		head = "ID|Node Pool|DC|Name|Class|Address|Version|Drain|Eligibility|Status"
	}
	rows := []string{head}
	for _, n := range nodes {
		id := shortID(n.ID)
		if verbose {
			rows = append(rows, fmt.Sprintf("%s|%s|%s|%s|%s|%s|%s|%t|%s|%s", n.ID, n.NodePool, n.Datacenter, n.Name,
				orNone(n.NodeClass), n.Address, n.Version, n.Drain, n.SchedulingEligibility, n.Status))
			continue
		}
		rows = append(rows, fmt.Sprintf("%s|%s|%s|%s|%s|%t|%s|%s", id, n.NodePool, n.Datacenter, n.Name,
			orNone(n.NodeClass), n.Drain, n.SchedulingEligibility, n.Status))
	}
	return formatList(rows)
}

// formatNode shows one node, its drain and its allocations.
// formatNode is the node's header, then (given its client's host statistics, nil when
// unknown) its uptime and utilisation, its events, what its allocations hold, and the
// allocations.
func formatNode(n *api.Node, allocs []*api.Allocation, verbose bool, now time.Time, stats *api.HostStats) string {
	id := shortID(n.ID)
	if verbose {
		id = n.ID
	}
	drain := "false"
	if ds := n.DrainStrategy; ds != nil {
		switch {
		case ds.Deadline < 0:
			drain = "true; force"
		case ds.Deadline == 0:
			drain = "true; no deadline"
		default:
			drain = "true; " + formatTime(ds.ForceDeadline) + " deadline"
		}
		if ds.IgnoreSystemJobs {
			drain += "; ignoring system jobs"
		}
	}
	var drivers []string
	for name, d := range n.Drivers {
		if d != nil && d.Detected && d.Healthy {
			drivers = append(drivers, name)
		}
	}
	sort.Strings(drivers)
	rows := []string{
		"ID|" + id,
		"Name|" + n.Name,
		"Node Pool|" + n.NodePool,
		"Class|" + orNone(n.NodeClass),
		"DC|" + n.Datacenter,
		"Drain|" + drain,
		"Eligibility|" + n.SchedulingEligibility,
		"Status|" + n.Status,
		"Drivers|" + orNone(strings.Join(drivers, ",")),
	}
	if ld := n.LastDrain; ld != nil {
		rows = append(rows, fmt.Sprintf("Last Drain|%s (started %s, updated %s)", ld.Status, formatTime(ld.StartedAt), formatTime(ld.UpdatedAt)))
	}
	if up := formatUptime(stats); up != "" {
		rows = append(rows, "Uptime|"+up)
	}
	var b strings.Builder
	b.WriteString(formatKV(rows))
	if ev := formatNodeEvents(n, verbose); ev != "" {
		b.WriteString("\n\nNode Events\n" + ev)
	}
	if res := formatNodeAllocated(n, allocs); res != "" {
		b.WriteString("\n\nAllocated Resources\n" + res)
	}
	if host := formatHostUtilization(n, stats); host != "" {
		b.WriteString("\n\nHost Resource Utilization\n" + host)
	}
	if verbose && len(n.HostNetworks) > 0 {
		b.WriteString("\n\nHost Networks\n" + formatHostNetworks(n.HostNetworks))
	}
	if verbose {
		b.WriteString("\n\nAttributes\n")
		b.WriteString(formatKV(mapRows(n.Attributes)))
		b.WriteString("\n\nMeta\n")
		b.WriteString(formatKV(mapRows(n.Meta)))
	}
	b.WriteString("\n\nAllocations\n")
	if len(allocs) == 0 {
		b.WriteString("No allocations placed")
		return b.String()
	}
	sort.Slice(allocs, func(i, j int) bool { return allocs[i].CreateIndex > allocs[j].CreateIndex })
	table := []string{"ID|Job ID|Task Group|Desired|Status|Created"}
	for _, a := range allocs {
		aid := shortID(a.ID)
		if verbose {
			aid = a.ID
		}
		table = append(table, fmt.Sprintf("%s|%s|%s|%s|%s|%s", aid, a.JobID, a.TaskGroup, a.DesiredStatus, a.ClientStatus,
			formatAgo(time.Unix(0, a.CreateTime), now)))
	}
	b.WriteString(formatList(table))
	return b.String()
}

// formatHostNetworks lists the node's host_network blocks by name.
func formatHostNetworks(hns map[string]*api.HostNetworkInfo) string {
	names := make([]string, 0, len(hns))
	for name := range hns {
		names = append(names, name)
	}
	sort.Strings(names)
	rows := []string{"Name|CIDR|Interface|ReservedPorts"}
	for _, name := range names {
		hn := hns[name]
		if hn == nil {
			continue
		}
		rows = append(rows, fmt.Sprintf("%s|%s|%s|%s", name, orNone(hn.CIDR), orNone(hn.Interface), orNone(hn.ReservedPorts)))
	}
	return formatList(rows)
}

func mapRows(m map[string]string) []string {
	keys := slices.Sorted(maps.Keys(m))
	if len(keys) == 0 {
		return []string{"<none>"}
	}
	rows := make([]string, len(keys))
	for i, k := range keys {
		rows[i] = k + "|" + m[k]
	}
	return rows
}

// nodeArg resolves the node a command is about: the agent's own with -self, otherwise the
// one argument, an ID or unique prefix.
func (m *Meta) nodeArg(client *api.Client, pos []string, self bool) (string, bool) {
	if self {
		info, err := client.Agent().Self()
		if err != nil {
			m.fail("Error querying the agent: %v", err)
			return "", false
		}
		id := info.Stats["client"]["node_id"]
		if id == "" {
			m.fail("The agent at this address runs no client: -self needs one")
			return "", false
		}
		return id, true
	}
	return m.resolveNode(client, pos[0])
}

// resolveNode turns a node ID or unique prefix into the exact ID.
func (m *Meta) resolveNode(client *api.Client, prefix string) (string, bool) {
	nodes, _, err := client.Nodes().PrefixList(prefix)
	if err != nil {
		m.fail("Error querying node prefix %q: %v", prefix, err)
		return "", false
	}
	for _, n := range nodes {
		if n.ID == prefix {
			return n.ID, true
		}
	}
	switch len(nodes) {
	case 0:
		m.fail("No node(s) with prefix or id %q found", prefix)
		return "", false
	case 1:
		return nodes[0].ID, true
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].ID < nodes[j].ID })
	m.fail("Prefix matched multiple nodes\n\n%s", formatNodeList(nodes, true))
	return "", false
}
