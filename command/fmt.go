package command

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// FormatCommand rewrites HCL files (job specs, agent configuration) in the canonical layout.
type FormatCommand struct {
	Meta
	// Stdin and Stdout serve the "-" path (os.Stdin, os.Stdout when nil).
	Stdin  io.Reader
	Stdout io.Writer
}

func (c *FormatCommand) Help() string {
	return localHelp(`
Usage: nomad fmt [options] [path ...]

  Rewrite HCL files (.nomad, .hcl) in the canonical format: aligned equals
  signs, two-space indentation. Without a path, the files of the current
  directory; a directory means its files; "-" reads standard input and writes
  the result to standard output. No agent is contacted.

Format Options:

  -check
    Write nothing; exit 1 when any file is not already formatted.

  -list=true
    Print the name of each file whose formatting changed (or would change).

  -write=true
    Write the result back to each file (no effect with -check).

  -recursive
    Also format files in subdirectories.
`)
}

func (c *FormatCommand) Synopsis() string {
	return "Rewrites Nomad config and job files to canonical format"
}

func (c *FormatCommand) Run(args []string) int {
	var check, recursive bool
	list, write := true, true
	fs := c.FlagSet("fmt")
	fs.BoolVar(&check, "check", false, "")
	fs.BoolVar(&recursive, "recursive", false, "")
	fs.BoolVar(&list, "list", true, "")
	fs.BoolVar(&write, "write", true, "")
	paths, code, ok := c.parse(fs, args)
	if !ok {
		return code
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	if check {
		write = false
	}
	failed, unformatted := false, false
	for _, p := range paths {
		if p == "-" {
			in := c.Stdin
			if in == nil {
				in = os.Stdin
			}
			src, err := io.ReadAll(in)
			if err != nil {
				return c.fail("Error reading standard input: %v", err)
			}
			out, err := formatHCL("<stdin>", src)
			if err != nil {
				c.Ui.Error(err.Error())
				failed = true
				continue
			}
			if !bytes.Equal(out, src) {
				unformatted = true
			}
			if !check {
				w := c.Stdout
				if w == nil {
					w = os.Stdout
				}
				_, _ = w.Write(out)
			}
			continue
		}
		files, err := hclFiles(p, recursive)
		if err != nil {
			c.Ui.Error(fmt.Sprintf("Error reading %s: %v", p, err))
			failed = true
			continue
		}
		for _, f := range files {
			changed, err := c.formatFile(f, write)
			if err != nil {
				c.Ui.Error(err.Error())
				failed = true
				continue
			}
			if changed {
				unformatted = true
				if list {
					c.Ui.Output(f)
				}
			}
		}
	}
	if failed || (check && unformatted) {
		return 1
	}
	return 0
}

func (c *FormatCommand) formatFile(path string, write bool) (bool, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("Error reading %s: %v", path, err)
	}
	out, err := formatHCL(path, src)
	if err != nil {
		return false, err
	}
	if bytes.Equal(out, src) {
		return false, nil
	}
	if write {
		info, err := os.Stat(path)
		if err != nil {
			return false, err
		}
		if err := os.WriteFile(path, out, info.Mode().Perm()); err != nil {
			return false, fmt.Errorf("Error writing %s: %v", path, err)
		}
	}
	return true, nil
}

// formatHCL refuses a file that is not valid HCL syntax (formatting it would mangle it) and
// otherwise returns hclwrite's canonical layout.
func formatHCL(name string, src []byte) ([]byte, error) {
	if _, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos); diags.HasErrors() {
		return nil, fmt.Errorf("Error parsing %s: %s", name, diags.Error())
	}
	return hclwrite.Format(src), nil
}

// hclFiles is path itself when it is a file, else the .nomad and .hcl files in it (and below
// it with recursive), in lexical order.
func hclFiles(path string, recursive bool) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	var out []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != path && (!recursive || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(p); ext == ".nomad" || ext == ".hcl" {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}
