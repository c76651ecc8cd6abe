package command

import "fmt"

// NodeEligibilityCommand marks a node eligible or ineligible for new allocations.
type NodeEligibilityCommand struct {
	Meta
	enable  bool
	disable bool
	self    bool
}

func (c *NodeEligibilityCommand) Help() string {
	return helpText(`
Usage: nomad node eligibility [options] <node>

  Mark a node eligible (-enable) or ineligible (-disable) for new
  allocations. What already runs there keeps running. A draining node
  cannot be made eligible until its drain ends. Needs node write access
  when ACLs are on.
`, optionsHelp("Node Eligibility", c.options()))
}

func (c *NodeEligibilityCommand) options() []option {
	return []option{
		boolOpt(&c.enable, "-enable", "The node may get new allocations."),
		boolOpt(&c.disable, "-disable", "The node gets no new allocations."),
		boolOpt(&c.self, "-self", "Act on the node of the agent the command talks to."),
	}
}

func (c *NodeEligibilityCommand) Synopsis() string {
	return "Toggle scheduling eligibility for a given node"
}

func (c *NodeEligibilityCommand) Run(args []string) int {
	fs := c.flagSetWith("node eligibility", c.options())
	pos, code, ok := c.parse(fs, args)
	if !ok {
		return code
	}
	switch {
	case c.enable == c.disable:
		return c.fail("Exactly one of -enable or -disable is required")
	case c.self == (len(pos) == 1) || len(pos) > 1:
		return c.fail("This command takes either one argument or -self: <node>")
	}
	client, ok := c.client()
	if !ok {
		return 1
	}
	nodeID, ok := c.nodeArg(client, pos, c.self)
	if !ok {
		return 1
	}
	if _, err := client.Nodes().ToggleEligibility(nodeID, c.enable, nil); err != nil {
		return c.fail("Error updating scheduling eligibility: %v", err)
	}
	state := "eligible"
	if c.disable {
		state = "ineligible"
	}
	c.Ui.Output(fmt.Sprintf("Node %q scheduling eligibility set: %s for scheduling", nodeID, state))
	return 0
}
