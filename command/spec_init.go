package command

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
)

// specInit is the shared body of the "init" commands that write an example specification
// file ("var init", "node pool init"): -out picks HCL or JSON, -quiet prints the example
// instead of writing it, and an existing file is never overwritten.
type specInit struct {
	noun           string // "variable", "node pool"
	defaultHCLFile string
	defaultJSON    string
	hcl, json      string
}

func (s specInit) options() string {
	return fmt.Sprintf(`
Init Options:

  -out=<format>
    Format of the example: "hcl" (the default) or "json".

  -quiet
    Print the example to stdout instead of writing a file.

  The file written is %s (or %s with -out=json) unless a
  file name is given.
`, s.defaultHCLFile, s.defaultJSON)
}

func (s specInit) run(m *Meta, fset *flag.FlagSet, args []string) int {
	var out string
	var quiet bool
	fset.StringVar(&out, "out", "hcl", "")
	fset.BoolVar(&quiet, "quiet", false, "")
	pos, code, ok := m.parse(fset, args)
	if !ok {
		return code
	}
	if len(pos) > 1 {
		return m.fail("This command takes either no arguments or one: <filename>")
	}
	var body, file string
	switch out {
	case "hcl":
		body, file = s.hcl, s.defaultHCLFile
	case "json":
		body, file = s.json, s.defaultJSON
	default:
		return m.fail("Invalid -out %q: one of hcl, json", out)
	}
	if quiet {
		m.Ui.Output(body)
		return 0
	}
	if len(pos) == 1 {
		file = pos[0]
	}
	if _, err := os.Stat(file); err == nil {
		return m.fail("%s specification file %q already exists", capitalize(s.noun), file)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return m.fail("Error checking for %q: %v", file, err)
	}
	if err := os.WriteFile(file, []byte(body), 0o660); err != nil {
		return m.fail("Error writing %q: %v", file, err)
	}
	m.Ui.Output(fmt.Sprintf("Example %s specification written to %s", s.noun, file))
	return 0
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
