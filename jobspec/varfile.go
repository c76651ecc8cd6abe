package jobspec

import (
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// ParseVariablesFile reads a variables file ("name = value" lines, as the parse API's
// Variables field carries) into the string form Parse takes: a string literal as its text,
// any other value as its HCL source, which Parse converts to the variable's declared type
// under its budget. Nothing is evaluated here, so the file cannot cost more than its size,
// which is bounded like a job file's.
func ParseVariablesFile(filename string, src []byte) (map[string]string, error) {
	if len(src) == 0 {
		return nil, nil
	}
	if err := checkSource("variables file", filename, src, DefaultLimits); err != nil {
		return nil, err
	}
	file, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, errorsOnly(diags)
	}
	attrs, diags := file.Body.JustAttributes()
	if diags.HasErrors() {
		return nil, errorsOnly(diags)
	}
	out := make(map[string]string, len(attrs))
	for name, attr := range attrs {
		if s, ok := literalString(attr.Expr); ok {
			out[name] = s
			continue
		}
		out[name] = string(attr.Expr.Range().SliceBytes(src))
	}
	return out, nil
}

// literalString returns the text of a quoted string or heredoc with no interpolations.
func literalString(expr hcl.Expression) (string, bool) {
	t, ok := expr.(*hclsyntax.TemplateExpr)
	if !ok {
		return "", false
	}
	var sb strings.Builder
	for _, p := range t.Parts {
		lit, ok := p.(*hclsyntax.LiteralValueExpr)
		if !ok || lit.Val.Type() != cty.String || lit.Val.IsNull() {
			return "", false
		}
		sb.WriteString(lit.Val.AsString())
	}
	return sb.String(), true
}
