package command

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/nomad/api"
)

// AgentInfoCommand prints the status sections of the agent the CLI talks to.
type AgentInfoCommand struct {
	Meta
}

func (c *AgentInfoCommand) Help() string {
	return helpText(`
Usage: nomad agent-info [options]

  Display status information about the agent the command talks to, one
  section per subsystem (nomad, client, ...). Needs agent read when ACLs are
  enabled.
`, `
Agent Info Options:

  -json
    Output the agent's self description as JSON.
`)
}

func (c *AgentInfoCommand) Synopsis() string {
	return "Display status information about the local agent"
}

func (c *AgentInfoCommand) Run(args []string) int {
	var asJSON bool
	fs := c.FlagSet("agent-info")
	fs.BoolVar(&asJSON, "json", false, "")
	_, client, code, ok := c.connect(fs, args)
	if !ok {
		return code
	}
	self, err := client.Agent().Self()
	if err != nil {
		return c.fail("Error querying agent info: %s", err)
	}
	return printResult(&c.Meta, self, asJSON, formatAgentInfo)
}

// formatAgentInfo prints each stats section and its keys sorted, as upstream does.
func formatAgentInfo(self *api.AgentSelf) string {
	sections := make([]string, 0, len(self.Stats))
	for name := range self.Stats {
		sections = append(sections, name)
	}
	sort.Strings(sections)
	var b strings.Builder
	for _, name := range sections {
		b.WriteString(name + "\n")
		stats := self.Stats[name]
		keys := make([]string, 0, len(stats))
		for k := range stats {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "  %s = %s\n", k, stats[k])
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
