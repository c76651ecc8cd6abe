package command

import (
	"flag"
	"strconv"

	"github.com/hashicorp/cli"
)

// Exit codes of "nomad check", as monitoring systems in the Nagios tradition read them (a
// usage error is 1, "warning" there).
const (
	checkHealthy  = 0
	checkCritical = 2
)

// newAgentCheck reports whether the agent is healthy enough to serve: a server that
// sees enough Raft peers, a client that knows enough servers.
func newAgentCheck(m Meta) cli.Command {
	var minPeers int
	var minServers int
	return &command{Meta: m, name: "check", synopsis: "Display the health of the local Nomad agent",
		usage: `
Usage: nomad check [options]

  Check the health of the agent the command talks to, for monitoring systems:
  exit code 0 when healthy, 2 when not (with one line saying why), 1 for a
  usage error. A server is healthy when it sees at least -min-peers other
  Raft peers; an agent without a server, when its client knows at least
  -min-servers servers.
`,
		heading: "Agent Check",
		options: []option{
			flagOpt(&minPeers, 0, "-min-peers=<n>", "The fewest other Raft peers a server must see. Defaults to 0."),
			flagOpt(&minServers, 1, "-min-servers=<n>", "The fewest servers a client must know. Defaults to 1."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			_, code, ok := c.parseArgs(fs, args)
			if !ok {
				return code
			}
			client, ok := c.client()
			if !ok {
				return checkCritical
			}
			self, err := client.Agent().Self()
			if err != nil {
				c.Ui.Output("unable to query the agent: " + err.Error())
				return checkCritical
			}
			if self.Stats["nomad"]["server"] == "true" {
				// Prefer the agent's own Raft statistic; an agent that does not publish it is asked
				// for the Raft configuration, which lists this server too.
				peers, err := strconv.Atoi(self.Stats["raft"]["num_peers"])
				if err != nil {
					all, err := client.Status().Peers()
					if err != nil {
						c.Ui.Output("unable to query the Raft peers: " + err.Error())
						return checkCritical
					}
					peers = max(len(all)-1, 0)
				}
				if peers < minPeers {
					c.Ui.Output("known peers: " + strconv.Itoa(peers) + ", fewer than the " + strconv.Itoa(minPeers) + " expected")
					return checkCritical
				}
				return checkHealthy
			}
			servers, err := strconv.Atoi(self.Stats["client"]["known_servers"])
			if err != nil {
				list, err := client.Agent().Servers()
				if err != nil {
					c.Ui.Output("unable to query the client's servers: " + err.Error())
					return checkCritical
				}
				servers = len(list)
			}
			if servers < minServers {
				c.Ui.Output("known servers: " + strconv.Itoa(servers) + ", fewer than the " + strconv.Itoa(minServers) + " expected")
				return checkCritical
			}
			return checkHealthy
		},
	}
}
