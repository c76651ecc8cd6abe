package command

import (
	"flag"
	"strings"

	"github.com/hashicorp/cli"
)

// newNodeConfig reads or replaces the servers the agent's client talks to.
func newNodeConfig(m Meta) cli.Command {
	var listServers bool
	var updateServers bool
	return &command{Meta: m, name: "node config", synopsis: "Read or change a client's configuration",
		usage: `
Usage: nomad node config [options] [<addr>...]

  Read or change the configuration of the client of the agent the command
  talks to. Today that is its list of servers: -servers prints it, one address
  per line; -update-servers replaces it with the RPC addresses given
  (host:port). A replaced list lasts until the agent restarts or finds
  servers again. Needs agent read, or agent write to change.
`,
		heading: "Node Config",
		options: []option{
			boolOpt(&listServers, "-servers", "Print the servers the client knows."),
			boolOpt(&updateServers, "-update-servers", "Replace the client's servers with the addresses given."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			pos, code, ok := c.parse(fs, args)
			if !ok {
				return code
			}
			switch {
			case listServers == updateServers:
				return c.fail("This command needs one of -servers or -update-servers")
			case listServers && len(pos) > 0:
				return c.fail("This command takes no arguments with -servers")
			case updateServers && len(pos) == 0:
				return c.fail("This command takes at least one argument with -update-servers: <addr>")
			}
			client, ok := c.client()
			if !ok {
				return 1
			}
			if updateServers {
				if err := client.Agent().SetServers(pos); err != nil {
					return c.fail("Error updating the client's servers: %v", err)
				}
				c.Ui.Output("Updated the client's servers")
				return 0
			}
			servers, err := client.Agent().Servers()
			if err != nil {
				return c.fail("Error querying the client's servers: %v", err)
			}
			if len(servers) > 0 {
				c.Ui.Output(strings.Join(servers, "\n"))
			}
			return 0
		},
	}
}
