package command

import (
	"flag"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

// newLogin exchanges a token another system issued for an ACL token.
func newLogin(m Meta) cli.Command {
	var method, loginToken string
	var asJSON bool
	return &command{Meta: m, name: "login", synopsis: "Log in to Nomad with a token from another system",
		usage: `
Usage: nomad login [options]

  Exchange a token another system issued (a JWT) for a Nomad ACL token
  through an auth method, and print the new token.
`,
		options: []option{
			flagOpt(&method, "", "-method=<name>", "The auth method to log in with. Required."),
			flagOpt(&loginToken, "", "-login-token=<token>", "The token to exchange. Required."),
			boolOpt(&asJSON, "-json", "Print the new ACL token as JSON."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
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
		},
	}
}
