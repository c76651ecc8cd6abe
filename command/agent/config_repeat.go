package agent

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// singletonBlocks are the top-level blocks fileConfig decodes into one struct
// each. Upstream lets a file write any of them more than once and merges the
// occurrences in order; gohcl would refuse the second as a duplicate.
var singletonBlocks = map[string]bool{
	"ports": true, "addresses": true, "advertise": true, "server": true, "client": true,
	"acl": true, "ui": true, "limits": true, "telemetry": true,
}

// splitRepeatedBlocks returns body as parts that each hold at most one block
// of every singleton type: the first part has every argument, every other
// block and the first occurrence of each singleton block; part n holds the
// n-th occurrences. A body with no repetition (and any JSON body, where a
// repeated block is an array that gohcl already reports) is returned as is.
func splitRepeatedBlocks(body hcl.Body) []hcl.Body {
	syn, ok := body.(*hclsyntax.Body)
	if !ok {
		return []hcl.Body{body}
	}
	var parts []*hclsyntax.Body
	seen := map[string]int{}
	for _, b := range syn.Blocks {
		n := 0
		if singletonBlocks[b.Type] {
			n = seen[b.Type]
			seen[b.Type]++
		}
		for len(parts) <= n {
			parts = append(parts, &hclsyntax.Body{
				Attributes: hclsyntax.Attributes{},
				SrcRange:   syn.SrcRange,
				EndRange:   syn.EndRange,
			})
		}
		parts[n].Blocks = append(parts[n].Blocks, b)
	}
	if len(parts) <= 1 {
		return []hcl.Body{body}
	}
	parts[0].Attributes = syn.Attributes
	out := make([]hcl.Body, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out
}
