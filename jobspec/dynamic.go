package jobspec

import (
	"fmt"
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

var dynamicSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "for_each", Required: true},
		{Name: "iterator"},
		{Name: "labels"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "content"}},
}

// expandDynamic returns blocks in source order with every
// `dynamic "type" { for_each = ... content { ... } }` replaced by one block
// per element. Each generated block carries a child context binding the
// iterator (the label, or the iterator argument) to {key, value}; nested
// dynamic blocks expand when their parent's content is decoded.
func expandDynamic(in hcl.Blocks, ctx *hcl.EvalContext) ([]*block, hcl.Diagnostics) {
	var out []*block
	var diags hcl.Diagnostics
	for _, b := range in {
		if b.Type != "dynamic" {
			out = append(out, &block{Block: b, ctx: ctx})
			continue
		}
		blocks, bdiags := expandOne(b, ctx)
		diags = append(diags, bdiags...)
		out = append(out, blocks...)
	}
	return out, diags
}

func expandOne(b *hcl.Block, ctx *hcl.EvalContext) ([]*block, hcl.Diagnostics) {
	content, diags := b.Body.Content(dynamicSchema)
	if diags.HasErrors() {
		return nil, diags
	}
	if len(content.Blocks) != 1 {
		return nil, append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid dynamic block",
			Detail:   "A dynamic block needs exactly one content block.",
			Subject:  b.DefRange.Ptr(),
		})
	}
	body := content.Blocks[0].Body

	iterator := b.Labels[0]
	if attr, ok := content.Attributes["iterator"]; ok {
		iterator = hcl.ExprAsKeyword(attr.Expr)
		if iterator == "" {
			return nil, append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid dynamic iterator",
				Detail:   "The iterator argument must be a bare name.",
				Subject:  attr.Expr.Range().Ptr(),
			})
		}
	}

	forEachAttr := content.Attributes["for_each"]
	forEach, fdiags := forEachAttr.Expr.Value(ctx)
	diags = append(diags, fdiags...)
	if fdiags.HasErrors() {
		return nil, diags
	}
	if forEach.IsNull() || !forEach.IsWhollyKnown() || !forEach.CanIterateElements() {
		return nil, append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid for_each",
			Detail:   "for_each must be a known list, set, map or object.",
			Subject:  forEachAttr.Expr.Range().Ptr(),
		})
	}

	var out []*block
	for it := forEach.ElementIterator(); it.Next(); {
		k, v := it.Element()
		child := ctx.NewChild()
		child.Variables = map[string]cty.Value{
			iterator: cty.ObjectVal(map[string]cty.Value{"key": k, "value": v}),
		}
		gen := &hcl.Block{
			Type:      b.Labels[0],
			Body:      body,
			DefRange:  b.DefRange,
			TypeRange: b.LabelRanges[0],
		}
		if attr, ok := content.Attributes["labels"]; ok {
			labels, ldiags := dynamicLabels(attr, child)
			diags = append(diags, ldiags...)
			if ldiags.HasErrors() {
				return nil, diags
			}
			gen.Labels = labels
			for range labels {
				gen.LabelRanges = append(gen.LabelRanges, attr.Expr.Range())
			}
		}
		out = append(out, &block{Block: gen, ctx: child})
	}
	return out, diags
}

func dynamicLabels(attr *hcl.Attribute, ctx *hcl.EvalContext) ([]string, hcl.Diagnostics) {
	val, diags := attr.Expr.Value(ctx)
	if diags.HasErrors() {
		return nil, diags
	}
	list, err := convert.Convert(val, cty.List(cty.String))
	if err == nil && (list.IsNull() || !list.IsWhollyKnown()) {
		err = fmt.Errorf("labels must be known")
	}
	if err != nil {
		return nil, append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid dynamic labels",
			Detail:   fmt.Sprintf("labels must be a list of strings: %s.", err),
			Subject:  attr.Expr.Range().Ptr(),
		})
	}
	var labels []string
	for it := list.ElementIterator(); it.Next(); {
		_, v := it.Element()
		if v.IsNull() {
			return nil, append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid dynamic labels",
				Detail:   "labels must not contain null.",
				Subject:  attr.Expr.Range().Ptr(),
			})
		}
		labels = append(labels, v.AsString())
	}
	return labels, diags
}

// freeformBody converts a body with no schema (task config, scaling policy)
// into a map. Arguments keep their value; each nested block becomes one
// element of a list under its type, so `port_map { http = 80 }` is
// {"port_map": [{"http": 80}]}, the shape task drivers expect. Block labels
// nest: `a "x" { ... }` is {"a": [{"x": [{...}]}]}.
func freeformBody(body hcl.Body, ctx *hcl.EvalContext) (map[string]any, hcl.Diagnostics) {
	out := map[string]any{}
	sb, ok := body.(*hclsyntax.Body)
	if !ok {
		// Only native syntax is parsed, so this is defensive: without
		// hclsyntax there is no way to enumerate unknown blocks.
		attrs, diags := body.JustAttributes()
		for _, attr := range sortedAttributes(attrs) {
			val, vdiags := attr.Expr.Value(ctx)
			diags = append(diags, vdiags...)
			out[attr.Name] = CtyToGo(val)
		}
		return out, diags
	}

	var diags hcl.Diagnostics
	names := make([]string, 0, len(sb.Attributes))
	for name := range sb.Attributes {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		val, vdiags := sb.Attributes[name].Expr.Value(ctx)
		diags = append(diags, vdiags...)
		if !vdiags.HasErrors() {
			out[name] = CtyToGo(val)
		}
	}

	raw := make(hcl.Blocks, 0, len(sb.Blocks))
	for _, b := range sb.Blocks {
		raw = append(raw, b.AsHCLBlock())
	}
	blocks, bdiags := expandDynamic(raw, ctx)
	diags = append(diags, bdiags...)
	for _, b := range blocks {
		if attr, clash := sb.Attributes[b.Type]; clash {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  fmt.Sprintf("Duplicate %s definition", b.Type),
				Detail:   fmt.Sprintf("%q is set both as an argument (at %s) and as a block.", b.Type, attr.NameRange),
				Subject:  b.TypeRange.Ptr(),
			})
			continue
		}
		inner, idiags := freeformBody(b.Body, b.ctx)
		diags = append(diags, idiags...)
		for i := len(b.Labels) - 1; i >= 0; i-- {
			inner = map[string]any{b.Labels[i]: []map[string]any{inner}}
		}
		list, _ := out[b.Type].([]map[string]any)
		out[b.Type] = append(list, inner)
	}
	return out, diags
}
