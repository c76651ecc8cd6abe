package command

import (
	"encoding/json"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/command/agent/agenttest"
	"github.com/shoenig/test/must"
)

// TestVar_ForceAndOutputFormats runs var put and var get against an agent: -force writes over
// a stale -check-index that alone is refused, and -out prints the stored variable as JSON,
// as HCL that parses, through a Go template, or not at all.
func TestVar_ForceAndOutputFormats(t *testing.T) {
	ta := agenttest.NewAgent(t, nil)
	addr := ta.URL()

	code, _, errOut := runCLI(t, addr, "", "var", "put", "app/db", "user=u", "pass=p1")
	must.Zero(t, code, must.Sprint(errOut))

	code, _, errOut = runCLI(t, addr, "", "var", "put", "-check-index=1", "app/db", "pass=p2")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "Check-and-set conflict")

	code, out, errOut := runCLI(t, addr, "", "var", "put", "-force", "-check-index=1", "app/db", "user=u", "pass=p2")
	must.Zero(t, code, must.Sprint(errOut))
	must.StrContains(t, out, `Successfully wrote variable "app/db"`)

	code, out, errOut = runCLI(t, addr, "", "var", "get", "-out", "json", "app/db")
	must.Zero(t, code, must.Sprint(errOut))
	var v api.Variable
	must.NoError(t, json.Unmarshal([]byte(out), &v))
	must.Eq(t, api.VariableItems{"user": "u", "pass": "p2"}, v.Items)

	code, out, errOut = runCLI(t, addr, "", "var", "get", "-out", "hcl", "app/db")
	must.Zero(t, code, must.Sprint(errOut))
	f, diags := hclsyntax.ParseConfig([]byte(out), "var.hcl", hcl.InitialPos)
	must.False(t, diags.HasErrors(), must.Sprint(diags.Error(), out))
	content, diags := f.Body.Content(&hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: "path"}, {Name: "namespace"}, {Name: "modify_index"}},
		Blocks:     []hcl.BlockHeaderSchema{{Type: "items"}},
	})
	must.False(t, diags.HasErrors(), must.Sprint(diags.Error()))
	path, _ := content.Attributes["path"].Expr.Value(nil)
	must.Eq(t, "app/db", path.AsString())
	itemAttrs, _ := content.Blocks[0].Body.JustAttributes()
	pass, _ := itemAttrs["pass"].Expr.Value(nil)
	must.Eq(t, "p2", pass.AsString())

	code, out, errOut = runCLI(t, addr, "", "var", "get", "-out", "go-template", "-template", "{{.Path}}:{{.Items.pass}}", "app/db")
	must.Zero(t, code, must.Sprint(errOut))
	must.Eq(t, "app/db:p2\n", out)

	code, out, _ = runCLI(t, addr, "", "var", "get", "-out", "none", "app/db")
	must.Zero(t, code)
	must.Eq(t, "", out)

	for _, bad := range [][]string{
		{"-out", "yaml", "app/db"},
		{"-out", "go-template", "app/db"},
		{"-template", "{{.Path}}", "app/db"},
	} {
		code, _, errOut = runCLI(t, addr, "", append([]string{"var", "get"}, bad...)...)
		must.Eq(t, 1, code, must.Sprint(bad))
		must.StrContains(t, errOut, "-")
	}
}

// TestVar_ListFollowsTheNamespaceFlag lists with -namespace after the prefix argument: the flag
// must reach the request (declared commands parse flags into their own Meta), and "*" lists
// every namespace.
func TestVar_ListFollowsTheNamespaceFlag(t *testing.T) {
	ta := agenttest.NewAgent(t, nil)
	addr := ta.URL()
	code, _, errOut := runCLI(t, addr, "", "namespace", "apply", "team")
	must.Zero(t, code, must.Sprint(errOut))
	code, _, errOut = runCLI(t, addr, "", "var", "put", "app/default-only", "k=v")
	must.Zero(t, code, must.Sprint(errOut))
	code, _, errOut = runCLI(t, addr, "", "var", "put", "-namespace=team", "app/team-only", "k=v")
	must.Zero(t, code, must.Sprint(errOut))

	code, out, errOut := runCLI(t, addr, "", "var", "list", "app/", "-namespace=team")
	must.Zero(t, code, must.Sprint(errOut))
	must.StrContains(t, out, "app/team-only")
	must.StrNotContains(t, out, "app/default-only")

	code, out, errOut = runCLI(t, addr, "", "var", "list", "-namespace=*")
	must.Zero(t, code, must.Sprint(errOut))
	must.StrContains(t, out, "app/team-only")
	must.StrContains(t, out, "app/default-only")

	code, _, errOut = runCLI(t, addr, "", "var", "list", "a", "b")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "This command takes at most one argument: <prefix>")
}
