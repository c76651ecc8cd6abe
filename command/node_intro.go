package command

import (
	"bytes"
	"text/template"
	"time"

	"github.com/hashicorp/nomad/api"
)

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
