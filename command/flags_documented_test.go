package command

import (
	"flag"
	"regexp"
	"testing"

	"github.com/hashicorp/cli"
)

// TestEveryFlagIsDocumented runs every command with -h, which makes it build its flag set and
// stop, and checks that each flag in that set has an entry in the command's help.
func TestEveryFlagIsDocumented(t *testing.T) {
	var sets []*flag.FlagSet
	flagSetCreated = func(fs *flag.FlagSet) { sets = append(sets, fs) }
	t.Cleanup(func() { flagSetCreated = nil })
	checked := 0
	for name, factory := range Commands(cli.NewMockUi()) {
		c, err := factory()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sets = nil
		c.Run([]string{"-h"})
		help := c.Help()
		for _, fs := range sets {
			fs.VisitAll(func(f *flag.Flag) {
				checked++
				entry := regexp.MustCompile(`(?m)^  (.*(, | \| ))?-` + regexp.QuoteMeta(f.Name) + `(=| |,|$)`)
				if !entry.MatchString(help) {
					t.Errorf("nomad %s: flag -%s is accepted but not documented in its help", name, f.Name)
				}
			})
		}
	}
	// The connection flags alone make hundreds; far fewer means commands stopped being reached.
	if checked < 1000 {
		t.Fatalf("only %d flags checked", checked)
	}
}
