package command

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"

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

// AgentMonitorCommand streams an agent's log lines.
type AgentMonitorCommand struct {
	Meta
	// Stdout receives the lines (os.Stdout when nil).
	Stdout io.Writer
	// ctx ends the stream when done; tests set it, the CLI ends it on an interrupt.
	ctx context.Context
}

func (c *AgentMonitorCommand) Help() string {
	return helpText(`
Usage: nomad monitor [options]

  Stream the log lines of the agent the command talks to (or, with -node-id,
  of a client agent through it) until interrupted. Needs agent read when ACLs
  are enabled.
`, `
Monitor Options:

  -log-level <level>
    The lowest level to stream: trace, debug, info, warn or error. The
    default is info.

  -json
    Stream the lines as JSON log records.

  -node-id <node>
    Stream the logs of that node's client agent.
`)
}

func (c *AgentMonitorCommand) Synopsis() string { return "Stream logs from a Nomad agent" }

var monitorLevels = []string{"trace", "debug", "info", "warn", "error"}

func (c *AgentMonitorCommand) Run(args []string) int {
	var level, nodeID string
	var asJSON bool
	fs := c.FlagSet("monitor")
	fs.StringVar(&level, "log-level", "", "")
	fs.StringVar(&nodeID, "node-id", "", "")
	fs.BoolVar(&asJSON, "json", false, "")
	_, client, code, ok := c.connect(fs, args)
	if !ok {
		return code
	}
	params := url.Values{"plain": {"true"}}
	if level != "" {
		l := strings.ToLower(level)
		valid := false
		for _, v := range monitorLevels {
			valid = valid || v == l
		}
		if !valid {
			return c.fail("Invalid -log-level %q: want one of %s", level, strings.Join(monitorLevels, ", "))
		}
		params.Set("log_level", l)
	}
	if asJSON {
		params.Set("log_json", "true")
	}
	if nodeID != "" {
		params.Set("node_id", nodeID)
	}
	ctx := c.ctx
	if ctx == nil {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	body, err := client.Raw().Response("/v1/agent/monitor?"+params.Encode(), (&api.QueryOptions{}).WithContext(ctx))
	if err != nil {
		return c.fail("Error starting monitor: %v", err)
	}
	defer body.Close()
	out := c.Stdout
	if out == nil {
		out = os.Stdout
	}
	if _, err := io.Copy(out, body); err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) {
		return c.fail("Error reading the log stream: %v", err)
	}
	return 0
}

// Exit codes of "nomad check", as monitoring systems in the Nagios tradition read them (a
// usage error is 1, "warning" there).
const (
	checkHealthy  = 0
	checkCritical = 2
)

// newAgentCheck reports whether the agent is healthy enough to serve: a server that
// sees enough Raft peers, a client that knows enough servers.
func newAgentCheck(m Meta) cli.Command {
	var minPeers, minServers int
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
