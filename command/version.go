package command

import "github.com/hashicorp/cli"

// Version is the release this binary reports. Builds set it with
// -ldflags "-X github.com/nomadfork/nomad/command.Version=...".
var Version = "0.1.0-fork"

// VersionCommand prints the version.
type VersionCommand struct {
	Ui cli.Ui
}

func (c *VersionCommand) Help() string {
	return "Usage: nomad version\n\n  Print the version of this binary."
}

func (c *VersionCommand) Synopsis() string { return "Print the version" }

func (c *VersionCommand) Run([]string) int {
	c.Ui.Output("Nomad v" + Version)
	return 0
}
