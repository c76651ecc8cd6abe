package command

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
)

// A command's own flags are declared once, as a table of options: the flag set is built from
// it and so is the "Options:" section of the help, so a flag cannot be accepted without being
// documented, nor documented without being accepted.

// option is one entry of a command's options section and the flag it documents.
type option struct {
	usage string // the entry's first line, as printed: "-type=<client|management>"
	help  string // the lines below it, without their indent
	bind  func(fs *flag.FlagSet, name string)
}

// flagKind is what a flag table can bind without a flag.Value of its own.
type flagKind interface {
	bool | string | int | int64 | uint64 | float64 | time.Duration
}

// flagOpt declares a flag whose value lands in target, def when it is not given.
func flagOpt[T flagKind](target *T, def T, usage, help string) option {
	return option{usage: usage, help: help, bind: func(fs *flag.FlagSet, name string) {
		switch p := any(target).(type) {
		case *bool:
			fs.BoolVar(p, name, any(def).(bool), "")
		case *string:
			fs.StringVar(p, name, any(def).(string), "")
		case *int:
			fs.IntVar(p, name, any(def).(int), "")
		case *int64:
			fs.Int64Var(p, name, any(def).(int64), "")
		case *uint64:
			fs.Uint64Var(p, name, any(def).(uint64), "")
		case *float64:
			fs.Float64Var(p, name, any(def).(float64), "")
		case *time.Duration:
			fs.DurationVar(p, name, any(def).(time.Duration), "")
		}
	}}
}

// boolOpt is the common switch: off unless given.
func boolOpt(target *bool, usage, help string) option {
	return flagOpt(target, false, usage, help)
}

// valueOpt declares a flag that parses itself, such as a repeatable one.
func valueOpt(v flag.Value, usage, help string) option {
	return option{usage: usage, help: help, bind: func(fs *flag.FlagSet, name string) { fs.Var(v, name, "") }}
}

// flagNames are the flags an entry documents: "-type=<a|b>" documents "type", "-n <lines>"
// documents "n", and "-yes, -y" documents both, spellings of the same flag.
func (o option) flagNames() []string {
	var names []string
	for _, spelling := range strings.Split(o.usage, ", ") {
		name, _, _ := strings.Cut(strings.TrimPrefix(spelling, "-"), "=")
		name, _, _ = strings.Cut(name, " ")
		names = append(names, name)
	}
	return names
}

// optionsHelp is the options section of a command's help, under "<heading> Options:".
func optionsHelp(heading string, opts []option) string {
	entries := make([]string, len(opts))
	for i, o := range opts {
		entries[i] = "  " + o.usage + "\n"
		if o.help == "" {
			continue
		}
		for _, line := range strings.Split(o.help, "\n") {
			if line != "" {
				line = "    " + line
			}
			entries[i] += line + "\n"
		}
	}
	return fmt.Sprintf("\n%s Options:\n\n%s", heading, strings.Join(entries, "\n"))
}

// flagSetWith is FlagSet with the command's own options added.
func (m *Meta) flagSetWith(name string, opts []option) *flag.FlagSet {
	fs := m.FlagSet(name)
	for _, o := range opts {
		for _, name := range o.flagNames() {
			o.bind(fs, name)
		}
	}
	return fs
}

// command is a whole command declared as a value: its words, help, options and what it does.
// Its flags' targets are locals of the function that declares it, so nothing but the table
// binds them.
type command struct {
	Meta
	name     string // the command's words: "service list"
	synopsis string
	usage    string // the help text above the general options
	heading  string // the options heading, when it is not the last of the command's words
	options  []option
	// Exactly one of withClient and run is set. withClient is for a command that takes exactly the
	// positional arguments named in args and then talks to the agent; run gets the flag set
	// and does the rest itself.
	args       []string
	withClient func(c *command, client *api.Client, pos []string) int
	run        func(c *command, fs *flag.FlagSet, args []string) int
}

func (c *command) Synopsis() string { return c.synopsis }

func (c *command) Help() string {
	if len(c.options) == 0 {
		return helpText(c.usage, "")
	}
	heading := c.heading
	if heading == "" {
		heading = optionsHeading(c.name)
	}
	return helpText(c.usage, optionsHelp(heading, c.options))
}

func (c *command) Run(args []string) int {
	fs := c.flagSetWith(c.name, c.options)
	if c.run != nil {
		return c.run(c, fs, args)
	}
	pos, client, code, ok := c.connect(fs, args, c.args...)
	if !ok {
		return code
	}
	return c.withClient(c, client, pos)
}

// connectionFlags are the flags Meta.FlagSet gives every command, in their help's order.
var connectionFlags = []string{"address", "token", "namespace", "region", "no-color", "ca-cert",
	"client-cert", "client-key", "tls-server-name", "tls-skip-verify"}

// localHelp is the help of a command that works on local files only. It still accepts the
// connection flags, as every command does, so that a wrapper passing -address to any command
// keeps working; its help says they are ignored. used names those the command does read.
func localHelp(text string, used ...string) string {
	var lines []string
	line := " "
	for _, name := range connectionFlags {
		if slices.Contains(used, name) {
			continue
		}
		if len(line)+len(name)+3 > 76 {
			lines = append(lines, line)
			line = " "
		}
		line += " -" + name + ","
	}
	lines = append(lines, strings.TrimSuffix(line, ","))
	return strings.TrimSpace(text) + "\n\nGeneral Options:\n\n" + strings.Join(lines, "\n") +
		"\n    Accepted like every command's connection flags, and ignored: this command\n" +
		"    does not talk to an agent.\n"
}
