package command

import (
	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

// newNamespaceInspect prints a namespace as the API returns it.
func newNamespaceInspect(m Meta) cli.Command {
	var tmpl string
	return &command{Meta: m, name: "namespace inspect", synopsis: "Inspect a namespace",
		usage: `
Usage: nomad namespace inspect [options] <name>

  Print a namespace as JSON, as the API returns it.
`,
		options: []option{
			flagOpt(&tmpl, "", "-t=<template>", "Format the namespace with a Go template instead."),
		},
		args: []string{"<name>"},
		withClient: func(c *command, client *api.Client, pos []string) int {
			ns, _, err := client.Namespaces().Info(pos[0], nil)
			if err != nil {
				return c.fail("Error looking up namespace: %v", err)
			}
			return printTemplated(&c.Meta, ns, tmpl == "", tmpl, nil)
		},
	}
}
