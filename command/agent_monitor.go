package command

import (
	"context"
	"errors"
	"io"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/hashicorp/nomad/api"
)

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
