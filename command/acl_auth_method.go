package command

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

func formatAuthMethod(m *api.ACLAuthMethod) string {
	rows := []string{
		"Name|" + m.Name,
		"Type|" + m.Type,
		"Locality|" + m.TokenLocality,
		"Max Token TTL|" + m.MaxTokenTTL.String(),
		"Token Name Format|" + orNone(m.TokenNameFormat),
		fmt.Sprintf("Default|%t", m.Default),
		fmt.Sprintf("Create Index|%d", m.CreateIndex),
		fmt.Sprintf("Modify Index|%d", m.ModifyIndex),
	}
	out := formatKV(rows)
	if cfg := m.Config; cfg != nil {
		out += "\n\nAuth Method Config\n" + formatKV([]string{
			"JWT Validation Public Keys|" + orNone(strings.Join(cfg.JWTValidationPubKeys, ",")),
			"JWKS URL|" + orNone(cfg.JWKSURL),
			"OIDC Discovery URL|" + orNone(cfg.OIDCDiscoveryURL),
			"OIDC Client ID|" + orNone(cfg.OIDCClientID),
			"OIDC Client Secret|" + orNone(cfg.OIDCClientSecret),
			"Bound audiences|" + orNone(strings.Join(cfg.BoundAudiences, ",")),
			"Bound issuer|" + orNone(strings.Join(cfg.BoundIssuer, ",")),
			"Signing algorithms|" + orNone(strings.Join(cfg.SigningAlgs, ",")),
			"Claim mappings|" + orNone(formatMapping(cfg.ClaimMappings)),
			"List claim mappings|" + orNone(formatMapping(cfg.ListClaimMappings)),
		})
	}
	return out
}

func formatMapping(m map[string]string) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("{%s: %s}", k, m[k])
	}
	return strings.Join(parts, "; ")
}

// authMethodFlags are the settings create and update share; update applies only those given.
type authMethodFlags struct {
	typ, locality, nameFormat, ttl, config optString
	isDefault                              optBool
}

func (f *authMethodFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.typ, "type", "")
	fs.Var(&f.locality, "token-locality", "")
	fs.Var(&f.nameFormat, "token-name-format", "")
	fs.Var(&f.ttl, "max-token-ttl", "")
	fs.Var(&f.config, "config", "")
	fs.Var(&f.isDefault, "default", "")
}

// apply writes the given settings into m; -config takes JSON, "-" for stdin or "@path".
func (f *authMethodFlags) apply(stdin io.Reader, m *api.ACLAuthMethod) error {
	if f.typ.set {
		m.Type = f.typ.v
	}
	if f.locality.set {
		m.TokenLocality = f.locality.v
	}
	if f.nameFormat.set {
		m.TokenNameFormat = f.nameFormat.v
	}
	if f.isDefault.set {
		m.Default = f.isDefault.v
	}
	if f.ttl.set {
		d, err := time.ParseDuration(f.ttl.v)
		if err != nil {
			return fmt.Errorf("invalid -max-token-ttl %q: %v", f.ttl.v, err)
		}
		m.MaxTokenTTL = d
	}
	if f.config.set {
		raw := []byte(f.config.v)
		if f.config.v == "-" || strings.HasPrefix(f.config.v, "@") {
			var err error
			if raw, err = readInput(strings.TrimPrefix(f.config.v, "@"), stdin); err != nil {
				return fmt.Errorf("reading -config: %v", err)
			}
		}
		var cfg api.ACLAuthMethodConfig
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return fmt.Errorf("invalid -config: %v", err)
		}
		m.Config = &cfg
	}
	return nil
}

const authMethodFlagsHelp = `
  -type=<JWT|OIDC>
    Type of the auth method.

  -token-locality=<local|global>
    Whether tokens made by logins are local to the region or global.

  -max-token-ttl=<duration>
    How long a token made by a login lives.

  -token-name-format=<format>
    Name format of tokens made by logins.

  -default
    Make the method the default one of its type.

  -config=<json|@path|->
    The method's configuration as JSON, from a file with @path, or from stdin with -.

  -json
    Print the auth method as JSON.
`

// ACLAuthMethodCreateCommand creates an auth method.
type ACLAuthMethodCreateCommand struct {
	Meta
	// Stdin is read when -config is "-"; nil means os.Stdin.
	Stdin io.Reader
}

func (c *ACLAuthMethodCreateCommand) Help() string {
	return helpText(`
Usage: nomad acl auth-method create [options]

  Create an ACL auth method: a way to log in with a token another system issued.
`, `
Create Options:

  -name=<name>
    Name of the auth method. Required.
`+authMethodFlagsHelp)
}

func (c *ACLAuthMethodCreateCommand) Synopsis() string { return "Create an ACL auth method" }

func (c *ACLAuthMethodCreateCommand) Run(args []string) int {
	var name string
	var asJSON bool
	var f authMethodFlags
	fs := c.FlagSet("acl auth-method create")
	fs.StringVar(&name, "name", "", "")
	fs.BoolVar(&asJSON, "json", false, "")
	f.register(fs)
	if _, code, ok := c.parseArgs(fs, args); !ok {
		return code
	}
	if name == "" {
		return c.fail("ACL auth-method name must be specified using the -name flag")
	}
	m := &api.ACLAuthMethod{Name: name}
	if err := f.apply(c.Stdin, m); err != nil {
		return c.fail("%v", err)
	}
	client, ok := c.client()
	if !ok {
		return 1
	}
	created, _, err := client.ACLAuthMethods().Create(m, nil)
	if err != nil {
		return c.fail("Error creating ACL auth-method: %v", err)
	}
	return printResult(&c.Meta, created, asJSON, formatAuthMethod)
}

// ACLAuthMethodUpdateCommand changes an auth method; settings not given keep their values.
type ACLAuthMethodUpdateCommand struct {
	Meta
	// Stdin is read when -config is "-"; nil means os.Stdin.
	Stdin io.Reader
}

func (c *ACLAuthMethodUpdateCommand) Help() string {
	return helpText(`
Usage: nomad acl auth-method update [options] <name>

  Change an ACL auth method. Settings not given keep their values; -config
  replaces the whole configuration. Secrets read back as "redacted" are kept.
`, `
Update Options:
`+authMethodFlagsHelp)
}

func (c *ACLAuthMethodUpdateCommand) Synopsis() string { return "Change an ACL auth method" }

func (c *ACLAuthMethodUpdateCommand) Run(args []string) int {
	var asJSON bool
	var f authMethodFlags
	fs := c.FlagSet("acl auth-method update")
	fs.BoolVar(&asJSON, "json", false, "")
	f.register(fs)
	pos, client, code, ok := c.connect(fs, args, "<name>")
	if !ok {
		return code
	}
	m, _, err := client.ACLAuthMethods().Get(pos[0], nil)
	if err != nil {
		return c.fail("Error reading ACL auth-method: %v", err)
	}
	if err := f.apply(c.Stdin, m); err != nil {
		return c.fail("%v", err)
	}
	updated, _, err := client.ACLAuthMethods().Update(m, nil)
	if err != nil {
		return c.fail("Error updating ACL auth-method: %v", err)
	}
	return printResult(&c.Meta, updated, asJSON, formatAuthMethod)
}

func newACLAuthMethodList(m Meta) cli.Command {
	return &readCommand[[]*api.ACLAuthMethodListStub]{Meta: m, name: "acl auth-method list",
		synopsis: "List ACL auth methods", jsonWhat: "the auth methods",
		usage: `
Usage: nomad acl auth-method list [options]

  List ACL auth methods.
`,
		fetch: func(client *api.Client, _ []string) ([]*api.ACLAuthMethodListStub, error) {
			return queried(client.ACLAuthMethods().List(nil))
		},
		failure: "Error listing ACL auth-methods: %v", format: formatAuthMethodList}
}

func formatAuthMethodList(ms []*api.ACLAuthMethodListStub) string {
	return formatRows(ms, "No ACL auth methods found", "Name|Type|Default", func(m *api.ACLAuthMethodListStub) string {
		return fmt.Sprintf("%s|%s|%t", m.Name, m.Type, m.Default)
	})
}

func newACLAuthMethodInfo(m Meta) cli.Command {
	return &readCommand[*api.ACLAuthMethod]{Meta: m, name: "acl auth-method info", args: []string{"<name>"},
		synopsis: "Show an ACL auth method", jsonWhat: "the auth method",
		usage: `
Usage: nomad acl auth-method info [options] <name>

  Show an ACL auth method; its secrets read "redacted".
`,
		fetch: func(client *api.Client, pos []string) (*api.ACLAuthMethod, error) {
			return queried(client.ACLAuthMethods().Get(pos[0], nil))
		},
		failure: "Error reading ACL auth-method: %v", format: formatAuthMethod}
}

func newACLAuthMethodDelete(m Meta) cli.Command {
	return &deleteCommand{Meta: m, name: "acl auth-method delete", arg: "<name>", synopsis: "Remove an ACL auth method",
		usage: `
Usage: nomad acl auth-method delete [options] <name>

  Delete an ACL auth method and its binding rules.
`,
		del:     func(client *api.Client, name string) error { return written(client.ACLAuthMethods().Delete(name, nil)) },
		failure: "Error deleting ACL auth-method: %v", done: "ACL auth-method %s successfully deleted"}
}
