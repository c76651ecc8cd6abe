package command

import (
	"cmp"
	"fmt"
	"io"
	"sort"

	"github.com/hashicorp/cli"
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

func newACLPolicyInfo(m Meta) cli.Command {
	return &readCommand[*api.ACLPolicy]{Meta: m, name: "acl policy info", args: []string{"<name>"},
		synopsis: "Show an ACL policy and its rules", jsonWhat: "the policy",
		usage: `
Usage: nomad acl policy info [options] <name>

  Show an ACL policy and its rules.
`,
		fetch: func(client *api.Client, pos []string) (*api.ACLPolicy, error) {
			return queried(client.ACLPolicies().Info(pos[0], nil))
		},
		failure: "Error reading ACL policy: %v", format: formatPolicy}
}

func formatPolicy(p *api.ACLPolicy) string {
	return formatKV([]string{
		"Name|" + p.Name,
		"Description|" + orNone(p.Description),
		fmt.Sprintf("CreateIndex|%d", p.CreateIndex),
		fmt.Sprintf("ModifyIndex|%d", p.ModifyIndex),
	}) + "\n\nRules\n\n" + p.Rules
}

func newACLPolicyList(m Meta) cli.Command {
	return &readCommand[[]*api.ACLPolicyListStub]{Meta: m, name: "acl policy list",
		synopsis: "List ACL policies", jsonWhat: "the policies",
		usage: `
Usage: nomad acl policy list [options]

  List ACL policies. A management token sees all of them; other tokens see
  the policies attached to them.
`,
		fetch: func(client *api.Client, _ []string) ([]*api.ACLPolicyListStub, error) {
			return queried(client.ACLPolicies().List(nil))
		},
		failure: "Error listing ACL policies: %v", format: formatPolicyList}
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

func newACLPolicyDelete(m Meta) cli.Command {
	return &deleteCommand{Meta: m, name: "acl policy delete", arg: "<name>", synopsis: "Remove an ACL policy",
		usage: `
Usage: nomad acl policy delete [options] <name>

  Delete an ACL policy. Tokens and roles that name it lose its rules.
`,
		del:     func(client *api.Client, name string) error { return written(client.ACLPolicies().Delete(name, nil)) },
		failure: "Error deleting ACL policy: %v", done: "Successfully deleted %q ACL policy!"}
}

// newACLPolicySelf lists the policies of the caller's own token.
func newACLPolicySelf(m Meta) cli.Command {
	var asJSON bool
	return &command{Meta: m, name: "acl policy self", synopsis: "Lookup self ACL policy assignment",
		usage: `
Usage: nomad acl policy self [options]

  List the ACL policies the token in use holds, directly or through its
  roles. A management token holds none: its rights come from its type.
`,
		heading: "ACL Policy Self",
		options: []option{
			boolOpt(&asJSON, "-json", "Output the policies as JSON."),
		},
		withClient: func(c *command, client *api.Client, _ []string) int {
			list, _, err := client.ACLPolicies().Self(nil)
			if err != nil {
				return c.fail("Error fetching ACL policies: %v", err)
			}
			return printResult(&c.Meta, list, asJSON, formatPolicySelf)
		},
	}
}

// formatPolicySelf shows the workload a policy is attached to when any is, as upstream's
// listing for a workload identity does; otherwise the plain policy list.
func formatPolicySelf(list []*api.ACLPolicyListStub) string {
	if len(list) == 0 {
		return "No policies found"
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	rows := []string{"Name|Job ID|Group Name|Task Name"}
	anyJob := false
	for _, p := range list {
		job, group, task := "<not specified>", "<not specified>", "<not specified>"
		if p.JobACL != nil {
			anyJob = true
			job = orNotSpecified(p.JobACL.JobID)
			group = orNotSpecified(p.JobACL.Group)
			task = orNotSpecified(p.JobACL.Task)
		}
		rows = append(rows, p.Name+"|"+job+"|"+group+"|"+task)
	}
	if !anyJob {
		return formatPolicyList(list)
	}
	return formatList(rows)
}

func orNotSpecified(s string) string {
	if s == "" {
		return "<not specified>"
	}
	return s
}
