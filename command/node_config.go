package command

import (
	"strings"
)

// NodeConfigCommand reads or replaces the servers the agent's client talks to.
type NodeConfigCommand struct {
	Meta
	listServers   bool
	updateServers bool
}

func (c *NodeConfigCommand) Help() string {
	return helpText(`
Usage: nomad node config [options] [<addr>...]

  Read or change the configuration of the client of the agent the command
  talks to. Today that is its list of servers: -servers prints it, one address
  per line; -update-servers replaces it with the RPC addresses given
  (host:port). A replaced list lasts until the agent restarts or finds
  servers again. Needs agent read, or agent write to change.
`, optionsHelp("Node Config", c.options()))
}

func (c *NodeConfigCommand) options() []option {
	return []option{
		boolOpt(&c.listServers, "-servers", "Print the servers the client knows."),
		boolOpt(&c.updateServers, "-update-servers", "Replace the client's servers with the addresses given."),
	}
}

func (c *NodeConfigCommand) Synopsis() string { return "Read or change a client's configuration" }

func (c *NodeConfigCommand) Run(args []string) int {
	fs := c.flagSetWith("node config", c.options())
	pos, code, ok := c.parse(fs, args)
	if !ok {
		return code
	}
	switch {
	case c.listServers == c.updateServers:
		return c.fail("This command needs one of -servers or -update-servers")
	case c.listServers && len(pos) > 0:
		return c.fail("This command takes no arguments with -servers")
	case c.updateServers && len(pos) == 0:
		return c.fail("This command takes at least one argument with -update-servers: <addr>")
	}
	client, ok := c.client()
	if !ok {
		return 1
	}
	if c.updateServers {
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
}
