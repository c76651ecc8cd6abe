package command

import (
	"fmt"

	"github.com/hashicorp/cli"
)

// compatCommands are the names upstream's CLI answers to besides its everyday ones: the
// legacy one-word forms that scripts written for older releases still call, the commands of
// Enterprise builds and of Windows builds. Scripts and muscle memory that use them must get
// either the same behaviour or a clear sentence, never "command not found".
func compatCommands(ui cli.Ui, meta func() Meta) map[string]cli.CommandFactory {
	cmds := map[string]cli.CommandFactory{
		"exec":         alias("exec", "alloc exec", func() (cli.Command, error) { return &AllocExecCommand{Meta: meta()}, nil }),
		"alloc-status": alias("alloc-status", "alloc status", func() (cli.Command, error) { return &AllocStatusCommand{Meta: meta()}, nil }),
		"eval-status":  alias("eval-status", "eval status", declared(meta, newEvalStatus)),
		"fs":           alias("fs", "alloc fs", func() (cli.Command, error) { return &AllocFSCommand{Meta: meta()}, nil }),
		"init":         alias("init", "job init", declared(meta, newJobInit)),
		"inspect":      alias("inspect", "job inspect", declared(meta, newJobInspect)),
		"logs":         alias("logs", "alloc logs", func() (cli.Command, error) { return &AllocLogsCommand{Meta: meta()}, nil }),
		"node-drain":   alias("node-drain", "node drain", declared(meta, newNodeDrain)),
		"node-status":  alias("node-status", "node status", declared(meta, newNodeStatus)),
		"validate":     alias("validate", "job validate", func() (cli.Command, error) { return &JobValidateCommand{Meta: meta()}, nil }),
		// Listed in help like its siblings "run" and "stop".
		"start": alias("start", "job start", declared(meta, newJobStart)),

		// Upstream still runs these but warns that they are on their way out.
		"client-config":      deprecatedAlias(ui, "client-config", "node config", declared(meta, newNodeConfig)),
		"server-members":     deprecatedAlias(ui, "server-members", "server members", declared(meta, newServerMembers)),
		"server-join":        deprecatedAlias(ui, "server-join", "server join", declared(meta, newServerJoin)),
		"server-force-leave": deprecatedAlias(ui, "server-force-leave", "server force-leave", func() (cli.Command, error) { return &ServerForceLeaveCommand{Meta: meta()}, nil }),

		"node config":         declared(meta, newNodeConfig),
		"node meta":           subcommandGroup("Read and change a node's dynamic metadata", nodeMetaHelp),
		"node meta read":      declared(meta, newNodeMetaRead),
		"node meta apply":     declared(meta, newNodeMetaApply),
		"scaling":             subcommandGroup("Interact with scaling policies", scalingHelp),
		"scaling policy":      subcommandGroup("Interact with scaling policies", scalingPolicyHelp),
		"scaling policy list": declared(meta, newScalingPolicyList),
		"scaling policy info": func() (cli.Command, error) { return &ScalingPolicyInfoCommand{Meta: meta()}, nil },
		"plugin":              subcommandGroup("Inspect storage plugins", pluginHelp),
		"plugin status":       declared(meta, newPluginStatus),
		"check":               declared(meta, newAgentCheck),
		"volume":              subcommandGroup("Interact with volumes", volumeHelp),
		"volume status":       declared(meta, newVolumeStatus),
	}
	for _, f := range unavailableFeatures {
		for _, name := range f.commands {
			cmds[name] = unavailable(ui, name, f)
		}
	}
	return cmds
}

func subcommandGroup(synopsis, help string) cli.CommandFactory {
	return func() (cli.Command, error) { return &groupCommand{synopsis: synopsis, help: help}, nil }
}

// HiddenCommands are left out of "nomad -h", as upstream leaves them out: the legacy
// one-word forms (their modern names are listed) and the commands this build only answers
// with "not available here".
var HiddenCommands = hiddenCommands()

func hiddenCommands() []string {
	hidden := []string{
		"alloc-status", "check", "client-config", "eval-status", "fs", "init", "inspect", "logs",
		"node-drain", "node-status", "server-force-leave", "server-join", "server-members", "validate",
	}
	for _, f := range unavailableFeatures {
		hidden = append(hidden, f.commands...)
	}
	return hidden
}

// unavailableFeature is a part of upstream's CLI that needs an edition or platform this build
// is not.
type unavailableFeature struct {
	sentence string
	commands []string
}

var unavailableFeatures = []unavailableFeature{
	{"Resource quotas are a Nomad Enterprise feature that this build does not have.",
		[]string{"quota", "quota apply", "quota delete", "quota init", "quota inspect", "quota list", "quota status"}},
	{"Sentinel policies are a Nomad Enterprise feature that this build does not have.",
		[]string{"sentinel", "sentinel apply", "sentinel delete", "sentinel list", "sentinel read"}},
	{"Licenses are a Nomad Enterprise feature that this build does not have.",
		[]string{"license", "license get"}},
	{"Resource recommendations are a Nomad Enterprise feature that this build does not have.",
		[]string{"recommendation", "recommendation apply", "recommendation dismiss", "recommendation info", "recommendation list"}},
	{"Running Nomad as a Windows service is a Windows feature that this build does not have.",
		[]string{"windows", "windows service", "windows service install", "windows service uninstall"}},
	{"Consul and Vault integration is not built in this project, so \"nomad setup\" has nothing to configure.",
		[]string{"setup", "setup consul", "setup vault"}},
	{"Job actions are not built in this project: the agent has no actions API to run them through.",
		[]string{"action", "job action"}},
	volumeUnavailable,
}

// unavailableCommand answers a command of an unavailable feature: one sentence, exit 1.
type unavailableCommand struct {
	ui       cli.Ui
	name     string
	sentence string
}

func unavailable(ui cli.Ui, name string, f unavailableFeature) cli.CommandFactory {
	return func() (cli.Command, error) {
		return &unavailableCommand{ui: ui, name: name, sentence: f.sentence}, nil
	}
}

func (c *unavailableCommand) Help() string {
	return fmt.Sprintf("Usage: nomad %s\n\n  %s", c.name, c.sentence)
}

func (c *unavailableCommand) Synopsis() string { return "Not available in this build" }

func (c *unavailableCommand) Run([]string) int {
	c.ui.Error(c.sentence)
	return 1
}

// deprecatedAliasCommand is a legacy name upstream has deprecated: it runs the same command
// after a one-line warning on the error stream, so the command's own output stays as scripts
// read it.
type deprecatedAliasCommand struct {
	aliasCommand
	ui cli.Ui
}

func deprecatedAlias(ui cli.Ui, name, target string, factory cli.CommandFactory) cli.CommandFactory {
	return func() (cli.Command, error) {
		cmd, err := factory()
		if err != nil {
			return nil, err
		}
		return &deprecatedAliasCommand{aliasCommand: aliasCommand{Command: cmd, alias: name, target: target}, ui: ui}, nil
	}
}

func (d *deprecatedAliasCommand) Run(args []string) int {
	d.ui.Warn(deprecationWarning(d.alias, d.target))
	return d.Command.Run(args)
}

func deprecationWarning(alias, target string) string {
	return fmt.Sprintf("Warning: \"nomad %s\" is deprecated; use \"nomad %s\".", alias, target)
}
