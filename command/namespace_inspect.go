package command

// NamespaceInspectCommand prints a namespace as the API returns it.
type NamespaceInspectCommand struct {
	Meta
	tmpl string
}

func (c *NamespaceInspectCommand) Help() string {
	return helpText(`
Usage: nomad namespace inspect [options] <name>

  Print a namespace as JSON, as the API returns it.
`, optionsHelp("Inspect", c.options()))
}

func (c *NamespaceInspectCommand) options() []option {
	return []option{
		flagOpt(&c.tmpl, "", "-t=<template>", "Format the namespace with a Go template instead."),
	}
}

func (c *NamespaceInspectCommand) Synopsis() string { return "Inspect a namespace" }

func (c *NamespaceInspectCommand) Run(args []string) int {
	fs := c.flagSetWith("namespace inspect", c.options())
	pos, client, code, ok := c.connect(fs, args, "<name>")
	if !ok {
		return code
	}
	ns, _, err := client.Namespaces().Info(pos[0], nil)
	if err != nil {
		return c.fail("Error looking up namespace: %v", err)
	}
	return printTemplated(&c.Meta, ns, c.tmpl == "", c.tmpl, nil)
}
