package command

import (
	"cmp"
	"fmt"
	"io"
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

  -job=<job ID>
    Bind the policy to the workload identities of this job (in -namespace,
    default "default") instead of to tokens. Registering the job afterwards
    needs a token holding everything the policy grants.

  -group=<group>, -task=<task>
    With -job, bind only that group's tasks, or only that task (-task needs
    -group).
`)
}

func (c *ACLPolicyApplyCommand) Synopsis() string { return "Create or update an ACL policy" }

func (c *ACLPolicyApplyCommand) Run(args []string) int {
	var description, job, group, task string
	fs := c.FlagSet("acl policy apply")
	fs.StringVar(&description, "description", "", "")
	fs.StringVar(&job, "job", "", "")
	fs.StringVar(&group, "group", "", "")
	fs.StringVar(&task, "task", "", "")
	pos, code, ok := c.parseArgs(fs, args, "<name>", "<path>")
	if !ok {
		return code
	}
	var binding *api.JobACL
	switch {
	case job == "" && (group != "" || task != ""):
		return c.fail("-group and -task need -job")
	case task != "" && group == "":
		return c.fail("-task needs -group")
	case job != "":
		binding = &api.JobACL{Namespace: cmp.Or(c.Namespace(), "default"), JobID: job, Group: group, Task: task}
	}
	rules, err := readInput(pos[1], c.Stdin)
	if err != nil {
		return c.fail("Error reading policy rules: %v", err)
	}
	client, ok := c.client()
	if !ok {
		return 1
	}
	policy := &api.ACLPolicy{Name: pos[0], Description: description, Rules: string(rules), JobACL: binding}
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
	pos, client, code, ok := c.connect(fs, args, "<name>")
	if !ok {
		return code
	}
	policy, _, err := client.ACLPolicies().Info(pos[0], nil)
	if err != nil {
		return c.fail("Error reading ACL policy: %v", err)
	}
	return printResult(&c.Meta, policy, asJSON, formatPolicy)
}

func formatPolicy(p *api.ACLPolicy) string {
	return formatKV([]string{
		"Name|" + p.Name,
		"Description|" + orNone(p.Description),
		fmt.Sprintf("CreateIndex|%d", p.CreateIndex),
		fmt.Sprintf("ModifyIndex|%d", p.ModifyIndex),
	}) + "\n\nRules\n\n" + p.Rules
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
	_, client, code, ok := c.connect(fs, args)
	if !ok {
		return code
	}
	list, _, err := client.ACLPolicies().List(nil)
	if err != nil {
		return c.fail("Error listing ACL policies: %v", err)
	}
	return printResult(&c.Meta, list, asJSON, formatPolicyList)
}

// formatPolicyList sorts the list by name; -json keeps the agent's order.
func formatPolicyList(list []*api.ACLPolicyListStub) string {
	if len(list) == 0 {
		return "No policies found"
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	rows := []string{"Name|Description"}
	for _, p := range list {
		rows = append(rows, p.Name+"|"+p.Description)
	}
	return formatList(rows)
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
	del := func(client *api.Client, name string) error {
		_, err := client.ACLPolicies().Delete(name, nil)
		return err
	}
	return c.runDelete(c.FlagSet("acl policy delete"), args, "<name>", del,
		"Error deleting ACL policy: %v", "Successfully deleted %q ACL policy!")
}
