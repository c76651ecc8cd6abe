package command

// NamespaceInspectCommand prints a namespace as the API returns it.
type NamespaceInspectCommand struct {
	Meta
}

func (c *NamespaceInspectCommand) Help() string {
	return helpText(`
Usage: nomad namespace inspect [options] <name>

  Print a namespace as JSON, as the API returns it.
`, `
Inspect Options:

  -t=<template>
    Format the namespace with a Go template instead.
`)
}

func (c *NamespaceInspectCommand) Synopsis() string { return "Inspect a namespace" }

func (c *NamespaceInspectCommand) Run(args []string) int {
	var tmpl string
	fs := c.FlagSet("namespace inspect")
	fs.StringVar(&tmpl, "t", "", "")
	pos, client, code, ok := c.connect(fs, args, "<name>")
	if !ok {
		return code
	}
	ns, _, err := client.Namespaces().Info(pos[0], nil)
	if err != nil {
		return c.fail("Error looking up namespace: %v", err)
	}
	return printTemplated(&c.Meta, ns, tmpl == "", tmpl, nil)
}
