package command

import (
	"sort"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

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
