package command

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

// newNodeDrain starts or stops a node's drain.
func newNodeDrain(m Meta) cli.Command {
	var enable, disable, force, noDeadline, ignoreSystem, keepIneligible, self, detach, yes bool
	var deadline time.Duration
	var message string
	return &command{Meta: m, name: "node drain", synopsis: "Set drain mode on a given node",
		usage: `
Usage: nomad node drain [options] <node>

  Start (-enable) or stop (-disable) draining a node. A draining node gets
  no new allocations; its service allocations move to other nodes as their
  groups' migrate blocks allow, batch allocations are left to finish until
  the deadline, and system allocations stop last. When nothing is left the
  drain ends and the node stays ineligible until marked eligible again.

  Without -detach the command follows the drain until it completes; Ctrl-C
  stops following, not the drain. Needs node write access when ACLs are on.
`,
		heading: "Node Drain",
		options: []option{
			boolOpt(&enable, "-enable", "Start draining the node (or change the drain's options)."),
			boolOpt(&disable, "-disable", "Stop draining the node. It becomes eligible again unless\n-keep-ineligible is given."),
			flagOpt(&deadline, time.Hour, "-deadline=<duration>", "How long allocations may take to move before whatever is left is\nstopped. The default is 1h."),
			boolOpt(&force, "-force", "Stop everything on the node at once (no deadline to wait for)."),
			boolOpt(&noDeadline, "-no-deadline", "Never force: wait for every allocation to move or finish."),
			boolOpt(&ignoreSystem, "-ignore-system", "Leave system job allocations running on the node."),
			boolOpt(&keepIneligible, "-keep-ineligible", "With -disable, keep the node ineligible for new allocations."),
			flagOpt(&message, "", "-m=<message>", "A note about the drain, kept in the node's last drain metadata."),
			boolOpt(&self, "-self", "Drain the node of the agent the command talks to."),
			boolOpt(&detach, "-detach", "Return at once instead of following the drain."),
			boolOpt(&yes, "-yes, -y", "Do not ask for confirmation."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			pos, code, ok := c.parse(fs, args)
			if !ok {
				return code
			}
			switch {
			case enable == disable:
				return c.fail("Exactly one of -enable or -disable is required")
			case self == (len(pos) == 1) || len(pos) > 1:
				return c.fail("This command takes either one argument or -self: <node>")
			case force && noDeadline:
				return c.fail("-force and -no-deadline cannot be used together")
			case enable && deadline <= 0 && !force && !noDeadline:
				return c.fail("-deadline must be positive; use -force or -no-deadline instead")
			}
			client, ok := c.client()
			if !ok {
				return 1
			}
			nodeID, ok := c.nodeArg(client, pos, self)
			if !ok {
				return 1
			}
			if !yes {
				verb := "enable"
				if disable {
					verb = "disable"
				}
				question := fmt.Sprintf("Are you sure you want to %s drain mode for node %q?", verb, nodeID)
				if proceed, code := c.confirm(question, "Canceling drain"); !proceed {
					return code
				}
			}
			opts := &api.DrainOptions{MarkEligible: !keepIneligible}
			if message != "" {
				opts.Meta = map[string]string{"message": message}
			}
			if enable {
				spec := &api.DrainSpec{Deadline: deadline, IgnoreSystemJobs: ignoreSystem}
				switch {
				case force:
					spec.Deadline = -1
				case noDeadline:
					spec.Deadline = 0
				}
				opts.DrainSpec = spec
			}
			resp, err := client.Nodes().UpdateDrainOpts(nodeID, opts, nil)
			if err != nil {
				return c.fail("Error updating drain specification: %v", err)
			}
			if disable {
				c.Ui.Output(fmt.Sprintf("Node %q drain strategy unset", nodeID))
				return 0
			}
			c.Ui.Output(fmt.Sprintf("Node %q drain strategy set", nodeID))
			if detach {
				return 0
			}
			c.Ui.Output(fmt.Sprintf("%s: Ctrl-C to stop monitoring: will not cancel the node drain", formatTime(time.Now())))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			failed := false
			for msg := range client.Nodes().MonitorDrain(ctx, nodeID, resp.LastIndex, ignoreSystem) {
				line := fmt.Sprintf("%s: %s", formatTime(time.Now()), msg)
				if msg.Level == api.MonitorMsgLevelError {
					c.Ui.Error(line)
					failed = true
					continue
				}
				c.Ui.Output(line)
			}
			if failed {
				return 1
			}
			return 0
		},
	}
}

// newNodeEligibility marks a node eligible or ineligible for new allocations.
func newNodeEligibility(m Meta) cli.Command {
	var enable, disable, self bool
	return &command{Meta: m, name: "node eligibility", synopsis: "Toggle scheduling eligibility for a given node",
		usage: `
Usage: nomad node eligibility [options] <node>

  Mark a node eligible (-enable) or ineligible (-disable) for new
  allocations. What already runs there keeps running. A draining node
  cannot be made eligible until its drain ends. Needs node write access
  when ACLs are on.
`,
		heading: "Node Eligibility",
		options: []option{
			boolOpt(&enable, "-enable", "The node may get new allocations."),
			boolOpt(&disable, "-disable", "The node gets no new allocations."),
			boolOpt(&self, "-self", "Act on the node of the agent the command talks to."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			pos, code, ok := c.parse(fs, args)
			if !ok {
				return code
			}
			switch {
			case enable == disable:
				return c.fail("Exactly one of -enable or -disable is required")
			case self == (len(pos) == 1) || len(pos) > 1:
				return c.fail("This command takes either one argument or -self: <node>")
			}
			client, ok := c.client()
			if !ok {
				return 1
			}
			nodeID, ok := c.nodeArg(client, pos, self)
			if !ok {
				return 1
			}
			if _, err := client.Nodes().ToggleEligibility(nodeID, enable, nil); err != nil {
				return c.fail("Error updating scheduling eligibility: %v", err)
			}
			state := "eligible"
			if disable {
				state = "ineligible"
			}
			c.Ui.Output(fmt.Sprintf("Node %q scheduling eligibility set: %s for scheduling", nodeID, state))
			return 0
		},
	}
}

// newNodeConfig reads or replaces the servers the agent's client talks to.
func newNodeConfig(m Meta) cli.Command {
	var listServers, updateServers bool
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
