// Command nomad is the single binary of this project: the CLI, and with
// "nomad agent" the server itself.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/hashicorp/cli"
	"github.com/nomadfork/nomad/client/drivers/execdriver"
	"github.com/nomadfork/nomad/command"
	agentcmd "github.com/nomadfork/nomad/command/agent"
)

func main() {
	// The exec driver starts this binary again as a task's init; it is no command of the CLI
	// and must run before anything else does.
	if execdriver.IsInit() {
		execdriver.RunInit()
	}
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	ui := &cli.BasicUi{Reader: os.Stdin, Writer: os.Stdout, ErrorWriter: os.Stderr}

	// Servers gossip the binary's version in their "build" tag.
	agentcmd.Build = command.Version

	commands := command.Commands(ui)
	// The agent lives outside package command so the CLI never links the
	// server's packages into its own import graph.
	commands["agent"] = func() (cli.Command, error) { return &agentCommand{ui: ui}, nil }
	commands["config validate"] = func() (cli.Command, error) { return &configValidateCommand{ui: ui}, nil }

	c := cli.NewCLI("nomad", command.Version)
	c.Args = args
	c.Commands = commands
	c.HiddenCommands = command.HiddenCommands
	c.HelpFunc = cli.BasicHelpFunc("nomad")
	c.HelpWriter = os.Stdout
	c.ErrorWriter = os.Stderr

	code, err := c.Run()
	if err != nil {
		fmt.Fprintf(os.Stderr, "Error executing CLI: %v\n", err)
		return 1
	}
	return code
}

// agentCommand adapts agentcmd.Run to the cli.Command interface.
type agentCommand struct {
	ui cli.Ui
}

// Help asks the agent for its own help text, so the flag list is written
// once, next to the flags. "-help" makes the agent print it and return
// without starting.
func (a *agentCommand) Help() string {
	capture := cli.NewMockUi()
	agentcmd.Run([]string{"-help"}, capture)
	if help := strings.TrimSpace(capture.OutputWriter.String()); help != "" {
		return help
	}
	return "Usage: nomad agent [options]\n\n  Run a Nomad agent."
}

func (a *agentCommand) Synopsis() string { return "Run a Nomad agent" }

func (a *agentCommand) Run(args []string) int { return agentcmd.Run(args, a.ui) }

// configValidateCommand checks agent configuration with the agent's own loader, which lives
// beside the agent for the same reason.
type configValidateCommand struct {
	ui cli.Ui
}

func (c *configValidateCommand) Help() string     { return agentcmd.ConfigValidateHelp }
func (c *configValidateCommand) Synopsis() string { return "Validate agent configuration files" }
func (c *configValidateCommand) Run(args []string) int {
	return agentcmd.RunConfigValidate(args, c.ui)
}
