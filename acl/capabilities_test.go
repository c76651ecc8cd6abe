package acl

import (
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

// exportedConstants reads capabilities.go itself, so a constant added without
// a table row (or a row without a constant) fails here rather than silently
// being rejected by the parser.
func exportedConstants(t *testing.T, prefix string) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "capabilities.go", nil, 0)
	must.NoError(t, err)
	out := map[string]string{}
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if !strings.HasPrefix(name.Name, prefix) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				must.True(t, ok, must.Sprintf("%s must be a string literal", name.Name))
				v, err := strconv.Unquote(lit.Value)
				must.NoError(t, err)
				out[name.Name] = v
			}
		}
	}
	return out
}

func TestCapabilityTables_MatchConstants(t *testing.T) {
	cases := []struct {
		name   string
		prefix string
		table  *capabilityTable
	}{
		{name: "namespace", prefix: "NamespaceCapability", table: namespaceCapabilities},
		{name: "node pool", prefix: "NodePoolCapability", table: nodePoolCapabilities},
		{name: "host volume", prefix: "HostVolumeCapability", table: hostVolumeCapabilities},
		{name: "operator", prefix: "OperatorCapability", table: operatorCapabilities},
		{name: "variables", prefix: "VariablesCapability", table: variablesCapabilities},
	}
	knownDispositions := map[string]bool{
		PolicyDeny: true, PolicyRead: true, PolicyWrite: true, PolicyScale: true,
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			consts := exportedConstants(t, tc.prefix)
			must.MapNotEmpty(t, consts)
			values := map[string]bool{}
			for constName, v := range consts {
				must.True(t, tc.table.validCapability(v),
					must.Sprintf("%s = %q has no row in the %s table", constName, v, tc.name))
				values[v] = true
			}
			for _, d := range tc.table.defs {
				must.True(t, values[d.name],
					must.Sprintf("table row %q has no %s* constant", d.name, tc.prefix))
				for _, imp := range d.implies {
					must.True(t, tc.table.validCapability(imp),
						must.Sprintf("%q implies unknown %q", d.name, imp))
				}
				for _, disp := range d.grantedBy {
					must.True(t, knownDispositions[disp],
						must.Sprintf("%q granted by unknown disposition %q", d.name, disp))
				}
			}
		})
	}
}

func TestNamespaceDispositions(t *testing.T) {
	readList := []string{
		"list-jobs", "parse-job", "read-job", "csi-list-volume", "csi-read-volume",
		"read-job-scaling", "list-scaling-policies", "read-scaling-policy", "host-volume-read",
	}
	writeExtra := []string{
		"scale-job", "submit-job", "dispatch-job", "read-logs", "read-fs", "alloc-exec",
		"alloc-lifecycle", "csi-mount-volume", "csi-write-volume", "submit-recommendation",
		"host-volume-create", "deregister-job", "purge-job",
	}
	cases := []struct {
		name        string
		disposition string
		contains    []string
		notContains []string
	}{
		{
			name:        "deny",
			disposition: PolicyDeny,
			contains:    []string{"deny"},
			notContains: []string{"read-job", "list-jobs"},
		},
		{
			name:        "read",
			disposition: PolicyRead,
			contains:    readList,
			notContains: append([]string{"deny", "alloc-node-exec", "protect-job"}, writeExtra...),
		},
		{
			name:        "write",
			disposition: PolicyWrite,
			contains:    append(append([]string{}, readList...), writeExtra...),
			notContains: []string{
				"deny", "alloc-node-exec", "csi-register-plugin", "sentinel-override",
				"host-volume-register", "host-volume-write", "host-volume-delete",
				// Deletion protection holds against whoever may purge: no shorthand lifts it.
				"protect-job",
			},
		},
		{
			name:        "scale",
			disposition: PolicyScale,
			contains: []string{
				"list-scaling-policies", "read-scaling-policy", "read-job-scaling",
				"scale-job", "read-job", "submit-recommendation",
			},
			notContains: []string{"submit-job", "list-jobs", "purge-job", "deregister-job", "protect-job"},
		},
		{
			name:        "unknown grants nothing",
			disposition: "admin",
			notContains: []string{"read-job"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := namespaceCapabilities.expand(tc.disposition)
			must.SliceContainsSubset(t, got, tc.contains)
			for _, c := range tc.notContains {
				must.SliceNotContains(t, got, c)
			}
			must.True(t, sort.StringsAreSorted(got))
		})
	}
}

func TestCapabilityClosure(t *testing.T) {
	cases := []struct {
		name string
		in   []string
		want []string
	}{
		{
			name: "host-volume-write implies register, create, delete, read",
			in:   []string{"host-volume-write"},
			want: []string{"host-volume-create", "host-volume-delete", "host-volume-read",
				"host-volume-register", "host-volume-write"},
		},
		{
			name: "host-volume-register implies create and read",
			in:   []string{"host-volume-register"},
			want: []string{"host-volume-create", "host-volume-read", "host-volume-register"},
		},
		{
			name: "purge-job implies deregister-job",
			in:   []string{"purge-job"},
			want: []string{"deregister-job", "purge-job"},
		},
		{
			name: "deny collapses the set",
			in:   []string{"submit-job", "deny", "read-job"},
			want: []string{"deny"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, namespaceCapabilities.closure(tc.in))
		})
	}

	t.Run("submit-job implies fine-grained job capabilities but not purge", func(t *testing.T) {
		got := namespaceCapabilities.closure([]string{"submit-job"})
		must.SliceContainsSubset(t, got, append([]string{"submit-job"}, submitJobImplies...))
		must.SliceNotContains(t, got, "purge-job")
	})
}
