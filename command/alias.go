package command

import (
	"strings"

	"github.com/hashicorp/cli"
)

// aliasCommand is a top-level shortcut of a longer command ("run" for "job run"): the same
// command, its help naming the short form.
type aliasCommand struct {
	cli.Command
	alias, target string
}

func alias(alias, target string, cmd cli.Command) cli.CommandFactory {
	return func() (cli.Command, error) { return &aliasCommand{Command: cmd, alias: alias, target: target}, nil }
}

func (a *aliasCommand) Help() string {
	help := strings.Replace(a.Command.Help(), "Usage: nomad "+a.target, "Usage: nomad "+a.alias, 1)
	return help + "\n\n  (\"nomad " + a.alias + "\" is the same as \"nomad " + a.target + "\".)"
}
