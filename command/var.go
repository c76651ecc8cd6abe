package command

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/hashicorp/nomad/api"
	"github.com/zclconf/go-cty/cty"
)

const varHelp = `
Usage: nomad var <subcommand> [options] [args]

  Write, read, list and purge variables: small encrypted maps of secrets
  stored per namespace and path.
`

// newVarPut writes a variable.
func newVarPut(m Meta) cli.Command {
	var asJSON, force bool
	checkIndex := optUint{}
	return &command{Meta: m, name: "var put", synopsis: "Write a variable",
		usage: `
Usage: nomad var put [options] <path> <key>=<value> [<key>=<value>...]

  Write a variable: its items replace every item it had. A value written as
  @<file> is read from that file, and @- from stdin, so a secret need not
  appear on the command line.

  "nomad var put [options] @<spec-file> [<path>] [<key>=<value>...]" reads
  the variable from a specification ("nomad var init" writes an example):
  a path and items given after the file win over the file's.
`,
		options: []option{
			valueOpt(&checkIndex, "-check-index=<index>", "Write only if the variable's modify index is still <index> (0: only if\nit does not exist yet). A conflict is reported and nothing is written."),
			boolOpt(&force, "-force", "Write whatever the variable's modify index is, ignoring -check-index."),
			boolOpt(&asJSON, "-json", "Print the written variable as JSON."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			pos, code, ok := c.parse(fs, args)
			if !ok {
				return code
			}
			// "@<file>" first reads a specification (as "var init" writes and "var get -out hcl"
			// prints); a path and items given after it win over the file's.
			var spec *api.Variable
			if len(pos) > 0 && strings.HasPrefix(pos[0], "@") {
				raw, err := readInput(pos[0][1:], nil)
				if err != nil {
					return c.fail("Error reading the specification %s: %v", pos[0][1:], err)
				}
				if spec, err = parseVariableSpec(raw); err != nil {
					return c.fail("Error parsing the specification %s: %v", pos[0][1:], err)
				}
				pos = pos[1:]
				if len(pos) == 0 || strings.Contains(pos[0], "=") {
					pos = append([]string{spec.Path}, pos...)
				}
				if pos[0] == "" {
					return c.fail("The specification names no path: give one after it")
				}
			}
			if len(pos) < 2 && (spec == nil || len(spec.Items) == 0) {
				return c.fail("This command takes a path and at least one <key>=<value> item")
			}
			items := map[string]string{}
			if spec != nil {
				for k, v := range spec.Items {
					items[k] = v
				}
			}
			for _, kv := range pos[1:] {
				k, v, found := strings.Cut(kv, "=")
				if !found || k == "" {
					return c.fail("Item %q is not <key>=<value>", kv)
				}
				if strings.HasPrefix(v, "@") {
					raw, err := readInput(v[1:], nil)
					if err != nil {
						return c.fail("Error reading the value of %q: %v", k, err)
					}
					v = string(raw)
				}
				items[k] = v
			}
			client, ok := c.client()
			if !ok {
				return 1
			}
			v := &api.Variable{Path: pos[0], Namespace: c.Namespace(), Items: items}
			if spec != nil && spec.Namespace != "" && c.Namespace() == "" {
				v.Namespace = spec.Namespace
				client.SetNamespace(spec.Namespace)
			}
			var out *api.Variable
			var err error
			if checkIndex.set && !force {
				v.ModifyIndex = checkIndex.v
				out, _, err = client.Variables().CheckedUpdate(v, nil)
			} else {
				out, _, err = client.Variables().Update(v, nil)
			}
			var conflict api.ErrCASConflict
			if errors.As(err, &conflict) {
				return c.fail("Check-and-set conflict: the variable's modify index is %d, not %d", conflict.Conflict.ModifyIndex, checkIndex.v)
			}
			if err != nil {
				return c.fail("Error writing variable: %v", err)
			}
			if asJSON {
				return c.printJSON(out)
			}
			c.Ui.Output(fmt.Sprintf("Successfully wrote variable %q at modify index %d", out.Path, out.ModifyIndex))
			return 0
		},
	}
}

// newVarGet reads a variable.
func newVarGet(m Meta) cli.Command {
	var asJSON bool
	var item, tmpl, out string
	return &command{Meta: m, name: "var get", synopsis: "Read a variable",
		usage: `
Usage: nomad var get [options] <path>

  Show a variable and its items.
`,
		options: []option{
			flagOpt(&item, "", "-item=<key>", "Print only the value of one item."),
			boolOpt(&asJSON, "-json", "Print the variable as JSON (the same as -out=json)."),
			flagOpt(&out, "", "-out=<format>", "How to print the variable: \"table\" (the default), \"json\", \"hcl\" (the\nspec \"var put\" reads), \"go-template\" (with -template) or \"none\"."),
			flagOpt(&tmpl, "", "-template=<template>", "Go template applied to the variable with -out=go-template."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			pos, code, ok := c.parseArgs(fs, args, "<path>")
			if !ok {
				return code
			}
			if asJSON {
				if out != "" && out != "json" {
					return c.fail("Only one of -json or -out may be given")
				}
				out = "json"
			}
			switch out {
			case "", "table", "json", "hcl", "none":
				if tmpl != "" {
					return c.fail("-template needs -out=go-template")
				}
			case "go-template":
				if tmpl == "" {
					return c.fail("-out=go-template needs -template")
				}
			default:
				return c.fail("Invalid -out %q: one of table, json, hcl, go-template, none", out)
			}
			client, ok := c.client()
			if !ok {
				return 1
			}
			v, _, err := client.Variables().Read(pos[0], &api.QueryOptions{Namespace: c.Namespace()})
			if errors.Is(err, api.ErrVariablePathNotFound) {
				return c.fail("Variable %q not found", pos[0])
			}
			if err != nil {
				return c.fail("Error reading variable: %v", err)
			}
			if item != "" {
				val, ok := v.Items[item]
				if !ok {
					return c.fail("Variable %q has no item %q", pos[0], item)
				}
				c.Ui.Output(val)
				return 0
			}
			switch out {
			case "json":
				return c.printJSON(v)
			case "hcl":
				c.Ui.Output(formatVariableHCL(v))
				return 0
			case "go-template":
				return printTemplated(&c.Meta, v, false, tmpl, formatVariable)
			case "none":
				return 0
			}
			return printResult(&c.Meta, v, false, formatVariable)
		},
	}
}

func formatVariable(v *api.Variable) string {
	rows := []string{
		"Namespace|" + v.Namespace,
		"Path|" + v.Path,
		"Create Time|" + formatUnixNano(v.CreateTime),
		"Modify Time|" + formatUnixNano(v.ModifyTime),
		fmt.Sprintf("Check Index|%d", v.ModifyIndex),
	}
	if v.Lock != nil {
		rows = append(rows, "Lock|"+v.Lock.ID+" (TTL "+v.Lock.TTL+")")
	}
	keys := slices.Sorted(maps.Keys(v.Items))
	items := []string{}
	for _, k := range keys {
		items = append(items, k+"|"+v.Items[k])
	}
	return formatKV(rows) + "\n\nItems\n" + formatKV(items)
}

func newVarList(m Meta) cli.Command {
	return &readCommand[[]*api.VariableMetadata]{Meta: m, name: "var list", args: []string{"[<prefix>]"},
		synopsis: "List variables", jsonWhat: "the list",
		usage: `
Usage: nomad var list [options] [<prefix>]

  List the variables the token may list, optionally only those whose path
  starts with <prefix>. Items are never listed. -namespace=* lists every
  namespace.
`,
		fetch: func(client *api.Client, pos []string) ([]*api.VariableMetadata, error) {
			return queried(client.Variables().PrefixList(optionalArg(pos, 0), nil))
		},
		failure: "Error listing variables: %v", format: formatVariableList}
}

func formatVariableList(list []*api.VariableMetadata) string {
	return formatRows(list, "No variables found", "Namespace|Path|Last Updated", func(v *api.VariableMetadata) string {
		return v.Namespace + "|" + v.Path + "|" + formatUnixNano(v.ModifyTime)
	})
}

// newVarPurge deletes a variable.
func newVarPurge(m Meta) cli.Command {
	checkIndex := optUint{}
	return &command{Meta: m, name: "var purge", synopsis: "Delete a variable",
		usage: `
Usage: nomad var purge [options] <path>

  Delete a variable permanently.
`,
		options: []option{
			valueOpt(&checkIndex, "-check-index=<index>", "Delete only if the variable's modify index is still <index>."),
		},
		args: []string{"<path>"},
		withClient: func(c *command, client *api.Client, pos []string) int {
			var err error
			wo := &api.WriteOptions{Namespace: c.Namespace()}
			if checkIndex.set {
				_, err = client.Variables().CheckedDelete(pos[0], checkIndex.v, wo)
			} else {
				_, err = client.Variables().Delete(pos[0], wo)
			}
			var conflict api.ErrCASConflict
			if errors.As(err, &conflict) {
				return c.fail("Check-and-set conflict: the variable's modify index is %d, not %d", conflict.Conflict.ModifyIndex, checkIndex.v)
			}
			if err != nil {
				return c.fail("Error purging variable: %v", err)
			}
			c.Ui.Output(fmt.Sprintf("Successfully purged variable %q!", pos[0]))
			return 0
		},
	}
}

// formatVariableHCL renders the variable as the HCL specification upstream's "var get -out
// hcl" prints and "var put" reads back: path, namespace, the modify index a later write can
// check against, and the items block.
func formatVariableHCL(v *api.Variable) string {
	f := hclwrite.NewEmptyFile()
	body := f.Body()
	body.SetAttributeValue("path", cty.StringVal(v.Path))
	body.SetAttributeValue("namespace", cty.StringVal(v.Namespace))
	body.SetAttributeValue("modify_index", cty.NumberUIntVal(v.ModifyIndex))
	body.AppendNewline()
	items := body.AppendNewBlock("items", nil).Body()
	keys := slices.Sorted(maps.Keys(v.Items))
	for _, k := range keys {
		items.SetAttributeValue(k, cty.StringVal(v.Items[k]))
	}
	return strings.TrimSpace(string(hclwrite.Format(f.Bytes())))
}
