package command

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/nomad/api"
)

// VarInitCommand writes an example variable specification.
type VarInitCommand struct {
	Meta
}

var varSpec = specInit{
	noun:           "variable",
	defaultHCLFile: "spec.nv.hcl",
	defaultJSON:    "spec.nv.json",
	hcl: `# A variable specification, as "nomad var put @<file>" reads it and
# "nomad var get -out hcl" prints it.
#
# path is where the variable lives; a path given on the command line wins.
# Jobs read the variables under nomad/jobs/<job>[/<group>[/<task>]] without a
# policy of their own.
path = "nomad/jobs/example"

# namespace defaults to the command's namespace.
# namespace = "default"

# items are the variable's keys and their string values. They replace every
# item the variable had.
items {
  username = "app"
  password = "change-me"
}
`,
	json: `{
  "Path": "nomad/jobs/example",
  "Items": {
    "username": "app",
    "password": "change-me"
  }
}
`,
}

func (c *VarInitCommand) Help() string {
	return helpText(`
Usage: nomad var init [options] [<filename>]

  Write an example variable specification to a file, to edit and then write
  with "nomad var put @<filename>".
`, varSpec.options())
}

func (c *VarInitCommand) Synopsis() string { return "Create an example variable specification file" }

func (c *VarInitCommand) Run(args []string) int {
	return varSpec.run(&c.Meta, c.FlagSet("var init"), args)
}

// variableSpecHCL is the HCL form of a variable specification.
type variableSpecHCL struct {
	Path        string `hcl:"path,optional"`
	Namespace   string `hcl:"namespace,optional"`
	ModifyIndex uint64 `hcl:"modify_index,optional"`
	Items       *struct {
		Values hcl.Attributes `hcl:",remain"`
	} `hcl:"items,block"`
}

// parseVariableSpec reads a variable specification: JSON when it starts with '{', HCL
// otherwise. Every item value must be a string.
func parseVariableSpec(src []byte) (*api.Variable, error) {
	if strings.HasPrefix(strings.TrimSpace(string(src)), "{") {
		var v api.Variable
		if err := json.Unmarshal(src, &v); err != nil {
			return nil, err
		}
		return &v, nil
	}
	file, diags := hclsyntax.ParseConfig(src, "spec.nv.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diags
	}
	var spec variableSpecHCL
	if diags := gohcl.DecodeBody(file.Body, nil, &spec); diags.HasErrors() {
		return nil, diags
	}
	v := &api.Variable{Path: spec.Path, Namespace: spec.Namespace, ModifyIndex: spec.ModifyIndex, Items: map[string]string{}}
	if spec.Items != nil {
		for k, attr := range spec.Items.Values {
			var s string
			if diags := gohcl.DecodeExpression(attr.Expr, nil, &s); diags.HasErrors() {
				return nil, fmt.Errorf("item %q: %s", k, diags.Error())
			}
			v.Items[k] = s
		}
	}
	return v, nil
}
