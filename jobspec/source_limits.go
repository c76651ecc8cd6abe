package jobspec

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// checkSource refuses, before the parser sees it, source the parser would need a deep stack
// for: hclsyntax recurses once per open bracket, block, quote, template sequence and
// template directive, and builds chained operators (a+b+c...) and index steps (x[i][j]...)
// into a tree as deep as the chain. The lexer is a flat state machine, so scanning its
// tokens is linear and bounded by the source size checked first.
func checkSource(what, filename string, src []byte, lim Limits) error {
	if len(src) > lim.MaxSourceBytes {
		return &LimitError{Msg: fmt.Sprintf("%s is %d bytes, over the limit of %d", what, len(src), lim.MaxSourceBytes)}
	}
	tokens, _ := hclsyntax.LexConfig(src, filename, hcl.InitialPos)
	return checkTokens(tokens, lim)
}

// checkExprSource is checkSource for one expression (a variable value).
func checkExprSource(what, filename string, src []byte, lim Limits) error {
	if len(src) > lim.MaxSourceBytes {
		return &LimitError{Msg: fmt.Sprintf("%s is %d bytes, over the limit of %d", what, len(src), lim.MaxSourceBytes)}
	}
	tokens, _ := hclsyntax.LexExpression(src, filename, hcl.InitialPos)
	return checkTokens(tokens, lim)
}

// level is one open bracket: chain counts the operators and postfix steps written at this
// level since the last separator; template levels (quotes, heredocs) hold a flat list of
// parts, so their interpolations do not chain.
type level struct {
	chain    int
	template bool
}

func checkTokens(tokens hclsyntax.Tokens, lim Limits) error {
	stack := []level{{}}
	chain := 0     // sum of chain over the stack: how deep the current expression tree is
	directive := 0 // %{if}/%{for} open in templates, each a nesting level of its own
	for i, tok := range tokens {
		top := &stack[len(stack)-1]
		switch tok.Type {
		case hclsyntax.TokenOBrace, hclsyntax.TokenOBrack, hclsyntax.TokenOParen,
			hclsyntax.TokenOQuote, hclsyntax.TokenOHeredoc,
			hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl:
			if !top.template {
				top.chain++
				chain++
			}
			stack = append(stack, level{template: tok.Type == hclsyntax.TokenOQuote || tok.Type == hclsyntax.TokenOHeredoc})
			if depth := len(stack) - 1 + directive; depth > lim.MaxNestingDepth {
				return nestingError(tok, lim.MaxNestingDepth)
			}
		case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen,
			hclsyntax.TokenCQuote, hclsyntax.TokenCHeredoc, hclsyntax.TokenTemplateSeqEnd:
			// Unbalanced input is the parser's to report; never pop the root.
			if len(stack) > 1 {
				chain -= top.chain
				stack = stack[:len(stack)-1]
			}
		case hclsyntax.TokenNewline, hclsyntax.TokenComma:
			chain -= top.chain
			top.chain = 0
		case hclsyntax.TokenPlus, hclsyntax.TokenMinus, hclsyntax.TokenStar, hclsyntax.TokenSlash,
			hclsyntax.TokenPercent, hclsyntax.TokenAnd, hclsyntax.TokenOr, hclsyntax.TokenBang,
			hclsyntax.TokenEqualOp, hclsyntax.TokenNotEqual, hclsyntax.TokenLessThan,
			hclsyntax.TokenLessThanEq, hclsyntax.TokenGreaterThan, hclsyntax.TokenGreaterThanEq,
			hclsyntax.TokenQuestion, hclsyntax.TokenDot:
			top.chain++
			chain++
		case hclsyntax.TokenNumberLit:
			// Arbitrary precision parsing is superlinear in the digits.
			if len(tok.Bytes) > maxNumberText {
				return &LimitError{Subject: tok.Range.Ptr(), Msg: fmt.Sprintf(
					"number literal is longer than %d characters", maxNumberText)}
			}
		case hclsyntax.TokenIdent:
			if i == 0 || tokens[i-1].Type != hclsyntax.TokenTemplateControl {
				break
			}
			switch string(tok.Bytes) {
			case "if", "for":
				directive++
				if depth := len(stack) - 1 + directive; depth > lim.MaxNestingDepth {
					return nestingError(tok, lim.MaxNestingDepth)
				}
			case "endif", "endfor":
				directive = max(directive-1, 0)
			}
		}
		if chain > lim.MaxExpressionChain {
			return &LimitError{Subject: tok.Range.Ptr(), Msg: fmt.Sprintf(
				"expression chains more than %d operators or steps", lim.MaxExpressionChain)}
		}
	}
	return nil
}

func nestingError(tok hclsyntax.Token, limit int) error {
	return &LimitError{Subject: tok.Range.Ptr(), Msg: fmt.Sprintf("source nests deeper than %d levels", limit)}
}
