package jobspec

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// parseTimeRoots are the variable roots resolved while parsing. Any other
// root inside a string interpolation ("${attr.kernel.name}",
// "${NOMAD_ALLOC_DIR}", "${meta.rack}", "${node.unique.id}") is resolved
// later by the Nomad client or scheduler, so it must reach the job as the
// literal text the user wrote.
var parseTimeRoots = map[string]bool{"var": true, "local": true}

// keepRuntimeInterpolations rewrites, in place, every string interpolation
// whose root is not known at parse time into a literal "${...}" string.
// Names bound by for expressions and dynamic blocks are in scope where they
// are bound and are left alone. Only interpolations that are a bare
// traversal are rewritten: "${upper(attr.x)}" cannot be kept for the
// client and fails evaluation with HCL's "Unknown variable" error.
func keepRuntimeInterpolations(body *hclsyntax.Body, src []byte) hcl.Diagnostics {
	w := &runtimeWalker{src: src}
	return hclsyntax.Walk(body, w)
}

type runtimeWalker struct {
	src    []byte
	scopes []map[string]bool
}

func (w *runtimeWalker) Enter(node hclsyntax.Node) hcl.Diagnostics {
	switch n := node.(type) {
	case hclsyntax.ChildScope:
		scope := map[string]bool{}
		for name := range n.LocalNames {
			scope[name] = true
		}
		w.scopes = append(w.scopes, scope)
	case *hclsyntax.Block:
		if n.Type == "dynamic" {
			w.scopes = append(w.scopes, map[string]bool{dynamicIteratorName(n): true})
		}
	case *hclsyntax.TemplateExpr:
		for i, part := range n.Parts {
			if lit, ok := w.literal(part); ok {
				n.Parts[i] = lit
			}
		}
	case *hclsyntax.TemplateWrapExpr:
		if lit, ok := w.literal(n.Wrapped); ok {
			n.Wrapped = lit
		}
	}
	return nil
}

func (w *runtimeWalker) Exit(node hclsyntax.Node) hcl.Diagnostics {
	switch n := node.(type) {
	case hclsyntax.ChildScope:
		w.scopes = w.scopes[:len(w.scopes)-1]
	case *hclsyntax.Block:
		if n.Type == "dynamic" {
			w.scopes = w.scopes[:len(w.scopes)-1]
		}
	}
	return nil
}

// literal returns the "${...}" text for expr when it is a traversal of a
// runtime root.
func (w *runtimeWalker) literal(expr hclsyntax.Expression) (hclsyntax.Expression, bool) {
	tr, ok := expr.(*hclsyntax.ScopeTraversalExpr)
	if !ok || w.bound(tr.Traversal.RootName()) {
		return nil, false
	}
	rng := tr.SrcRange
	text := "${" + string(rng.SliceBytes(w.src)) + "}"
	return &hclsyntax.LiteralValueExpr{Val: cty.StringVal(text), SrcRange: rng}, true
}

func (w *runtimeWalker) bound(root string) bool {
	if parseTimeRoots[root] {
		return true
	}
	for _, scope := range w.scopes {
		if scope[root] {
			return true
		}
	}
	return false
}

// dynamicIteratorName is the name a dynamic block's content refers to its
// current element by: the iterator argument when set, else the block label.
func dynamicIteratorName(b *hclsyntax.Block) string {
	if attr, ok := b.Body.Attributes["iterator"]; ok {
		if name := hcl.ExprAsKeyword(attr.Expr); name != "" {
			return name
		}
	}
	if len(b.Labels) > 0 {
		return b.Labels[0]
	}
	return ""
}
