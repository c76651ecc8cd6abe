package command

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

// formatToken is the key/value block every token command prints.
func formatToken(t *api.ACLToken) string {
	expiry := "<none>"
	if t.ExpirationTime != nil && !t.ExpirationTime.IsZero() {
		expiry = t.ExpirationTime.String()
	}
	policies := t.Policies
	if policies == nil {
		policies = []string{}
	}
	kv := formatKV([]string{
		"Accessor ID|" + t.AccessorID,
		"Secret ID|" + t.SecretID,
		"Name|" + t.Name,
		"Type|" + t.Type,
		fmt.Sprintf("Global|%t", t.Global),
		fmt.Sprintf("Create Time|%v", t.CreateTime),
		"Expiry Time|" + expiry,
		fmt.Sprintf("Create Index|%d", t.CreateIndex),
		fmt.Sprintf("Modify Index|%d", t.ModifyIndex),
		fmt.Sprintf("Policies|%v", policies),
	})
	return kv + "\n\nRoles\n" + formatRoleLinks(t.Roles)
}

func formatRoleLinks(roles []*api.ACLTokenRoleLink) string {
	return formatRows(roles, "<none>", "ID|Name", func(r *api.ACLTokenRoleLink) string {
		return r.ID + "|" + r.Name
	})
}

// newACLBootstrap creates the first management token.
func newACLBootstrap(m Meta) cli.Command {
	var asJSON bool
	return &command{Meta: m, name: "acl bootstrap", synopsis: "Create the first management token",
		usage: `
Usage: nomad acl bootstrap [options] [<path>]

  Create the cluster's initial management token. This works once; keep the
  Secret ID it prints. If <path> is given, the file holds the Secret ID to
  use instead of a generated one.
`,
		options: []option{
			boolOpt(&asJSON, "-json", "Print the token as JSON."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			pos, code, ok := c.parseAtMostOne(fs, args, "This command takes at most one argument: <path>")
			if !ok {
				return code
			}
			var secret string
			if len(pos) == 1 {
				b, err := os.ReadFile(pos[0])
				if err != nil {
					return c.fail("Error reading bootstrap secret: %v", err)
				}
				secret = strings.TrimSpace(string(b))
			}
			client, ok := c.client()
			if !ok {
				return 1
			}
			token, _, err := client.ACLTokens().BootstrapOpts(secret, nil)
			if err != nil {
				return c.fail("Error bootstrapping: %v", err)
			}
			return printResult(&c.Meta, token, asJSON, formatToken)
		},
	}
}

// ACLTokenCreateCommand creates a token.
type ACLTokenCreateCommand struct {
	Meta
}

func (c *ACLTokenCreateCommand) Help() string {
	return helpText(`
Usage: nomad acl token create [options]

  Create an ACL token. A client token needs at least one policy or role; a
  management token may do everything and takes neither.
`, `
Create Options:

  -name=<name>
    Human-readable name of the token.

  -type=<client|management>
    Kind of token. Defaults to client.

  -policy=<name>
    Policy to attach. Repeatable.

  -role-name=<name>, -role-id=<id>
    Role to attach, by name or ID. Repeatable.

  -ttl=<duration>
    Lifetime of the token, e.g. "8h". Without it the token does not expire.

  -global
    Replicate the token to every region.

  -json
    Print the token as JSON.
`)
}

func (c *ACLTokenCreateCommand) Synopsis() string { return "Issue an ACL token" }

func (c *ACLTokenCreateCommand) Run(args []string) int {
	var name, tokenType, ttl string
	var global, asJSON bool
	var policies, roleNames, roleIDs stringsFlag
	fs := c.FlagSet("acl token create")
	fs.StringVar(&name, "name", "", "")
	fs.StringVar(&tokenType, "type", "client", "")
	fs.StringVar(&ttl, "ttl", "", "")
	fs.BoolVar(&global, "global", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.Var(&policies, "policy", "")
	fs.Var(&roleNames, "role-name", "")
	fs.Var(&roleIDs, "role-id", "")
	if _, code, ok := c.parseArgs(fs, args); !ok {
		return code
	}
	token := &api.ACLToken{
		Name:     name,
		Type:     tokenType,
		Policies: policies,
		Global:   global,
		Roles:    roleLinks(roleNames, roleIDs),
	}
	if ttl != "" {
		d, err := time.ParseDuration(ttl)
		if err != nil {
			return c.fail("Invalid -ttl %q: %v", ttl, err)
		}
		token.ExpirationTTL = d
	}
	client, ok := c.client()
	if !ok {
		return 1
	}
	created, _, err := client.ACLTokens().Create(token, nil)
	if err != nil {
		return c.fail("Error creating token: %v", err)
	}
	return printResult(&c.Meta, created, asJSON, formatToken)
}

func roleLinks(names, ids []string) []*api.ACLTokenRoleLink {
	var links []*api.ACLTokenRoleLink
	for _, n := range names {
		links = append(links, &api.ACLTokenRoleLink{Name: n})
	}
	for _, id := range ids {
		links = append(links, &api.ACLTokenRoleLink{ID: id})
	}
	return links
}

func newACLTokenList(m Meta) cli.Command {
	return &readCommand[[]*api.ACLTokenListStub]{Meta: m, name: "acl token list",
		synopsis: "List ACL tokens", jsonWhat: "the tokens",
		usage: `
Usage: nomad acl token list [options]

  List ACL tokens, without their secrets. Needs a management token.
`,
		fetch: func(client *api.Client, _ []string) ([]*api.ACLTokenListStub, error) {
			return queried(client.ACLTokens().List(nil))
		},
		failure: "Error listing tokens: %v", format: formatTokenList}
}

func formatTokenList(tokens []*api.ACLTokenListStub) string {
	if len(tokens) == 0 {
		return "No tokens found"
	}
	now := time.Now()
	rows := []string{"Name|Type|Global|Accessor ID|Expired"}
	for _, t := range tokens {
		expired := t.ExpirationTime != nil && !t.ExpirationTime.IsZero() && t.ExpirationTime.Before(now)
		rows = append(rows, fmt.Sprintf("%s|%s|%t|%s|%t", t.Name, t.Type, t.Global, t.AccessorID, expired))
	}
	return formatList(rows)
}

func newACLTokenInfo(m Meta) cli.Command {
	return &readCommand[*api.ACLToken]{Meta: m, name: "acl token info", args: []string{"<accessor-id>"},
		synopsis: "Show an ACL token", jsonWhat: "the token",
		usage: `
Usage: nomad acl token info [options] <accessor-id>

  Show an ACL token. Needs a management token, or the token itself.
`,
		fetch: func(client *api.Client, pos []string) (*api.ACLToken, error) {
			return queried(client.ACLTokens().Info(pos[0], nil))
		},
		failure: "Error fetching token: %v", format: formatToken}
}

func newACLTokenSelf(m Meta) cli.Command {
	return &readCommand[*api.ACLToken]{Meta: m, name: "acl token self",
		synopsis: "Show the token this command runs with", jsonWhat: "the token",
		usage: `
Usage: nomad acl token self [options]

  Show the token given by -token or NOMAD_TOKEN.
`,
		fetch: func(client *api.Client, _ []string) (*api.ACLToken, error) {
			return queried(client.ACLTokens().Self(nil))
		},
		failure: "Error fetching self token: %v", format: formatToken}
}

// ACLTokenUpdateCommand changes a token's name, type, policies or roles.
type ACLTokenUpdateCommand struct {
	Meta
}

func (c *ACLTokenUpdateCommand) Help() string {
	return helpText(`
Usage: nomad acl token update [options] <accessor-id>

  Change an existing token. Only the settings given change; -policy,
  -role-name and -role-id replace the whole list they name. Whether a token
  is global cannot be changed.
`, `
Update Options:

  -name=<name>
    New name of the token.

  -type=<client|management>
    New kind of token.

  -policy=<name>
    Policy to attach. Repeatable; replaces the current policies.

  -role-name=<name>, -role-id=<id>
    Role to attach. Repeatable; replaces the current roles.

  -json
    Print the token as JSON.
`)
}

func (c *ACLTokenUpdateCommand) Synopsis() string { return "Change an ACL token" }

func (c *ACLTokenUpdateCommand) Run(args []string) int {
	name, tokenType := optString{}, optString{}
	var asJSON bool
	var policies, roleNames, roleIDs stringsFlag
	fs := c.FlagSet("acl token update")
	fs.Var(&name, "name", "")
	fs.Var(&tokenType, "type", "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.Var(&policies, "policy", "")
	fs.Var(&roleNames, "role-name", "")
	fs.Var(&roleIDs, "role-id", "")
	pos, client, code, ok := c.connect(fs, args, "<accessor-id>")
	if !ok {
		return code
	}
	token, _, err := client.ACLTokens().Info(pos[0], nil)
	if err != nil {
		return c.fail("Error fetching token: %v", err)
	}
	if name.set {
		token.Name = name.v
	}
	if tokenType.set {
		token.Type = tokenType.v
	}
	if len(policies) > 0 {
		token.Policies = policies
	}
	if len(roleNames)+len(roleIDs) > 0 {
		token.Roles = roleLinks(roleNames, roleIDs)
	}
	// The TTL was an input to the original expiry; sending it again would
	// be read as a request to change it.
	token.ExpirationTTL = 0
	updated, _, err := client.ACLTokens().Update(token, nil)
	if err != nil {
		return c.fail("Error updating token: %v", err)
	}
	return printResult(&c.Meta, updated, asJSON, formatToken)
}

func newACLTokenDelete(m Meta) cli.Command {
	return &deleteCommand{Meta: m, name: "acl token delete", arg: "<accessor-id>", synopsis: "Revoke an ACL token",
		usage: `
Usage: nomad acl token delete [options] <accessor-id>

  Delete an ACL token; its secret stops working at once.
`,
		del: func(client *api.Client, accessorID string) error {
			return written(client.ACLTokens().Delete(accessorID, nil))
		},
		failure: "Error deleting token: %v", done: "Token %s successfully deleted"}
}
