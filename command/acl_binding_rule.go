package command

import (
	"fmt"

	"github.com/hashicorp/nomad/api"
)

func formatBindingRule(r *api.ACLBindingRule) string {
	return formatKV([]string{
		"ID|" + r.ID,
		"Description|" + orNone(r.Description),
		"Auth Method|" + r.AuthMethod,
		"Selector|" + orNone(r.Selector),
		"Bind Type|" + r.BindType,
		"Bind Name|" + orNone(r.BindName),
		fmt.Sprintf("Create Index|%d", r.CreateIndex),
		fmt.Sprintf("Modify Index|%d", r.ModifyIndex),
	})
}

const bindingRuleFlagsHelp = `
  -description=<text>
    Description of the rule.

  -selector=<expression>
    Which logins the rule applies to: a boolean expression over value.<name>
    and list.<name>. Empty applies to every login.

  -bind-type=<role|policy|management>
    What the rule grants.

  -bind-name=<name>
    The role or policy granted; may use ${value.<name>}.

  -json
    Print the rule as JSON.
`

// bindingRuleFlags are the settings create and update share; update applies only those given.
type bindingRuleFlags struct {
	description, selector, bindType, bindName optString
}

func (f *bindingRuleFlags) apply(r *api.ACLBindingRule) {
	for _, s := range []struct {
		o   *optString
		out *string
	}{{&f.description, &r.Description}, {&f.selector, &r.Selector}, {&f.bindType, &r.BindType}, {&f.bindName, &r.BindName}} {
		if s.o.set {
			*s.out = s.o.v
		}
	}
}

// ACLBindingRuleCreateCommand creates a binding rule.
type ACLBindingRuleCreateCommand struct {
	Meta
}

func (c *ACLBindingRuleCreateCommand) Help() string {
	return helpText(`
Usage: nomad acl binding-rule create [options]

  Create an ACL binding rule: what a login through an auth method grants.
`, `
Create Options:

  -auth-method=<name>
    The auth method the rule belongs to. Required.
`+bindingRuleFlagsHelp)
}

func (c *ACLBindingRuleCreateCommand) Synopsis() string { return "Create an ACL binding rule" }

func (c *ACLBindingRuleCreateCommand) Run(args []string) int {
	var method string
	var asJSON bool
	var f bindingRuleFlags
	fs := c.FlagSet("acl binding-rule create")
	fs.StringVar(&method, "auth-method", "", "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.Var(&f.description, "description", "")
	fs.Var(&f.selector, "selector", "")
	fs.Var(&f.bindType, "bind-type", "")
	fs.Var(&f.bindName, "bind-name", "")
	if _, code, ok := c.parseArgs(fs, args); !ok {
		return code
	}
	if method == "" {
		return c.fail("ACL binding rule auth method must be specified using the -auth-method flag")
	}
	rule := &api.ACLBindingRule{AuthMethod: method}
	f.apply(rule)
	client, ok := c.client()
	if !ok {
		return 1
	}
	created, _, err := client.ACLBindingRules().Create(rule, nil)
	if err != nil {
		return c.fail("Error creating ACL binding rule: %v", err)
	}
	return printResult(&c.Meta, created, asJSON, formatBindingRule)
}

// ACLBindingRuleUpdateCommand changes a binding rule; settings not given keep their values.
type ACLBindingRuleUpdateCommand struct {
	Meta
}

func (c *ACLBindingRuleUpdateCommand) Help() string {
	return helpText(`
Usage: nomad acl binding-rule update [options] <id>

  Change an ACL binding rule. Settings not given keep their values.
`, `
Update Options:
`+bindingRuleFlagsHelp)
}

func (c *ACLBindingRuleUpdateCommand) Synopsis() string { return "Change an ACL binding rule" }

func (c *ACLBindingRuleUpdateCommand) Run(args []string) int {
	var asJSON bool
	var f bindingRuleFlags
	fs := c.FlagSet("acl binding-rule update")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.Var(&f.description, "description", "")
	fs.Var(&f.selector, "selector", "")
	fs.Var(&f.bindType, "bind-type", "")
	fs.Var(&f.bindName, "bind-name", "")
	pos, client, code, ok := c.connect(fs, args, "<id>")
	if !ok {
		return code
	}
	rule, _, err := client.ACLBindingRules().Get(pos[0], nil)
	if err != nil {
		return c.fail("Error reading ACL binding rule: %v", err)
	}
	f.apply(rule)
	updated, _, err := client.ACLBindingRules().Update(rule, nil)
	if err != nil {
		return c.fail("Error updating ACL binding rule: %v", err)
	}
	return printResult(&c.Meta, updated, asJSON, formatBindingRule)
}

// ACLBindingRuleListCommand lists binding rules.
type ACLBindingRuleListCommand struct {
	Meta
}

func (c *ACLBindingRuleListCommand) Help() string {
	return helpText(`
Usage: nomad acl binding-rule list [options]

  List ACL binding rules.
`, `
List Options:

  -json
    Print the rules as JSON.
`)
}

func (c *ACLBindingRuleListCommand) Synopsis() string { return "List ACL binding rules" }

func (c *ACLBindingRuleListCommand) Run(args []string) int {
	var asJSON bool
	fs := c.FlagSet("acl binding-rule list")
	fs.BoolVar(&asJSON, "json", false, "")
	_, client, code, ok := c.connect(fs, args)
	if !ok {
		return code
	}
	rules, _, err := client.ACLBindingRules().List(nil)
	if err != nil {
		return c.fail("Error listing ACL binding rules: %v", err)
	}
	return printResult(&c.Meta, rules, asJSON, func(rs []*api.ACLBindingRuleListStub) string {
		if len(rs) == 0 {
			return "No ACL binding rules found"
		}
		rows := []string{"ID|Description|Auth Method"}
		for _, r := range rs {
			rows = append(rows, fmt.Sprintf("%s|%s|%s", r.ID, r.Description, r.AuthMethod))
		}
		return formatList(rows)
	})
}

// ACLBindingRuleInfoCommand shows a binding rule.
type ACLBindingRuleInfoCommand struct {
	Meta
}

func (c *ACLBindingRuleInfoCommand) Help() string {
	return helpText(`
Usage: nomad acl binding-rule info [options] <id>

  Show an ACL binding rule.
`, `
Info Options:

  -json
    Print the rule as JSON.
`)
}

func (c *ACLBindingRuleInfoCommand) Synopsis() string { return "Show an ACL binding rule" }

func (c *ACLBindingRuleInfoCommand) Run(args []string) int {
	var asJSON bool
	fs := c.FlagSet("acl binding-rule info")
	fs.BoolVar(&asJSON, "json", false, "")
	pos, client, code, ok := c.connect(fs, args, "<id>")
	if !ok {
		return code
	}
	rule, _, err := client.ACLBindingRules().Get(pos[0], nil)
	if err != nil {
		return c.fail("Error reading ACL binding rule: %v", err)
	}
	return printResult(&c.Meta, rule, asJSON, formatBindingRule)
}

// ACLBindingRuleDeleteCommand deletes a binding rule.
type ACLBindingRuleDeleteCommand struct {
	Meta
}

func (c *ACLBindingRuleDeleteCommand) Help() string {
	return helpText(`
Usage: nomad acl binding-rule delete [options] <id>

  Delete an ACL binding rule. Tokens already made by logins keep what they got.
`, "")
}

func (c *ACLBindingRuleDeleteCommand) Synopsis() string { return "Remove an ACL binding rule" }

func (c *ACLBindingRuleDeleteCommand) Run(args []string) int {
	del := func(client *api.Client, id string) error {
		_, err := client.ACLBindingRules().Delete(id, nil)
		return err
	}
	return c.runDelete(c.FlagSet("acl binding-rule delete"), args, "<id>", del,
		"Error deleting ACL binding rule: %v", "ACL binding rule %s successfully deleted")
}
