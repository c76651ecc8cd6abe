package command

import (
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/hashicorp/nomad/api"
)

// ACLPolicyApplyCommand writes a policy from a file.
type ACLPolicyApplyCommand struct {
	Meta

	// Stdin is read when the file argument is "-"; nil means os.Stdin.
	Stdin io.Reader
}

func (c *ACLPolicyApplyCommand) Help() string {
	return helpText(`
Usage: nomad acl policy apply [options] <name> <path>

  Create or replace the ACL policy <name> with the rules in <path> ("-"
  reads standard input). Needs a management token.
`, `
Apply Options:

  -description=<text>
    Human-readable description of the policy.
`)
}

func (c *ACLPolicyApplyCommand) Synopsis() string { return "Create or update an ACL policy" }

func (c *ACLPolicyApplyCommand) Run(args []string) int {
	var description string
	fs := c.FlagSet("acl policy apply")
	fs.StringVar(&description, "description", "", "")
	pos, code, ok := c.parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 2 {
		return c.fail("This command takes two arguments: <name> <path>")
	}
	var rules []byte
	var err error
	if pos[1] == "-" {
		in := c.Stdin
		if in == nil {
			in = os.Stdin
		}
		rules, err = io.ReadAll(in)
	} else {
		rules, err = os.ReadFile(pos[1])
	}
	if err != nil {
		return c.fail("Error reading policy rules: %v", err)
	}
	client, ok := c.client()
	if !ok {
		return 1
	}
	policy := &api.ACLPolicy{Name: pos[0], Description: description, Rules: string(rules)}
	if _, err := client.ACLPolicies().Upsert(policy, nil); err != nil {
		return c.fail("Error writing ACL policy: %v", err)
	}
	c.Ui.Output(fmt.Sprintf("Successfully wrote %q ACL policy!", pos[0]))
	return 0
}

// ACLPolicyInfoCommand shows a policy.
type ACLPolicyInfoCommand struct {
	Meta
}

func (c *ACLPolicyInfoCommand) Help() string {
	return helpText(`
Usage: nomad acl policy info [options] <name>

  Show an ACL policy and its rules.
`, `
Info Options:

  -json
    Print the policy as JSON.
`)
}

func (c *ACLPolicyInfoCommand) Synopsis() string { return "Show an ACL policy and its rules" }

func (c *ACLPolicyInfoCommand) Run(args []string) int {
	var asJSON bool
	fs := c.FlagSet("acl policy info")
	fs.BoolVar(&asJSON, "json", false, "")
	pos, code, ok := c.parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return c.fail("This command takes one argument: <name>")
	}
	client, ok := c.client()
	if !ok {
		return 1
	}
	policy, _, err := client.ACLPolicies().Info(pos[0], nil)
	if err != nil {
		return c.fail("Error reading ACL policy: %v", err)
	}
	if asJSON {
		return c.printJSON(policy)
	}
	c.Ui.Output(formatKV([]string{
		"Name|" + policy.Name,
		"Description|" + orNone(policy.Description),
		fmt.Sprintf("CreateIndex|%d", policy.CreateIndex),
		fmt.Sprintf("ModifyIndex|%d", policy.ModifyIndex),
	}))
	c.Ui.Output("\nRules\n\n" + policy.Rules)
	return 0
}

// ACLPolicyListCommand lists policies.
type ACLPolicyListCommand struct {
	Meta
}

func (c *ACLPolicyListCommand) Help() string {
	return helpText(`
Usage: nomad acl policy list [options]

  List ACL policies. A management token sees all of them; other tokens see
  the policies attached to them.
`, `
List Options:

  -json
    Print the policies as JSON.
`)
}

func (c *ACLPolicyListCommand) Synopsis() string { return "List ACL policies" }

func (c *ACLPolicyListCommand) Run(args []string) int {
	var asJSON bool
	fs := c.FlagSet("acl policy list")
	fs.BoolVar(&asJSON, "json", false, "")
	pos, code, ok := c.parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 0 {
		return c.fail("This command takes no arguments")
	}
	client, ok := c.client()
	if !ok {
		return 1
	}
	list, _, err := client.ACLPolicies().List(nil)
	if err != nil {
		return c.fail("Error listing ACL policies: %v", err)
	}
	if asJSON {
		return c.printJSON(list)
	}
	if len(list) == 0 {
		c.Ui.Output("No policies found")
		return 0
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	rows := []string{"Name|Description"}
	for _, p := range list {
		rows = append(rows, p.Name+"|"+p.Description)
	}
	c.Ui.Output(formatList(rows))
	return 0
}

// ACLPolicyDeleteCommand deletes a policy.
type ACLPolicyDeleteCommand struct {
	Meta
}

func (c *ACLPolicyDeleteCommand) Help() string {
	return helpText(`
Usage: nomad acl policy delete [options] <name>

  Delete an ACL policy. Tokens and roles that name it lose its rules.
`, "")
}

func (c *ACLPolicyDeleteCommand) Synopsis() string { return "Remove an ACL policy" }

func (c *ACLPolicyDeleteCommand) Run(args []string) int {
	fs := c.FlagSet("acl policy delete")
	pos, code, ok := c.parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return c.fail("This command takes one argument: <name>")
	}
	client, ok := c.client()
	if !ok {
		return 1
	}
	if _, err := client.ACLPolicies().Delete(pos[0], nil); err != nil {
		return c.fail("Error deleting ACL policy: %v", err)
	}
	c.Ui.Output(fmt.Sprintf("Successfully deleted %q ACL policy!", pos[0]))
	return 0
}
