package command

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

// Most commands that read or delete one object differ only in their words, the API call and the
// output format. They are declared as values of readCommand and deleteCommand, so that parsing,
// argument checks, -json and error reporting behave the same in every one of them.

// errReported is returned by a fetch that has already printed why it failed (for example an
// ambiguous ID prefix), so the command only exits 1.
var errReported = errors.New("already reported")

// readCommand is the whole of a command that fetches one value and prints it, as text or, with
// -json, as JSON.
type readCommand[T any] struct {
	Meta
	name     string // the command's words: "acl policy info"
	synopsis string
	usage    string // the help text above the options
	// args names the positional arguments, e.g. "<name>"; or a single optional one in brackets,
	// "[<prefix>]".
	args     []string
	jsonWhat string // the -json help line says "Print <jsonWhat> as JSON."
	// fetch reads the value. The connection flags are parsed into this command's own Meta, not
	// the copy its constructor was given, and already shape client.
	fetch   func(client *api.Client, pos []string) (T, error)
	failure string // the error line when fetch fails: one %v for the error
	format  func(T) string
}

// Help's options section is headed by the command's last word: "Info Options:", "Get Config
// Options:" for get-config.
func (c *readCommand[T]) Help() string {
	return helpText(c.usage, optionsHelp(optionsHeading(c.name), c.jsonOption(new(bool))))
}

// jsonOption is a read command's only own flag.
func (c *readCommand[T]) jsonOption(asJSON *bool) []option {
	return []option{boolOpt(asJSON, "-json", fmt.Sprintf("Print %s as JSON.", c.jsonWhat))}
}

func optionsHeading(name string) string {
	words := strings.Fields(name)
	parts := strings.Split(words[len(words)-1], "-")
	for i, p := range parts {
		r := []rune(p)
		r[0] = unicode.ToUpper(r[0])
		parts[i] = string(r)
	}
	return strings.Join(parts, " ")
}

func (c *readCommand[T]) Synopsis() string { return c.synopsis }

func (c *readCommand[T]) Run(args []string) int {
	var asJSON bool
	fs := c.flagSetWith(c.name, c.jsonOption(&asJSON))
	pos, code, ok := c.parse(fs, args)
	if !ok {
		return code
	}
	if code, ok := c.checkArgCount(pos); !ok {
		return code
	}
	client, ok := c.client()
	if !ok {
		return 1
	}
	v, err := c.fetch(client, pos)
	if errors.Is(err, errReported) {
		return 1
	}
	if err != nil {
		return c.fail(c.failure, err)
	}
	return printResult(&c.Meta, v, asJSON, c.format)
}

func (c *readCommand[T]) checkArgCount(pos []string) (int, bool) {
	if len(c.args) != 1 || !strings.HasPrefix(c.args[0], "[") {
		if len(pos) != len(c.args) {
			return c.fail("%s", wrongArgCount(c.args)), false
		}
		return 0, true
	}
	if len(pos) > 1 {
		return c.fail("This command takes at most one argument: %s", strings.Trim(c.args[0], "[]")), false
	}
	return 0, true
}

// optionalArg is the i-th positional argument, or "" when it was left out.
func optionalArg(pos []string, i int) string {
	if i < len(pos) {
		return pos[i]
	}
	return ""
}

// deleteCommand is the whole of a command that deletes one object named by its single argument.
type deleteCommand struct {
	Meta
	name     string // the command's words: "acl policy delete"
	synopsis string
	usage    string
	arg      string // the argument's name in messages: "<name>"
	del      func(client *api.Client, id string) error
	failure  string // the error line: one %v for the error
	done     string // the success line: one %q for the argument
}

func (c *deleteCommand) Help() string     { return helpText(c.usage, "") }
func (c *deleteCommand) Synopsis() string { return c.synopsis }

func (c *deleteCommand) Run(args []string) int {
	pos, client, code, ok := c.connect(c.FlagSet(c.name), args, c.arg)
	if !ok {
		return code
	}
	if err := c.del(client, pos[0]); err != nil {
		return c.fail(c.failure, err)
	}
	c.Ui.Output(fmt.Sprintf(c.done, pos[0]))
	return 0
}

// declared turns a constructor of a declared command into the factory the CLI library wants.
func declared(meta func() Meta, build func(Meta) cli.Command) cli.CommandFactory {
	return func() (cli.Command, error) { return build(meta()), nil }
}

// queried drops the query metadata of an API read, so a fetch can be one line.
func queried[T any](v T, _ *api.QueryMeta, err error) (T, error) { return v, err }

// written drops the write metadata of an API write.
func written(_ *api.WriteMeta, err error) error { return err }
