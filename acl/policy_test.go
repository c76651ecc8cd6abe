package acl

import (
	"encoding/json"
	"testing"

	"github.com/shoenig/test/must"
)

func TestParse_Valid(t *testing.T) {
	cases := []struct {
		name  string
		rules string
		want  *Policy
	}{
		{
			name: "hcl every block",
			rules: `
namespace "default" {
  policy       = "write"
  capabilities = ["alloc-exec"]
  variables {
    path "project/*" { capabilities = ["read", "write"] }
  }
}
namespace "*" { policy = "read" }
node_pool "prod_a-*" { policy = "read" }
host_volume "*" { capabilities = ["mount-readonly"] }
node     { policy = "read" }
agent    { policy = "write" }
operator {
  policy       = "read"
  capabilities = ["snapshot-save"]
}
quota  { policy = "deny" }
plugin { policy = "list" }
`,
			want: &Policy{
				Namespaces: []*NamespacePolicy{
					{
						Name: "default", Policy: "write", Capabilities: []string{"alloc-exec"},
						Variables: &VariablesPolicy{Paths: []*VariablesPathPolicy{
							{PathSpec: "project/*", Capabilities: []string{"read", "write"}},
						}},
					},
					{Name: "*", Policy: "read"},
				},
				NodePools:   []*NodePoolPolicy{{Name: "prod_a-*", Policy: "read"}},
				HostVolumes: []*HostVolumePolicy{{Name: "*", Capabilities: []string{"mount-readonly"}}},
				Node:        &NodePolicy{Policy: "read"},
				Agent:       &AgentPolicy{Policy: "write"},
				Operator:    &OperatorPolicy{Policy: "read", Capabilities: []string{"snapshot-save"}},
				Quota:       &QuotaPolicy{Policy: "deny"},
				Plugin:      &PluginPolicy{Policy: "list"},
			},
		},
		{
			name:  "hcl capabilities only, as in the upstream fixture",
			rules: `namespace "default" { capabilities = ["list-jobs","read-job","submit-job","scale-job"] }`,
			want: &Policy{Namespaces: []*NamespacePolicy{{
				Name: "default", Capabilities: []string{"list-jobs", "read-job", "submit-job", "scale-job"},
			}}},
		},
		{
			name:  "json object form",
			rules: ` {"namespace": {"default": {"policy": "write", "capabilities": ["alloc-exec"]}}, "node": {"policy": "read"}}`,
			want: &Policy{
				Namespaces: []*NamespacePolicy{{Name: "default", Policy: "write", Capabilities: []string{"alloc-exec"}}},
				Node:       &NodePolicy{Policy: "read"},
			},
		},
		{
			name: "json variables",
			rules: `{"namespace": {"dev": {"variables": {"path": {"app/*": {"capabilities": ["list"]}}}}},
			         "operator": {"capabilities": ["license-read"]}}`,
			want: &Policy{
				Namespaces: []*NamespacePolicy{{Name: "dev", Variables: &VariablesPolicy{
					Paths: []*VariablesPathPolicy{{PathSpec: "app/*", Capabilities: []string{"list"}}},
				}}},
				Operator: &OperatorPolicy{Capabilities: []string{"license-read"}},
			},
		},
		{
			name:  "empty namespace block is a rule",
			rules: `namespace "x" {}`,
			want:  &Policy{Namespaces: []*NamespacePolicy{{Name: "x"}}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.rules)
			must.NoError(t, err)
			tc.want.Raw = tc.rules
			must.Eq(t, tc.want, got)
		})
	}
}

func TestParse_Invalid(t *testing.T) {
	cases := []struct {
		name    string
		rules   string
		wantErr string
	}{
		{name: "empty document", rules: "", wantErr: "Invalid policy: no rules"},
		{name: "empty json", rules: "{}", wantErr: "Invalid policy: no rules"},
		{name: "hcl syntax", rules: `namespace "a" {`, wantErr: "Failed to parse ACL policy"},
		{name: "json syntax", rules: `{"namespace": `, wantErr: "Failed to parse ACL policy"},
		{name: "unknown capability", rules: `namespace "default" { capabilities = ["fly"] }`,
			wantErr: `Invalid namespace capability 'fly' in namespace "default"`},
		{name: "unknown namespace policy", rules: `namespace "default" { policy = "x" }`,
			wantErr: `Invalid namespace policy "x" in namespace "default"`},
		{name: "list is plugin-only", rules: `namespace "default" { policy = "list" }`,
			wantErr: `Invalid namespace policy "list"`},
		{name: "bad namespace label", rules: `namespace "a.b" { policy = "read" }`,
			wantErr: `Invalid namespace name "a.b"`},
		{name: "underscore not allowed in namespace", rules: `namespace "a_b" { policy = "read" }`,
			wantErr: `Invalid namespace name "a_b"`},
		{name: "empty namespace label", rules: `namespace "" { policy = "read" }`,
			wantErr: `Invalid namespace name ""`},
		{name: "missing namespace label", rules: `namespace { policy = "read" }`,
			wantErr: "Missing name for namespace"},
		{name: "bad node pool label", rules: `node_pool "a b" { policy = "read" }`,
			wantErr: `Invalid node_pool name "a b"`},
		{name: "bad node pool policy", rules: `node_pool "a" { policy = "scale" }`,
			wantErr: `Invalid node pool policy "scale" in node_pool "a"`},
		{name: "bad node pool capability", rules: `node_pool "a" { capabilities = ["mount"] }`,
			wantErr: `Invalid node pool capability 'mount' in node_pool "a"`},
		{name: "bad host volume label", rules: `host_volume "a_b" { policy = "read" }`,
			wantErr: `Invalid host_volume name "a_b"`},
		{name: "bad host volume capability", rules: `host_volume "a" { capabilities = ["read"] }`,
			wantErr: `Invalid host volume capability 'read' in host_volume "a"`},
		{name: "bad node policy", rules: `node { policy = "list" }`, wantErr: `Invalid node policy "list"`},
		{name: "missing node policy", rules: `node {}`, wantErr: `Invalid node policy ""`},
		{name: "bad agent policy", rules: `agent { policy = "scale" }`, wantErr: `Invalid agent policy "scale"`},
		{name: "bad quota policy", rules: `quota { policy = "all" }`, wantErr: `Invalid quota policy "all"`},
		{name: "bad plugin policy", rules: `plugin { policy = "scale" }`, wantErr: `Invalid plugin policy "scale"`},
		{name: "bad operator policy", rules: `operator { policy = "list" }`, wantErr: `Invalid operator policy "list"`},
		{name: "bare operator block", rules: `operator {}`, wantErr: `Invalid operator policy ""`},
		{name: "bad operator capability", rules: `operator { capabilities = ["reboot"] }`,
			wantErr: `Invalid operator capability 'reboot'`},
		{name: "variables without paths", rules: "namespace \"a\" {\n variables {\n}\n}",
			wantErr: `no variable paths in namespace "a"`},
		{name: "variables empty path", rules: varRules(`""`, `read`),
			wantErr: "path must not be empty"},
		{name: "variables leading slash", rules: varRules(`"/x"`, `read`),
			wantErr: `Invalid variable path "/x" in namespace "a": must not start with '/'`},
		{name: "variables bad capability", rules: varRules(`"x"`, `submit-job`),
			wantErr: `Invalid variable capability 'submit-job' for path "x"`},
		{name: "unknown top-level block", rules: `namespaces "a" { policy = "read" }`,
			wantErr: `Blocks of type "namespaces" are not expected here`},
		{name: "unknown attribute", rules: `namespace "a" { polcy = "read" }`,
			wantErr: `An argument named "polcy" is not expected here`},
		{name: "unknown json key", rules: `{"namespace": {"a": {"policy": "read", "extra": 1}}}`,
			wantErr: `No argument or block type is named "extra"`},
		{name: "duplicate singleton", rules: "node { policy = \"read\" }\nnode { policy = \"write\" }",
			wantErr: `Duplicate node block`},
		{name: "wrong type", rules: `namespace "a" { capabilities = "read-job" }`,
			wantErr: "Invalid ACL policy"},
		{name: "variables not allowed", rules: `namespace "a" { policy = var.x }`,
			wantErr: "Invalid ACL policy"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(tc.rules)
			must.Nil(t, p)
			must.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestPolicy_Validate_CodeBuilt(t *testing.T) {
	cases := []struct {
		name    string
		policy  *Policy
		wantErr string
	}{
		{name: "nil", policy: nil, wantErr: "no rules"},
		{name: "nil namespace", policy: &Policy{Namespaces: []*NamespacePolicy{nil}}, wantErr: "empty namespace rule"},
		{name: "nil path", policy: &Policy{Namespaces: []*NamespacePolicy{
			{Name: "a", Variables: &VariablesPolicy{Paths: []*VariablesPathPolicy{nil}}},
		}}, wantErr: "empty path rule"},
		{name: "bad capability", policy: &Policy{Namespaces: []*NamespacePolicy{
			{Name: "a", Capabilities: []string{"fly"}},
		}}, wantErr: "Invalid namespace capability 'fly'"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.ErrorContains(t, tc.policy.Validate(), tc.wantErr)
		})
	}
}

// The JSON form is served back to clients as RulesJSON, so its keys must be
// upstream's (fixtures/upstream-nomad-2.0.5/acl-policy-info.txt).
func TestPolicy_JSONKeysMatchUpstream(t *testing.T) {
	p, err := Parse(`namespace "default" { capabilities = ["list-jobs"] }`)
	must.NoError(t, err)
	b, err := json.Marshal(p)
	must.NoError(t, err)
	var got map[string]any
	must.NoError(t, json.Unmarshal(b, &got))
	must.MapContainsKeys(t, got, []string{
		"Agent", "ExtraKeysHCL", "HostVolumes", "Namespaces", "Node", "NodePools",
		"Operator", "Plugin", "Quota", "Raw", "Sentinel",
	})
	must.MapLen(t, 11, got)
	ns := got["Namespaces"].([]any)[0].(map[string]any)
	must.MapContainsKeys(t, ns, []string{"Capabilities", "Name", "Policy", "Variables"})
	must.MapLen(t, 4, ns)
}

// varRules builds a namespace "a" policy with one variables path; HCL needs
// nested blocks on their own lines.
func varRules(quotedPath, capability string) string {
	return "namespace \"a\" {\n  variables {\n    path " + quotedPath +
		" { capabilities = [\"" + capability + "\"] }\n  }\n}"
}

func FuzzParse(f *testing.F) {
	seeds := []string{
		`namespace "default" { policy = "write" }`,
		"namespace \"*\" {\n policy = \"read\"\n capabilities = [\"alloc-exec\"]\n}",
		varRules(`"p/*"`, "read"),
		varRules(`"/p"`, "read"),
		"node_pool \"x_*\" { policy = \"write\" }\nhost_volume \"v\" { policy = \"read\" }",
		"node { policy = \"read\" }\nagent { policy = \"deny\" }\nplugin { policy = \"list\" }",
		"operator {\n policy = \"write\"\n capabilities = [\"deny\"]\n}",
		`{"namespace": {"default": {"policy": "write"}}}`,
		`{"namespace": [{"a": {"policy": "read"}}, {"b": [{"policy": "deny"}]}]}`,
		`namespace "default" { capabilities = ["fly"] }`,
		`namespace { }`,
		`namespace "a" { policy = null }`,
		`namespace "a" { policy = "${upper("x")}" }`,
		`{"namespace": {"a": {"policy": ["x"]}}}`,
		`{`,
		"",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rules string) {
		p, err := Parse(rules)
		if err != nil {
			return
		}
		// Whatever parses must compile, and compiling must not fail.
		_, err = NewACL(false, []*Policy{p})
		must.NoError(t, err)
	})
}
