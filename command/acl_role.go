package command

import (
	"flag"
	"fmt"
	"strings"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

func formatRole(r *api.ACLRole) string {
	return formatKV([]string{
		"ID|" + r.ID,
		"Name|" + r.Name,
		"Description|" + orNone(r.Description),
		"Policies|" + rolePolicyNames(r.Policies),
		fmt.Sprintf("Create Index|%d", r.CreateIndex),
		fmt.Sprintf("Modify Index|%d", r.ModifyIndex),
	})
}

func rolePolicyNames(links []*api.ACLRolePolicyLink) string {
	names := make([]string, len(links))
	for i, l := range links {
		names[i] = l.Name
	}
	return strings.Join(names, ",")
}

func policyLinks(names []string) []*api.ACLRolePolicyLink {
	links := make([]*api.ACLRolePolicyLink, len(names))
	for i, n := range names {
		links[i] = &api.ACLRolePolicyLink{Name: n}
	}
	return links
}

// newACLRoleCreate creates a role.
func newACLRoleCreate(m Meta) cli.Command {
	var name, description string
	var asJSON bool
	var policies stringsFlag
	return &command{Meta: m, name: "acl role create", synopsis: "Define a named set of policies",
		usage: `
Usage: nomad acl role create [options]

  Create an ACL role: a named set of policies that tokens can be linked to.
`,
		options: []option{
			flagOpt(&name, "", "-name=<name>", "Name of the role. Required."),
			flagOpt(&description, "", "-description=<text>", "Human-readable description of the role."),
			valueOpt(&policies, "-policy=<name>", "Policy the role grants. Repeatable; at least one is required."),
			boolOpt(&asJSON, "-json", "Print the role as JSON."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			if _, code, ok := c.parseArgs(fs, args); !ok {
				return code
			}
			if name == "" {
				return c.fail("ACL role name must be specified using the -name flag")
			}
			if len(policies) == 0 {
				return c.fail("At least one policy must be specified using the -policy flag")
			}
			client, ok := c.client()
			if !ok {
				return 1
			}
			role, _, err := client.ACLRoles().Create(&api.ACLRole{
				Name: name, Description: description, Policies: policyLinks(policies),
			}, nil)
			if err != nil {
				return c.fail("Error creating ACL role: %v", err)
			}
			return printResult(&c.Meta, role, asJSON, formatRole)
		},
	}
}

func newACLRoleList(m Meta) cli.Command {
	return &readCommand[[]*api.ACLRoleListStub]{Meta: m, name: "acl role list",
		synopsis: "List ACL roles", jsonWhat: "the roles",
		usage: `
Usage: nomad acl role list [options]

  List ACL roles.
`,
		fetch: func(client *api.Client, _ []string) ([]*api.ACLRoleListStub, error) {
			return queried(client.ACLRoles().List(nil))
		},
		failure: "Error listing ACL roles: %v", format: formatRoleList}
}

func formatRoleList(roles []*api.ACLRoleListStub) string {
	return formatRows(roles, "No ACL roles found", "ID|Name|Description|Policies", func(r *api.ACLRoleListStub) string {
		return fmt.Sprintf("%s|%s|%s|%s", r.ID, r.Name, r.Description, rolePolicyNames(r.Policies))
	})
}

// newACLRoleInfo shows a role.
func newACLRoleInfo(m Meta) cli.Command {
	var byName, asJSON bool
	return &command{Meta: m, name: "acl role info", synopsis: "Show an ACL role",
		usage: `
Usage: nomad acl role info [options] <id>

  Show an ACL role, looked up by ID or, with -by-name, by name.
`,
		options: []option{
			boolOpt(&byName, "-by-name", "Treat the argument as the role's name."),
			boolOpt(&asJSON, "-json", "Print the role as JSON."),
		},
		args: []string{"<id>"},
		withClient: func(c *command, client *api.Client, pos []string) int {
			var role *api.ACLRole
			var err error
			if byName {
				role, _, err = client.ACLRoles().GetByName(pos[0], nil)
			} else {
				role, _, err = client.ACLRoles().Get(pos[0], nil)
			}
			if err != nil {
				return c.fail("Error reading ACL role: %v", err)
			}
			return printResult(&c.Meta, role, asJSON, formatRole)
		},
	}
}

// ACLRoleUpdateCommand changes a role.
type ACLRoleUpdateCommand struct {
	Meta
}

func (c *ACLRoleUpdateCommand) Help() string {
	return helpText(`
Usage: nomad acl role update [options] <id>

  Change an ACL role. Settings not given keep their values; -policy adds to
  the current policies unless -no-merge is given, in which case the given
  policies replace them.
`, `
Update Options:

  -name=<name>
    New name of the role.

  -description=<text>
    New description of the role.

  -policy=<name>
    Policy to grant. Repeatable.

  -no-merge
    Replace the role's policies with those given instead of adding to them.

  -json
    Print the role as JSON.
`)
}

func (c *ACLRoleUpdateCommand) Synopsis() string { return "Change an ACL role" }

func (c *ACLRoleUpdateCommand) Run(args []string) int {
	name, description := optString{}, optString{}
	var noMerge, asJSON bool
	var policies stringsFlag
	fs := c.FlagSet("acl role update")
	fs.Var(&name, "name", "")
	fs.Var(&description, "description", "")
	fs.BoolVar(&noMerge, "no-merge", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.Var(&policies, "policy", "")
	pos, code, ok := c.parseArgs(fs, args, "<id>")
	if !ok {
		return code
	}
	if noMerge && len(policies) == 0 {
		return c.fail("-no-merge needs at least one -policy")
	}
	client, ok := c.client()
	if !ok {
		return 1
	}
	role, _, err := client.ACLRoles().Get(pos[0], nil)
	if err != nil {
		return c.fail("Error reading ACL role: %v", err)
	}
	if name.set {
		role.Name = name.v
	}
	if description.set {
		role.Description = description.v
	}
	if noMerge {
		role.Policies = policyLinks(policies)
	} else {
		have := map[string]bool{}
		for _, l := range role.Policies {
			have[l.Name] = true
		}
		for _, p := range policies {
			if !have[p] {
				role.Policies = append(role.Policies, &api.ACLRolePolicyLink{Name: p})
				have[p] = true
			}
		}
	}
	updated, _, err := client.ACLRoles().Update(role, nil)
	if err != nil {
		return c.fail("Error updating ACL role: %v", err)
	}
	return printResult(&c.Meta, updated, asJSON, formatRole)
}

func newACLRoleDelete(m Meta) cli.Command {
	return &deleteCommand{Meta: m, name: "acl role delete", arg: "<id>", synopsis: "Remove an ACL role",
		usage: `
Usage: nomad acl role delete [options] <id>

  Delete an ACL role. Tokens linked to it lose the policies it granted.
`,
		del:     func(client *api.Client, id string) error { return written(client.ACLRoles().Delete(id, nil)) },
		failure: "Error deleting ACL role: %v", done: "ACL role %s successfully deleted"}
}
