package command

import (
	"github.com/hashicorp/nomad/api"
)

// LoginCommand exchanges a token another system issued for an ACL token.
type LoginCommand struct {
	Meta
}

func (c *LoginCommand) Help() string {
	return helpText(`
Usage: nomad login [options]

  Exchange a token another system issued (a JWT) for a Nomad ACL token
  through an auth method, and print the new token.
`, `
Login Options:

  -method=<name>
    The auth method to log in with. Required.

  -login-token=<token>
    The token to exchange. Required.

  -json
    Print the new ACL token as JSON.
`)
}

func (c *LoginCommand) Synopsis() string { return "Log in to Nomad with a token from another system" }

func (c *LoginCommand) Run(args []string) int {
	var method, loginToken string
	var asJSON bool
	fs := c.FlagSet("login")
	fs.StringVar(&method, "method", "", "")
	fs.StringVar(&loginToken, "login-token", "", "")
	fs.BoolVar(&asJSON, "json", false, "")
	if _, code, ok := c.parseArgs(fs, args); !ok {
		return code
	}
	if method == "" {
		return c.fail("The auth method must be specified using the -method flag")
	}
	if loginToken == "" {
		return c.fail("The login token must be specified using the -login-token flag")
	}
	client, ok := c.client()
	if !ok {
		return 1
	}
	token, _, err := client.ACLAuth().Login(&api.ACLLoginRequest{AuthMethodName: method, LoginToken: loginToken}, nil)
	if err != nil {
		return c.fail("Error logging in: %v", err)
	}
	if !asJSON {
		c.Ui.Output("Successfully logged in via " + method + "\n")
	}
	return printResult(&c.Meta, token, asJSON, formatToken)
}
