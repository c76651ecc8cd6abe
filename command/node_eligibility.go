package command

import (
	"flag"
	"fmt"

	"github.com/hashicorp/cli"
)

// newNodeEligibility marks a node eligible or ineligible for new allocations.
func newNodeEligibility(m Meta) cli.Command {
	var enable bool
	var disable bool
	var self bool
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
