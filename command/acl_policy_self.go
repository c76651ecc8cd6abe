package command

import (
	"sort"

	"github.com/hashicorp/nomad/api"
)

// ACLPolicySelfCommand lists the policies of the caller's own token.
type ACLPolicySelfCommand struct {
	Meta
	asJSON bool
}

func (c *ACLPolicySelfCommand) Help() string {
	return helpText(`
Usage: nomad acl policy self [options]

  List the ACL policies the token in use holds, directly or through its
  roles. A management token holds none: its rights come from its type.
`, optionsHelp("ACL Policy Self", c.options()))
}

func (c *ACLPolicySelfCommand) options() []option {
	return []option{
		boolOpt(&c.asJSON, "-json", "Output the policies as JSON."),
	}
}

func (c *ACLPolicySelfCommand) Synopsis() string { return "Lookup self ACL policy assignment" }

func (c *ACLPolicySelfCommand) Run(args []string) int {
	fs := c.flagSetWith("acl policy self", c.options())
	_, client, code, ok := c.connect(fs, args)
	if !ok {
		return code
	}
	list, _, err := client.ACLPolicies().Self(nil)
	if err != nil {
		return c.fail("Error fetching ACL policies: %v", err)
	}
	return printResult(&c.Meta, list, c.asJSON, formatPolicySelf)
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
