package template

import (
	"fmt"
	"sort"
	"text/template/parse"
)

// consulFuncs and vaultFuncs are consul-template's functions that need a Consul or a Vault.
var (
	consulFuncs = []string{
		"caLeaf", "caRoots", "connect", "datacenters", "exportedServices", "key", "keyExists",
		"keyOrDefault", "ls", "node", "nodes", "partitions", "peerings", "safeLs", "safeTree",
		"service", "services", "tree",
	}
	vaultFuncs = []string{"pkiCert", "secret", "secrets"}
	nomadFuncs = []string{"nomadService", "nomadServices", "nomadVar", "nomadVarExists", "nomadVarList", "nomadVarListSafe"}
	// unsafeFuncs would let a template run a program or write outside its destination;
	// upstream denies them by default too.
	unsafeFuncs = []string{"plugin", "writeToFile"}
)

// checkFuncs parses a template's text and reports the first function it calls that needs
// Consul or Vault, or the Nomad API when noNomad says why there is none. Checking the parse tree, rather than relying on the denylist alone, names
// the function and the missing service before the runner starts, and never depends on the
// text of consul-template's errors.
func checkFuncs(text, left, right, noNomad string) error {
	consul, vault, nomad := set(consulFuncs), set(vaultFuncs), set(nomadFuncs)
	trees, err := parseTrees(text, left, right)
	if err != nil {
		return err
	}
	names := map[string]bool{}
	for _, t := range trees {
		if t.Root != nil {
			walk(t.Root, func(id string) { names[id] = true })
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		switch {
		case consul[n]:
			return fmt.Errorf("template function %q needs Consul, and no Consul is configured", n)
		case vault[n]:
			return fmt.Errorf("template function %q needs Vault, and no Vault is configured", n)
		case noNomad != "" && nomad[n]:
			return fmt.Errorf("template function %q needs the Nomad API: %s", n, noNomad)
		}
	}
	return nil
}

func parseTrees(text, left, right string) (map[string]*parse.Tree, error) {
	t := parse.New("template")
	t.Mode = parse.SkipFuncCheck
	trees := map[string]*parse.Tree{}
	if _, err := t.Parse(text, left, right, trees); err != nil {
		return nil, fmt.Errorf("parsing template: %w", err)
	}
	return trees, nil
}

func set(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// walk calls fn with every identifier (function name) under n.
func walk(n parse.Node, fn func(string)) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			walk(c, fn)
		}
	case *parse.ActionNode:
		walk(n.Pipe, fn)
	case *parse.PipeNode:
		if n == nil {
			return
		}
		for _, c := range n.Cmds {
			walk(c, fn)
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			walk(a, fn)
		}
	case *parse.IdentifierNode:
		fn(n.Ident)
	case *parse.ChainNode:
		walk(n.Node, fn)
	case *parse.IfNode:
		walkBranch(&n.BranchNode, fn)
	case *parse.RangeNode:
		walkBranch(&n.BranchNode, fn)
	case *parse.WithNode:
		walkBranch(&n.BranchNode, fn)
	case *parse.TemplateNode:
		walk(n.Pipe, fn)
	}
}

func walkBranch(b *parse.BranchNode, fn func(string)) {
	walk(b.Pipe, fn)
	walk(b.List, fn)
	walk(b.ElseList, fn)
}
