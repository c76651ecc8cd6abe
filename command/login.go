package command

import (
	"github.com/hashicorp/nomad/api"
)

// LoginCommand exchanges a token another system issued for an ACL token.
type LoginCommand struct {
	Meta
	method     string
	loginToken string
	asJSON     bool
}

func (c *LoginCommand) Help() string {
	return helpText(`
Usage: nomad login [options]

  Exchange a token another system issued (a JWT) for a Nomad ACL token
  through an auth method, and print the new token.
`, optionsHelp("Login", c.options()))
}

func (c *LoginCommand) options() []option {
	return []option{
		flagOpt(&c.method, "", "-method=<name>", "The auth method to log in with. Required."),
		flagOpt(&c.loginToken, "", "-login-token=<token>", "The token to exchange. Required."),
		boolOpt(&c.asJSON, "-json", "Print the new ACL token as JSON."),
	}
}

func (c *LoginCommand) Synopsis() string { return "Log in to Nomad with a token from another system" }

func (c *LoginCommand) Run(args []string) int {
	fs := c.flagSetWith("login", c.options())
	if _, code, ok := c.parseArgs(fs, args); !ok {
		return code
	}
	if c.method == "" {
		return c.fail("The auth method must be specified using the -method flag")
	}
	if c.loginToken == "" {
		return c.fail("The login token must be specified using the -login-token flag")
	}
	client, ok := c.client()
	if !ok {
		return 1
	}
	token, _, err := client.ACLAuth().Login(&api.ACLLoginRequest{AuthMethodName: c.method, LoginToken: c.loginToken}, nil)
	if err != nil {
		return c.fail("Error logging in: %v", err)
	}
	if !c.asJSON {
		c.Ui.Output("Successfully logged in via " + c.method + "\n")
	}
	return printResult(&c.Meta, token, c.asJSON, formatToken)
}
