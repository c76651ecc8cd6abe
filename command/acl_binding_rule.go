package command

import (
	"fmt"

	"github.com/hashicorp/cli"
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

func newACLBindingRuleList(m Meta) cli.Command {
	return &readCommand[[]*api.ACLBindingRuleListStub]{Meta: m, name: "acl binding-rule list",
		synopsis: "List ACL binding rules", jsonWhat: "the rules",
		usage: `
Usage: nomad acl binding-rule list [options]

  List ACL binding rules.
`,
		fetch: func(client *api.Client, _ []string) ([]*api.ACLBindingRuleListStub, error) {
			return queried(client.ACLBindingRules().List(nil))
		},
		failure: "Error listing ACL binding rules: %v", format: formatBindingRuleList}
}

func formatBindingRuleList(rs []*api.ACLBindingRuleListStub) string {
	return formatRows(rs, "No ACL binding rules found", "ID|Description|Auth Method", func(r *api.ACLBindingRuleListStub) string {
		return fmt.Sprintf("%s|%s|%s", r.ID, r.Description, r.AuthMethod)
	})
}

func newACLBindingRuleInfo(m Meta) cli.Command {
	return &readCommand[*api.ACLBindingRule]{Meta: m, name: "acl binding-rule info", args: []string{"<id>"},
		synopsis: "Show an ACL binding rule", jsonWhat: "the rule",
		usage: `
Usage: nomad acl binding-rule info [options] <id>

  Show an ACL binding rule.
`,
		fetch: func(client *api.Client, pos []string) (*api.ACLBindingRule, error) {
			return queried(client.ACLBindingRules().Get(pos[0], nil))
		},
		failure: "Error reading ACL binding rule: %v", format: formatBindingRule}
}

func newACLBindingRuleDelete(m Meta) cli.Command {
	return &deleteCommand{Meta: m, name: "acl binding-rule delete", arg: "<id>", synopsis: "Remove an ACL binding rule",
		usage: `
Usage: nomad acl binding-rule delete [options] <id>

  Delete an ACL binding rule. Tokens already made by logins keep what they got.
`,
		del:     func(client *api.Client, id string) error { return written(client.ACLBindingRules().Delete(id, nil)) },
		failure: "Error deleting ACL binding rule: %v", done: "ACL binding rule %s successfully deleted"}
}
