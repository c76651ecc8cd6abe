package jobspec

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// HCL evaluates a parsed tree with no hook for cost, so guardExpressions rewrites the tree
// before anything is evaluated: wrappers around the points where evaluation can multiply
// work charge the budget and stop at its first limit.
//
//   - every attribute's expression: its result is walked (collection sizes, string sizes,
//     depth, one step per element), and the deadline is checked before it runs;
//   - each for expression's collection (size) and its key, value and condition expressions
//     (one step per iteration, so nested loops are charged their product);
//   - each template's parts (the length of the string being built, checked part by part
//     before the parts are joined).
//
// Functions are guarded in the function table (guardFunctions). Once a limit is reached,
// every guard returns an unknown value at once so the evaluation in progress unwinds
// without doing the work it asked for.
//
// Each wrapper embeds a ParenthesesExpr around the expression it guards: that supplies
// hclsyntax's unexported walk method, and walks reach the guarded expression itself, so
// Variables() still finds its traversals. Each also unwraps to it, so that
// hcl.ExprAsKeyword, hcl.ExprList and typeexpr still see the original syntax.

func guardExpressions(node hclsyntax.Node, b *budget) hcl.Diagnostics {
	return hclsyntax.Walk(node, &guardWalker{b: b, forEach: map[*hclsyntax.Attribute]bool{}})
}

type guardWalker struct {
	b *budget
	// forEach are the for_each arguments of dynamic blocks seen so far.
	forEach map[*hclsyntax.Attribute]bool
}

// Costs in steps, beyond one step per element of every value checked: what hcl allocates
// to evaluate one for-expression iteration (a child scope and its variables) and to decode
// one block a dynamic block generates.
const (
	iterationCost = 4
	blockCost     = 32
)

func (w *guardWalker) Enter(node hclsyntax.Node) hcl.Diagnostics {
	switch n := node.(type) {
	case *hclsyntax.Block:
		if attr, ok := n.Body.Attributes["for_each"]; ok && n.Type == "dynamic" {
			w.forEach[attr] = true
		}
	case *hclsyntax.Attribute:
		g := &attrGuard{ParenthesesExpr: paren(n.Expr), b: w.b}
		if w.forEach[n] {
			g.perElement = blockCost
		}
		n.Expr = g
	case *hclsyntax.ForExpr:
		n.CollExpr = &collGuard{ParenthesesExpr: paren(n.CollExpr), b: w.b}
		n.ValExpr = &iterGuard{ParenthesesExpr: paren(n.ValExpr), b: w.b}
		if n.KeyExpr != nil {
			n.KeyExpr = &iterGuard{ParenthesesExpr: paren(n.KeyExpr), b: w.b}
		}
		if n.CondExpr != nil {
			n.CondExpr = &iterGuard{ParenthesesExpr: paren(n.CondExpr), b: w.b}
		}
	case *hclsyntax.TemplateExpr:
		t := &templateState{b: w.b}
		parts := make([]hclsyntax.Expression, 0, len(n.Parts)+1)
		parts = append(parts, &templateStart{
			LiteralValueExpr: &hclsyntax.LiteralValueExpr{Val: cty.StringVal(""), SrcRange: n.SrcRange},
			t:                t,
		})
		for _, p := range n.Parts {
			parts = append(parts, &partGuard{ParenthesesExpr: paren(p), t: t})
		}
		n.Parts = parts
	}
	return nil
}

func paren(e hclsyntax.Expression) *hclsyntax.ParenthesesExpr {
	return &hclsyntax.ParenthesesExpr{Expression: e, SrcRange: e.Range()}
}

func (w *guardWalker) Exit(hclsyntax.Node) hcl.Diagnostics { return nil }

// guardExpr guards a standalone expression (a variable value given as HCL source) as if it
// were an attribute's.
func guardExpr(expr hclsyntax.Expression, b *budget) (hclsyntax.Expression, hcl.Diagnostics) {
	g := &attrGuard{ParenthesesExpr: paren(expr), b: b}
	return g, guardExpressions(g, b)
}

type attrGuard struct {
	*hclsyntax.ParenthesesExpr
	b *budget
	// perElement is charged for each element of the result: a dynamic block's for_each
	// decodes one block per element.
	perElement int64
}

func (g *attrGuard) UnwrapExpression() hcl.Expression { return g.Expression }

func (g *attrGuard) Value(ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	rng := g.Range().Ptr()
	if g.b.exhausted() {
		return cty.DynamicVal, nil
	}
	if diags := g.b.checkDeadline(rng); diags != nil {
		return cty.DynamicVal, diags
	}
	v, diags := g.Expression.Value(ctx)
	if g.b.exhausted() {
		return cty.DynamicVal, append(diags, g.b.fail(rng, "")...)
	}
	if bdiags := g.b.checkValue(v, rng); bdiags != nil {
		return cty.DynamicVal, append(diags, bdiags...)
	}
	if u, _ := v.Unmark(); g.perElement > 0 && u.IsKnown() && !u.IsNull() && u.CanIterateElements() {
		if bdiags := g.b.charge(g.perElement*int64(u.LengthInt()), rng); bdiags != nil {
			return cty.DynamicVal, append(diags, bdiags...)
		}
	}
	return v, diags
}

type collGuard struct {
	*hclsyntax.ParenthesesExpr
	b *budget
}

func (g *collGuard) UnwrapExpression() hcl.Expression { return g.Expression }

func (g *collGuard) Value(ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	if g.b.exhausted() {
		return cty.DynamicVal, nil
	}
	v, diags := g.Expression.Value(ctx)
	if g.b.exhausted() {
		return cty.DynamicVal, diags
	}
	if u, _ := v.Unmark(); u.IsKnown() && !u.IsNull() && u.CanIterateElements() {
		if bdiags := g.b.checkCollection(u.LengthInt(), g.Range().Ptr()); bdiags != nil {
			return cty.DynamicVal, append(diags, bdiags...)
		}
	}
	return v, diags
}

// iterGuard charges one step each time a for expression evaluates its body, and checks
// what the body produced, so a loop inside a loop pays for every inner element.
type iterGuard struct {
	*hclsyntax.ParenthesesExpr
	b *budget
}

func (g *iterGuard) UnwrapExpression() hcl.Expression { return g.Expression }

func (g *iterGuard) Value(ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	if g.b.exhausted() {
		return cty.DynamicVal, nil
	}
	rng := g.Range().Ptr()
	if diags := g.b.charge(iterationCost, rng); diags != nil {
		return cty.DynamicVal, diags
	}
	v, diags := g.Expression.Value(ctx)
	if g.b.exhausted() {
		return cty.DynamicVal, diags
	}
	if bdiags := g.b.checkValue(v, rng); bdiags != nil {
		return cty.DynamicVal, append(diags, bdiags...)
	}
	return v, diags
}

// templateState is the length of the string one template node is building. A node is never
// evaluated inside its own evaluation (the tree has no cycles and locals are values), so
// one counter per node, reset by templateStart, is enough.
type templateState struct {
	b   *budget
	len int
}

// templateStart is an empty first part that resets the count when evaluation of its
// template begins.
type templateStart struct {
	*hclsyntax.LiteralValueExpr
	t *templateState
}

func (s *templateStart) Value(*hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	s.t.len = 0
	return cty.StringVal(""), nil
}

type partGuard struct {
	*hclsyntax.ParenthesesExpr
	t *templateState
}

func (g *partGuard) UnwrapExpression() hcl.Expression { return g.Expression }

func (g *partGuard) Value(ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	b := g.t.b
	if b.exhausted() {
		return cty.DynamicVal, nil
	}
	v, diags := g.Expression.Value(ctx)
	if b.exhausted() {
		return cty.DynamicVal, diags
	}
	if u, _ := v.Unmark(); u.IsKnown() && u.Type() == cty.String && !u.IsNull() {
		n := len(u.AsString())
		g.t.len += n
		if bdiags := b.chargeTemplate(g.t.len, n, g.Range().Ptr()); bdiags != nil {
			return cty.DynamicVal, append(diags, bdiags...)
		}
	}
	return v, diags
}
