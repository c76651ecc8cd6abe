package agent

import (
	"bytes"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Upstream reads agent configuration with HCL1, which needs nothing between the items of a
// body: `ports { http = 4646  rpc = 4647  serf = 4648 }` is one valid line there. HCL2 (which
// we parse with) wants each argument on its own line and allows a one-line block only with a
// single argument. So that upstream's configuration files load unchanged, a file that fails
// to parse is tried once more with a newline put wherever a new item starts on the line of
// the one before (and after and before the braces around such items); every position in the
// diagnostics of that second parse is mapped back to the text the operator wrote.

// parseAgentHCL parses native-syntax agent configuration. remap maps later diagnostics about
// the returned file back to src; when the file needed no rewriting it returns them as they are.
func parseAgentHCL(parser *hclparse.Parser, src []byte, path string) (*hcl.File, func(hcl.Diagnostics) hcl.Diagnostics, hcl.Diagnostics) {
	same := func(d hcl.Diagnostics) hcl.Diagnostics { return d }
	file, diags := parser.ParseHCL(src, path)
	if !diags.HasErrors() {
		return file, same, diags
	}
	inserts := hcl1ItemBreaks(src, path)
	equals := quotedKeyBlocks(src, path)
	if len(inserts) == 0 && len(equals) == 0 {
		return file, same, diags
	}
	rewritten, inserts := insertBytes(src, inserts, equals)
	// A fresh parser: the first one cached the failed parse under path.
	file2, diags2 := hclparse.NewParser().ParseHCL(rewritten, path)
	// Still invalid or not, the second parse's diagnostics are the useful ones: they are
	// about what remains wrong once the HCL1 form is accepted, at the positions written.
	remap := func(d hcl.Diagnostics) hcl.Diagnostics { return remapDiags(d, src, inserts) }
	return file2, remap, remap(diags2)
}

// hcl1ItemBreaks returns the sorted byte offsets of src where a newline makes the HCL1 form
// valid HCL2: before an item (`name =`, `name {`, `name "label"`) that follows the end of a
// value on the same line or a block that opens a one-line body, and just inside the braces
// of a body holding such items. No valid HCL2 has an item start there, so valid files never
// change.
func hcl1ItemBreaks(src []byte, path string) []int {
	tokens, _ := hclsyntax.LexConfig(src, path, hcl.InitialPos)
	closeLine := braceCloseLines(tokens)
	var out []int
	var open []int // indexes of the unclosed '{' tokens
	split := map[int]bool{}
	for i, tok := range tokens {
		switch tok.Type {
		case hclsyntax.TokenOBrace:
			open = append(open, i)
		case hclsyntax.TokenCBrace:
			if n := len(open); n > 0 {
				if split[open[n-1]] {
					out = append(out, tok.Range.Start.Byte)
				}
				open = open[:n-1]
			}
		case hclsyntax.TokenIdent:
			if i == 0 || i+1 >= len(tokens) || exprKeywords[string(tok.Bytes)] {
				continue
			}
			prev, next := tokens[i-1].Type, tokens[i+1].Type
			startsBlock := next == hclsyntax.TokenOBrace || next == hclsyntax.TokenOQuote
			switch {
			case endsValue(prev) && (next == hclsyntax.TokenEqual || startsBlock):
				// `a = 1 b = 2`, `} b {`: an item right after another on its line.
			case prev == hclsyntax.TokenOBrace && startsBlock:
				// `a { b { … } }`: HCL2 allows no block inside a one-line block.
			case prev == hclsyntax.TokenOBrace && next == hclsyntax.TokenEqual && closeLine[i-1] > tok.Range.Start.Line:
				// `ports { http = 4646` with more items on the lines below: HCL2 takes an
				// argument on the brace's line for a one-line block that must close there.
			default:
				continue
			}
			out = append(out, tok.Range.Start.Byte)
			if n := len(open); n > 0 && !split[open[n-1]] {
				split[open[n-1]] = true
				out = append(out, tokens[open[n-1]].Range.End.Byte)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// braceCloseLines maps the index of each '{' token to the line of its matching '}' (an
// unclosed one to a line past every other).
func braceCloseLines(tokens hclsyntax.Tokens) map[int]int {
	out := map[int]int{}
	var open []int
	for i, tok := range tokens {
		switch tok.Type {
		case hclsyntax.TokenOBrace:
			open = append(open, i)
			out[i] = int(^uint(0) >> 1)
		case hclsyntax.TokenCBrace:
			if n := len(open); n > 0 {
				out[open[n-1]] = tok.Range.Start.Line
				open = open[:n-1]
			}
		}
	}
	return out
}

// exprKeywords are the identifiers that for expressions use; `for k in {…}` is no item.
var exprKeywords = map[string]bool{"for": true, "in": true, "if": true}

// endsValue reports whether a token can be the last one of an argument's value or of a block.
func endsValue(t hclsyntax.TokenType) bool {
	switch t {
	case hclsyntax.TokenNumberLit, hclsyntax.TokenCQuote, hclsyntax.TokenIdent, hclsyntax.TokenCBrack,
		hclsyntax.TokenCBrace, hclsyntax.TokenCParen, hclsyntax.TokenCHeredoc:
		return true
	}
	return false
}

// quotedKeyBlocks returns the offsets of the '{' of every block whose body starts with a quoted
// key (`options { "driver.raw_exec.enable" = "1" }`): HCL1 allows quoted keys anywhere, HCL2
// only inside an object expression. An '=' put before such a brace turns the block into that
// argument form (`options = { … }`), which the decoders of string maps accept. No valid HCL2
// body starts with a quoted key, so valid files never change.
func quotedKeyBlocks(src []byte, path string) []int {
	tokens, _ := hclsyntax.LexConfig(src, path, hcl.InitialPos)
	var out []int
	for i := 1; i+1 < len(tokens); i++ {
		if tokens[i].Type != hclsyntax.TokenOBrace || tokens[i-1].Type != hclsyntax.TokenIdent {
			continue
		}
		j := i + 1
		for j < len(tokens) && tokens[j].Type == hclsyntax.TokenNewline {
			j++
		}
		if j >= len(tokens) || tokens[j].Type != hclsyntax.TokenOQuote {
			continue
		}
		// The key must be followed by '=': `a { "x" }` is something else and stays an error.
		k := j + 1
		for k < len(tokens) && tokens[k].Type != hclsyntax.TokenCQuote && tokens[k].Type != hclsyntax.TokenNewline {
			k++
		}
		if k+1 < len(tokens) && tokens[k].Type == hclsyntax.TokenCQuote && tokens[k+1].Type == hclsyntax.TokenEqual {
			out = append(out, tokens[i].Range.Start.Byte)
		}
	}
	return out
}

// insertBytes puts a newline at each offset of newlines and an '=' at each offset of equals
// (both sorted), and returns the rewritten text with the merged, sorted offsets: one byte
// each, which is what remapDiags undoes.
func insertBytes(src []byte, newlines, equals []int) ([]byte, []int) {
	type insertion struct {
		at int
		b  byte
	}
	all := make([]insertion, 0, len(newlines)+len(equals))
	for _, o := range newlines {
		all = append(all, insertion{o, '\n'})
	}
	for _, o := range equals {
		all = append(all, insertion{o, '='})
	}
	slices.SortStableFunc(all, func(x, y insertion) int { return x.at - y.at })
	var b bytes.Buffer
	b.Grow(len(src) + len(all))
	offsets := make([]int, 0, len(all))
	prev := 0
	for _, in := range all {
		b.Write(src[prev:in.at])
		b.WriteByte(in.b)
		prev = in.at
		offsets = append(offsets, in.at)
	}
	b.Write(src[prev:])
	return b.Bytes(), offsets
}

// remapDiags rewrites the ranges of diags, which point into src with one byte inserted at each of
// inserts, to point into src itself.
func remapDiags(diags hcl.Diagnostics, src []byte, inserts []int) hcl.Diagnostics {
	mapPos := func(p hcl.Pos) hcl.Pos {
		// The n-th inserted newline sits at rewritten offset inserts[n]+n.
		n := 0
		for n < len(inserts) && inserts[n]+n < p.Byte {
			n++
		}
		return posAt(src, max(p.Byte-n, 0))
	}
	mapRange := func(r *hcl.Range) *hcl.Range {
		if r == nil {
			return nil
		}
		return &hcl.Range{Filename: r.Filename, Start: mapPos(r.Start), End: mapPos(r.End)}
	}
	out := make(hcl.Diagnostics, 0, len(diags))
	for _, d := range diags {
		c := *d
		c.Subject, c.Context = mapRange(d.Subject), mapRange(d.Context)
		out = append(out, &c)
	}
	return out
}

// posAt is the line and column (1-based, in bytes as hcl counts columns for ASCII) of byte
// offset off of src.
func posAt(src []byte, off int) hcl.Pos {
	off = min(off, len(src))
	line := 1 + bytes.Count(src[:off], []byte{'\n'})
	col := off - (bytes.LastIndexByte(src[:off], '\n') + 1) + 1
	return hcl.Pos{Line: line, Column: col, Byte: off}
}
