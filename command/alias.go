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

// alias makes a fresh target command for every use, as the target's own name does, so no
// state of one run (flag values, say) carries into the next.
func alias(alias, target string, factory cli.CommandFactory) cli.CommandFactory {
	return func() (cli.Command, error) {
		cmd, err := factory()
		if err != nil {
			return nil, err
		}
		return &aliasCommand{Command: cmd, alias: alias, target: target}, nil
	}
}

func (a *aliasCommand) Help() string {
	help := strings.Replace(a.Command.Help(), "Usage: nomad "+a.target, "Usage: nomad "+a.alias, 1)
	return help + "\n\n  (\"nomad " + a.alias + "\" is the same as \"nomad " + a.target + "\".)"
}
