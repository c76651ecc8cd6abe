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

func newAgentInfo(m Meta) cli.Command {
	return &readCommand[*api.AgentSelf]{Meta: m, name: "agent-info",
		synopsis: "Display status information about the local agent", jsonWhat: "the agent's self description",
		usage: `
Usage: nomad agent-info [options]

  Display status information about the agent the command talks to, one
  section per subsystem (nomad, client, ...). Needs agent read when ACLs are
  enabled.
`,
		fetch:   func(client *api.Client, _ []string) (*api.AgentSelf, error) { return client.Agent().Self() },
		failure: "Error querying agent info: %s", format: formatAgentInfo}
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
		keys := slices.Sorted(maps.Keys(stats))
		for _, k := range keys {
			fmt.Fprintf(&b, "  %s = %s\n", k, stats[k])
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
