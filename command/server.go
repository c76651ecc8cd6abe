package command

import (
	"flag"
	"fmt"
	"maps"
	"net"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

const serverHelp = `
Usage: nomad server <subcommand> [options] [args]

  Inspect and manage the servers' gossip pool: list its members, join other
  servers to it and force failed ones out.
`

// newServerMembers lists the gossip pool.
func newServerMembers(m Meta) cli.Command {
	var detailed bool
	return &command{Meta: m, name: "server members", synopsis: "Display a list of known servers and their status",
		usage: `
Usage: nomad server members [options]

  List the servers in the gossip pool, with their status, the leader of their
  region, and their build. Gossip only says where servers are: a server is in
  the Raft quorum once the leader has verified it on its RPC port (see
  "nomad operator raft list-peers").
`,
		heading: "Server Members",
		options: []option{
			boolOpt(&detailed, "-detailed", "Show each member's protocol versions and gossip tags."),
		},
		withClient: func(c *command, client *api.Client, _ []string) int {
			members, err := client.Agent().Members()
			if err != nil {
				return c.fail("Error querying servers: %v", err)
			}
			sort.Slice(members.Members, func(i, j int) bool { return members.Members[i].Name < members.Members[j].Name })
			if detailed {
				rows := []string{"Name|Address|Port|Status|Protocol|Tags"}
				for _, m := range members.Members {
					rows = append(rows, fmt.Sprintf("%s|%s|%d|%s|%d|%s", m.Name, m.Addr, m.Port, m.Status, m.ProtocolCur, formatTags(m.Tags)))
				}
				c.Ui.Output(formatList(rows))
				return 0
			}
			// The leader is known for this agent's region only; other regions show "unknown".
			leader, _ := client.Status().Leader()
			rows := []string{"Name|Address|Port|Status|Leader|Raft Version|Build|Datacenter|Region"}
			for _, m := range members.Members {
				isLeader := "unknown"
				if m.Tags["region"] == members.ServerRegion {
					isLeader = fmt.Sprint(leader != "" && net.JoinHostPort(m.Tags["rpc_addr"], m.Tags["port"]) == leader)
				}
				rows = append(rows, fmt.Sprintf("%s|%s|%d|%s|%s|%s|%s|%s|%s", m.Name, m.Addr, m.Port, m.Status, isLeader,
					orNone(m.Tags["raft_vsn"]), orNone(m.Tags["build"]), orNone(m.Tags["dc"]), orNone(m.Tags["region"])))
			}
			c.Ui.Output(formatList(rows))
			return 0
		},
	}
}

func formatTags(tags map[string]string) string {
	keys := slices.Sorted(maps.Keys(tags))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+tags[k])
	}
	return strings.Join(parts, ",")
}

// newServerJoin joins the agent's gossip pool to other servers.
func newServerJoin(m Meta) cli.Command {
	return &command{Meta: m, name: "server join", synopsis: "Join server nodes together",
		usage: `
Usage: nomad server join [options] <addr> [<addr>...]

  Join the agent's server to the gossip pool of the servers at the given serf
  addresses (host:port, port 4648 by default). The leader adds a joined server
  to Raft only after it authenticates on its RPC port with the cluster key or
  a certificate from the CA.
`,
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			pos, code, ok := c.parse(fs, args)
			if !ok {
				return code
			}
			if len(pos) == 0 {
				return c.fail("This command takes at least one argument: <addr>")
			}
			client, ok := c.client()
			if !ok {
				return 1
			}
			n, err := client.Agent().Join(pos...)
			if err != nil {
				return c.fail("Error joining: %v", err)
			}
			c.Ui.Output(fmt.Sprintf("Joined %d servers successfully", n))
			return 0
		},
	}
}

// ServerForceLeaveCommand forces a failed member out of the gossip pool.
type ServerForceLeaveCommand struct {
	Meta
}

func (c *ServerForceLeaveCommand) Help() string {
	return helpText(`
Usage: nomad server force-leave [options] <node>

  Move a failed server (named as "nomad server members" shows it) to the left
  state, so that it is not reconnected to and the leader removes it from Raft.
`, `
Server Force-Leave Options:

  -prune
    Remove the server from the member list at once instead of waiting for the
    gossip pool to forget it.
`)
}

func (c *ServerForceLeaveCommand) Synopsis() string { return "Force a server into the 'left' state" }

func (c *ServerForceLeaveCommand) Run(args []string) int {
	var prune bool
	fs := c.FlagSet("server force-leave")
	fs.BoolVar(&prune, "prune", false, "")
	pos, client, code, ok := c.connect(fs, args, "<node>")
	if !ok {
		return code
	}
	if err := client.Agent().ForceLeaveWithOptions(pos[0], api.ForceLeaveOpts{Prune: prune}); err != nil {
		return c.fail("Error force-leaving server %s: %v", pos[0], err)
	}
	return 0
}
