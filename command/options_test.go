package command

import (
	"testing"
	"time"

	"github.com/hashicorp/cli"
	"github.com/shoenig/test/must"
)

// TestOptions_TableMakesFlagsAndHelp checks both products of one table: the flags parse into
// their targets (defaults, every spelling of an entry, -x <value> usages) and the help shows
// each entry once, in order.
func TestOptions_TableMakesFlagsAndHelp(t *testing.T) {
	var yes, verbose bool
	var wait time.Duration
	var lines int64
	var names stringsFlag
	opts := []option{
		boolOpt(&yes, "-yes, -y", "Do not ask."),
		flagOpt(&wait, 5*time.Second, "-wait=<duration>", "How long to wait.\n\nLonger waits\nare allowed."),
		flagOpt(&lines, -1, "-n <lines>", "How many lines."),
		valueOpt(&names, "-name=<name>", "A name. Repeatable."),
		boolOpt(&verbose, "-verbose", ""),
	}
	m := Meta{Ui: cli.NewMockUi()}
	fs := m.flagSetWith("test", opts)
	must.Eq(t, 5*time.Second, wait)
	must.Eq(t, -1, lines)
	pos, code, ok := m.parse(fs, []string{"-y", "arg", "-n", "7", "-name=a", "-name", "b"})
	must.True(t, ok, must.Sprint(code))
	must.Eq(t, []string{"arg"}, pos)
	must.True(t, yes)
	must.Eq(t, 7, lines)
	must.Eq(t, stringsFlag{"a", "b"}, names)
	must.False(t, verbose)

	must.Eq(t, `
Test Options:

  -yes, -y
    Do not ask.

  -wait=<duration>
    How long to wait.

    Longer waits
    are allowed.

  -n <lines>
    How many lines.

  -name=<name>
    A name. Repeatable.

  -verbose
`, optionsHelp("Test", opts))
}
