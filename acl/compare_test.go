package acl

import (
	"testing"

	"github.com/shoenig/test/must"
)

func compileRules(t *testing.T, rules ...string) (*ACL, Probe) {
	t.Helper()
	var policies []*Policy
	var probe Probe
	for _, r := range rules {
		p, err := Parse(r)
		must.NoError(t, err)
		policies = append(policies, p)
		probe.AddPolicy(p)
	}
	a, err := NewACL(false, policies)
	must.NoError(t, err)
	return a, probe
}

func TestSecurity_IdentityGrantsBeyondHolder(t *testing.T) {
	cases := []struct {
		name    string
		held    string
		granted string
		extraNS []string
		want    []string
	}{
		{name: "purge the holder lacks",
			held:    `namespace "default" { capabilities = ["submit-job", "read-job", "list-jobs"] }`,
			granted: `namespace "default" { capabilities = ["purge-job", "read-job", "list-jobs"] }`,
			want:    []string{`purge-job in namespace "default"`}},
		{name: "write covers it",
			held:    `namespace "default" { policy = "write" }`,
			granted: `namespace "default" { capabilities = ["purge-job", "read-job"] }`},
		{name: "a wider glob covers a narrower one",
			held:    `namespace "*" { policy = "write" }`,
			granted: `namespace "prod-*" { capabilities = ["purge-job"] }`},
		{name: "one namespace does not cover a glob",
			held:    `namespace "prod-a" { policy = "write" }`,
			granted: `namespace "prod-*" { capabilities = ["purge-job"] }`,
			want:    []string{`deregister-job in namespace "prod-*"`, `purge-job in namespace "prod-*"`}},
		{name: "a deny in an existing namespace under the holder's glob",
			held:    "namespace \"prod-*\" { policy = \"write\" }\nnamespace \"prod-secret\" { policy = \"deny\" }",
			granted: `namespace "prod-*" { capabilities = ["read-job"] }`,
			extraNS: []string{"prod-secret", "other"},
			want:    []string{`read-job in namespace "prod-secret"`}},
		{name: "variables the holder cannot read",
			held:    `namespace "default" { policy = "write" }`,
			granted: "namespace \"default\" {\n variables {\n path \"secrets/*\" { capabilities = [\"read\"] }\n }\n}",
			want:    []string{`list on variables "secrets/*" in namespace "default"`, `read on variables "secrets/*" in namespace "default"`}},
		{name: "variables the holder can read",
			held:    "namespace \"default\" {\n variables {\n path \"*\" { capabilities = [\"read\", \"write\"] }\n }\n}",
			granted: "namespace \"default\" {\n variables {\n path \"secrets/*\" { capabilities = [\"read\"] }\n }\n}"},
		{name: "coarse blocks",
			held:    `node { policy = "read" }`,
			granted: "node { policy = \"write\" }\noperator { policy = \"read\" }",
			want:    []string{"node write", "operator read"}},
		{name: "node pools",
			held:    `node_pool "*" { policy = "read" }`,
			granted: `node_pool "gpu" { policy = "write" }`,
			want:    []string{`delete on node pool "gpu"`, `write on node pool "gpu"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			held, _ := compileRules(t, tc.held)
			granted, probe := compileRules(t, tc.granted)
			probe.Namespaces = append(probe.Namespaces, tc.extraNS...)
			var got []string
			for _, g := range Beyond(held, granted, probe) {
				got = append(got, g.String())
			}
			must.Eq(t, tc.want, got)
		})
	}
	t.Run("management lacks nothing", func(t *testing.T) {
		granted, probe := compileRules(t, `namespace "*" { policy = "write" }`)
		must.SliceEmpty(t, Beyond(ManagementACL, granted, probe))
		must.SliceEmpty(t, Beyond(DisabledACL, granted, probe))
	})
	t.Run("nil holder lacks everything granted", func(t *testing.T) {
		granted, probe := compileRules(t, `namespace "default" { capabilities = ["read-job"] }`)
		must.SliceNotEmpty(t, Beyond(nil, granted, probe))
	})
}
