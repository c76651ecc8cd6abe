package command

import (
	"bytes"
	"flag"
	"maps"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

const nodeMetaHelp = `
Usage: nomad node meta <subcommand> [options] [args]

  Read and change a node's dynamic metadata: keys set through the API, which
  join (and may override) the static meta of the client's configuration and
  are seen by constraints like any other node meta.
`

// newNodeMetaRead shows a node's metadata.
func newNodeMetaRead(m Meta) cli.Command {
	var nodeID string
	var asJSON bool
	return &command{Meta: m, name: "node meta read", synopsis: "Read a node's metadata",
		usage: `
Usage: nomad node meta read [options]

  Show a node's metadata: all of it, then its dynamic and static parts. The
  node is the one of the agent the command talks to unless -node-id names
  another. Needs node read access when ACLs are on.
`,
		heading: "Node Meta Read",
		options: []option{
			flagOpt(&nodeID, "", "-node-id=<id>", "The node to read, by ID or unique prefix."),
			boolOpt(&asJSON, "-json", "Print the API's JSON."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			_, client, code, ok := c.connect(fs, args)
			if !ok {
				return code
			}
			if nodeID != "" {
				if nodeID, ok = c.resolveNode(client, nodeID); !ok {
					return 1
				}
			}
			meta, err := client.Nodes().Meta().Read(nodeID, nil)
			if err != nil {
				return c.fail("Error reading the node's metadata: %v", err)
			}
			return printResult(&c.Meta, meta, asJSON, formatNodeMeta)
		},
	}
}

func formatNodeMeta(m *api.NodeMetaResponse) string {
	dynamic := make(map[string]string, len(m.Dynamic))
	for k, v := range m.Dynamic {
		// A nil value is a key the API unset: it hides the static value of that key.
		if v == nil {
			dynamic[k] = "<unset>"
		} else {
			dynamic[k] = *v
		}
	}
	return "All Meta\n" + formatMetaMap(m.Meta) + "\n\nDynamic Meta\n" + formatMetaMap(dynamic) +
		"\n\nStatic Meta\n" + formatMetaMap(m.Static)
}

func formatMetaMap(m map[string]string) string {
	if len(m) == 0 {
		return "<none>"
	}
	keys := slices.Sorted(maps.Keys(m))
	rows := make([]string, 0, len(keys))
	for _, k := range keys {
		rows = append(rows, k+"|"+m[k])
	}
	return formatKV(rows)
}

// newNodeMetaApply sets and unsets a node's dynamic metadata.
func newNodeMetaApply(m Meta) cli.Command {
	var nodeID, unset string
	return &command{Meta: m, name: "node meta apply", synopsis: "Change a node's dynamic metadata",
		usage: `
Usage: nomad node meta apply [options] <key>=<value>...

  Set keys of a node's dynamic metadata, and with -unset remove keys. The
  node is the one of the agent the command talks to unless -node-id names
  another. Needs node write access when ACLs are on.
`,
		heading: "Node Meta Apply",
		options: []option{
			flagOpt(&nodeID, "", "-node-id=<id>", "The node to change, by ID or unique prefix."),
			flagOpt(&unset, "", "-unset=<key>[,<key>...]", "Keys to remove from the dynamic metadata."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			pos, code, ok := c.parse(fs, args)
			if !ok {
				return code
			}
			meta := map[string]*string{}
			for _, kv := range pos {
				k, v, found := strings.Cut(kv, "=")
				if !found || k == "" {
					return c.fail("Invalid argument %q: expected <key>=<value>", kv)
				}
				meta[k] = &v
			}
			for _, k := range strings.Split(unset, ",") {
				if k = strings.TrimSpace(k); k != "" {
					meta[k] = nil
				}
			}
			if len(meta) == 0 {
				return c.fail("This command takes at least one <key>=<value> argument or -unset")
			}
			client, ok := c.client()
			if !ok {
				return 1
			}
			if nodeID != "" {
				if nodeID, ok = c.resolveNode(client, nodeID); !ok {
					return 1
				}
			}
			if _, err := client.Nodes().Meta().Apply(&api.NodeMetaApplyRequest{NodeID: nodeID, Meta: meta}, nil); err != nil {
				return c.fail("Error applying the node's metadata: %v", err)
			}
			return 0
		},
	}
}

// printTemplated prints v with -json, else with the -t template, else as format renders it.
func printTemplated[T any](m *Meta, v T, asJSON bool, tmpl string, format func(T) string) int {
	if asJSON && tmpl != "" {
		return m.fail("Only one of -json or -t may be given")
	}
	if tmpl == "" {
		return printResult(m, v, asJSON, format)
	}
	t, err := template.New("out").Parse(tmpl)
	if err != nil {
		return m.fail("Error parsing -t template: %v", err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, v); err != nil {
		return m.fail("Error formatting the response: %v", err)
	}
	m.Ui.Output(b.String())
	return 0
}

const nodeIntroHelp = `
Usage: nomad node intro <subcommand> [options]

  Manage client introduction tokens: signed, expiring tokens that let a new
  client node join the cluster when the servers require introduction
  (server.client_introduction.enforcement).
`

// NodeIntroCreateCommand is `nomad node intro create`: it asks the servers to sign a client
// introduction token (node:write) and prints it. Nothing is stored on the servers, so the
// token is valid until it expires.
type NodeIntroCreateCommand struct {
	Meta
}

func (c *NodeIntroCreateCommand) Help() string {
	return helpText(`
Usage: nomad node intro create [options]

  Create a client introduction token. Give it to the new client with
  -client-intro-token, NOMAD_CLIENT_INTRO_TOKEN, or as <state_dir>/intro_token.jwt.
  Name the node with -node-name where possible, so the token introduces that
  node only. Requires a token with node:write when ACLs are enabled.
`, `
Intro Create Options:

  -node-name=<name>
    The name of the node the token introduces. Empty lets any node of the
    pool use it.

  -node-pool=<pool>
    The node pool the token introduces a node to (default: "default").

  -ttl=<duration>
    How long the token is valid. Empty takes the servers'
    client_introduction.default_identity_ttl.

  -json
    Print the response as JSON.

  -t=<template>
    Format the response with a Go template.
`)
}

func (c *NodeIntroCreateCommand) Synopsis() string { return "Create a client introduction token" }

func (c *NodeIntroCreateCommand) Run(args []string) int {
	var (
		asJSON                  bool
		name, pool, ttl, format string
	)
	fs := c.FlagSet("node intro create")
	fs.StringVar(&name, "node-name", "", "")
	fs.StringVar(&pool, "node-pool", "", "")
	fs.StringVar(&ttl, "ttl", "", "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&format, "t", "", "")
	_, client, code, ok := c.connect(fs, args)
	if !ok {
		return code
	}
	if asJSON && format != "" {
		return c.fail("Both -json and -t are not allowed")
	}
	req := &api.ACLIdentityClientIntroductionTokenRequest{NodeName: name, NodePool: pool}
	if ttl != "" {
		d, err := time.ParseDuration(ttl)
		if err != nil || d <= 0 {
			return c.fail("Invalid -ttl %q: must be a positive duration such as 15m", ttl)
		}
		req.TTL = d
	}
	resp, _, err := client.ACLIdentity().CreateClientIntroductionToken(req, nil)
	if err != nil {
		return c.fail("Error creating client introduction token: %v", err)
	}
	switch {
	case asJSON:
		return c.printJSON(resp)
	case format != "":
		tmpl, err := template.New("out").Parse(format)
		if err != nil {
			return c.fail("Error parsing -t template: %v", err)
		}
		var b bytes.Buffer
		if err := tmpl.Execute(&b, resp); err != nil {
			return c.fail("Error formatting the response: %v", err)
		}
		c.Ui.Output(b.String())
		return 0
	}
	c.Ui.Output("Successfully generated client introduction token:\n\n" + resp.JWT)
	return 0
}
