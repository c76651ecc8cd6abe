package command

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/cli"
)

func TestZZDumpHelp(t *testing.T) {
	cmds := Commands(cli.NewMockUi())
	var names []string
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		c, _ := cmds[n]()
		b.WriteString("=== " + n + " | " + c.Synopsis() + "\n" + c.Help() + "\n")
	}
	os.WriteFile(os.Getenv("DUMP"), []byte(b.String()), 0o644)
}
