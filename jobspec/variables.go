package jobspec

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

var variableSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "type"},
		{Name: "default"},
		{Name: "description"},
	},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "validation"},
	},
}

var validationSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "condition", Required: true},
		{Name: "error_message", Required: true},
	},
}

// variable is one declared `variable "name" {}` block.
type variable struct {
	name        string
	block       *hcl.Block
	typ         cty.Type
	defaults    *typeexpr.Defaults
	def         *hcl.Attribute
	validations []*hcl.BodyContent
}

// evalContext builds the context job bodies are evaluated in: the var and
// local objects plus the function table. Roots other than var and local
// never reach evaluation inside strings; keepRuntimeInterpolations has
// already turned them into literal text.
func evalContext(filename string, varBlocks, localBlocks []*hcl.Block, given map[string]string, b *budget) (*hcl.EvalContext, hcl.Diagnostics) {
	funcs := guardFunctions(functions(b.files), b)
	constCtx := &hcl.EvalContext{Functions: funcs}

	declared, diags := declareVariables(varBlocks)
	if diags.HasErrors() {
		return nil, diags
	}

	// Report undeclared inputs in a stable order; a typo in a -var flag
	// must not silently fall back to a default.
	var undeclared []string
	for name := range given {
		if _, ok := declared[name]; !ok {
			undeclared = append(undeclared, name)
		}
	}
	sort.Strings(undeclared)
	for _, name := range undeclared {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Undeclared variable",
			Detail: fmt.Sprintf("A value was given for variable %q, but it is not declared; "+
				"add a variable %q {} block to the job file.", name, name),
			Subject: &hcl.Range{Filename: filename, Start: hcl.InitialPos, End: hcl.InitialPos},
		})
	}

	values := make(map[string]cty.Value, len(declared))
	for _, v := range sortedVariables(declared) {
		val, vdiags := v.value(given, constCtx, b)
		diags = append(diags, vdiags...)
		if !vdiags.HasErrors() {
			values[v.name] = val
		}
	}
	if diags.HasErrors() {
		return nil, diags
	}

	ctx := &hcl.EvalContext{
		Functions: funcs,
		Variables: map[string]cty.Value{
			"var":   cty.ObjectVal(values),
			"local": cty.EmptyObjectVal,
		},
	}
	for _, v := range sortedVariables(declared) {
		diags = append(diags, v.validate(ctx)...)
	}
	if diags.HasErrors() {
		return nil, diags
	}

	locals, diags := evalLocals(localBlocks, ctx)
	if diags.HasErrors() {
		return nil, diags
	}
	ctx.Variables["local"] = cty.ObjectVal(locals)
	return ctx, nil
}

func declareVariables(blocks []*hcl.Block) (map[string]*variable, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	declared := make(map[string]*variable, len(blocks))
	for _, b := range blocks {
		name := b.Labels[0]
		if prev, ok := declared[name]; ok {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Duplicate variable declaration",
				Detail:   fmt.Sprintf("Variable %q was already declared at %s.", name, prev.block.DefRange),
				Subject:  b.DefRange.Ptr(),
			})
			continue
		}
		if !hclsyntax.ValidIdentifier(name) {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid variable name",
				Detail:   fmt.Sprintf("%q is not a valid identifier.", name),
				Subject:  b.LabelRanges[0].Ptr(),
			})
			continue
		}
		content, cdiags := b.Body.Content(variableSchema)
		diags = append(diags, cdiags...)
		if cdiags.HasErrors() {
			continue
		}
		v := &variable{name: name, block: b, typ: cty.DynamicPseudoType, def: content.Attributes["default"]}
		if attr, ok := content.Attributes["type"]; ok {
			typ, defaults, tdiags := typeexpr.TypeConstraintWithDefaults(attr.Expr)
			diags = append(diags, tdiags...)
			v.typ, v.defaults = typ, defaults
		}
		for _, vb := range content.Blocks {
			vc, vdiags := vb.Body.Content(validationSchema)
			diags = append(diags, vdiags...)
			if !vdiags.HasErrors() {
				v.validations = append(v.validations, vc)
			}
		}
		declared[name] = v
	}
	return declared, diags
}

func sortedVariables(declared map[string]*variable) []*variable {
	out := make([]*variable, 0, len(declared))
	for _, v := range declared {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// value resolves the variable: a given string wins over the default.
func (v *variable) value(given map[string]string, constCtx *hcl.EvalContext, b *budget) (cty.Value, hcl.Diagnostics) {
	var val cty.Value
	subject := v.block.DefRange.Ptr()
	if raw, ok := given[v.name]; ok {
		parsed, diags := v.fromString(raw, b)
		if diags.HasErrors() {
			return cty.NilVal, diags
		}
		val = parsed
	} else if v.def != nil {
		def, diags := v.def.Expr.Value(constCtx)
		if diags.HasErrors() {
			return cty.NilVal, diags
		}
		val = def
		subject = v.def.Expr.Range().Ptr()
	} else {
		return cty.NilVal, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Missing variable value",
			Detail:   fmt.Sprintf("Variable %q has no default, so a value must be given for it.", v.name),
			Subject:  v.block.DefRange.Ptr(),
		}}
	}

	if v.defaults != nil {
		val = v.defaults.Apply(val)
	}
	converted, err := convert.Convert(val, v.typ)
	if err != nil {
		return cty.NilVal, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Invalid value for variable",
			Detail:   fmt.Sprintf("Variable %q must be %s: %s.", v.name, typeexpr.TypeString(v.typ), err),
			Subject:  subject,
		}}
	}
	return converted, nil
}

// fromString interprets a value given on the command line. Strings and
// untyped variables take it verbatim; primitives are converted; collection
// and structural types are parsed as an HCL expression such as ["a", "b"].
func (v *variable) fromString(raw string, b *budget) (cty.Value, hcl.Diagnostics) {
	if v.typ == cty.DynamicPseudoType || v.typ.IsPrimitiveType() {
		return cty.StringVal(raw), nil
	}
	filename := fmt.Sprintf("<value for var.%s>", v.name)
	if err := checkExprSource("value of var."+v.name, filename, []byte(raw), b.lim); err != nil {
		b.err = err.(*LimitError)
		return cty.NilVal, b.fail(b.err.Subject, "")
	}
	parsed, diags := hclsyntax.ParseExpression([]byte(raw), filename, hcl.InitialPos)
	if diags.HasErrors() {
		return cty.NilVal, diags
	}
	expr, diags := guardExpr(parsed, b)
	if diags.HasErrors() {
		return cty.NilVal, diags
	}
	val, diags := expr.Value(nil)
	if diags.HasErrors() {
		return cty.NilVal, diags
	}
	return val, nil
}

func (v *variable) validate(ctx *hcl.EvalContext) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, rule := range v.validations {
		cond := rule.Attributes["condition"]
		ok, cdiags := cond.Expr.Value(ctx)
		diags = append(diags, cdiags...)
		if cdiags.HasErrors() {
			continue
		}
		ok, err := convert.Convert(ok, cty.Bool)
		if err != nil || ok.IsNull() || !ok.IsKnown() {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid validation condition",
				Detail:   "The condition must evaluate to true or false.",
				Subject:  cond.Expr.Range().Ptr(),
			})
			continue
		}
		if ok.True() {
			continue
		}
		msgAttr := rule.Attributes["error_message"]
		msg, mdiags := msgAttr.Expr.Value(ctx)
		diags = append(diags, mdiags...)
		detail := fmt.Sprintf("Variable %q failed validation.", v.name)
		if !mdiags.HasErrors() && msg.Type() == cty.String && msg.IsKnown() && !msg.IsNull() {
			detail = msg.AsString()
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid value for variable",
			Detail:   detail,
			Subject:  cond.Expr.Range().Ptr(),
		})
	}
	return diags
}

// evalLocals evaluates every locals attribute, in dependency order, so a
// local may refer to another regardless of where it is written.
func evalLocals(blocks []*hcl.Block, ctx *hcl.EvalContext) (map[string]cty.Value, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	pending := map[string]*hcl.Attribute{}
	for _, b := range blocks {
		attrs, adiags := b.Body.JustAttributes()
		diags = append(diags, adiags...)
		for name, attr := range attrs {
			if prev, ok := pending[name]; ok {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Duplicate local value",
					Detail:   fmt.Sprintf("Local %q was already defined at %s.", name, prev.NameRange),
					Subject:  attr.NameRange.Ptr(),
				})
				continue
			}
			pending[name] = attr
		}
	}
	if diags.HasErrors() {
		return nil, diags
	}

	done := map[string]cty.Value{}
	for len(pending) > 0 {
		progressed := false
		for _, attr := range sortedAttributes(pending) {
			if !localReady(attr, pending) {
				continue
			}
			local := ctx.NewChild()
			local.Variables = map[string]cty.Value{"local": cty.ObjectVal(done)}
			val, vdiags := attr.Expr.Value(local)
			diags = append(diags, vdiags...)
			if vdiags.HasErrors() {
				return nil, diags
			}
			done[attr.Name] = val
			delete(pending, attr.Name)
			progressed = true
		}
		if !progressed {
			var names []string
			for _, attr := range sortedAttributes(pending) {
				names = append(names, "local."+attr.Name)
			}
			first := sortedAttributes(pending)[0]
			return nil, append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Cycle in local values",
				Detail:   fmt.Sprintf("These locals refer to each other: %s.", strings.Join(names, ", ")),
				Subject:  first.NameRange.Ptr(),
			})
		}
	}
	return done, diags
}

// localReady reports whether every local.X attr refers to is already known.
// References to locals that do not exist count as ready so that evaluation
// reports them with HCL's own message.
func localReady(attr *hcl.Attribute, pending map[string]*hcl.Attribute) bool {
	for _, tr := range attr.Expr.Variables() {
		if tr.RootName() != "local" || len(tr) < 2 {
			continue
		}
		step, ok := tr[1].(hcl.TraverseAttr)
		if !ok {
			continue
		}
		if _, waiting := pending[step.Name]; waiting {
			return false
		}
	}
	return true
}

func sortedAttributes(attrs map[string]*hcl.Attribute) []*hcl.Attribute {
	out := make([]*hcl.Attribute, 0, len(attrs))
	for _, a := range attrs {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Range.Start.Byte < out[j].Range.Start.Byte })
	return out
}
