package acl

import (
	"testing"

	"github.com/shoenig/test/must"
)

// compile parses each document and builds one ACL from them, in order.
func compile(t *testing.T, docs ...string) *ACL {
	t.Helper()
	policies := make([]*Policy, 0, len(docs))
	for _, d := range docs {
		p, err := Parse(d)
		must.NoError(t, err)
		policies = append(policies, p)
	}
	a, err := NewACL(false, policies)
	must.NoError(t, err)
	return a
}

func TestACL_NamespaceOperation(t *testing.T) {
	cases := []struct {
		name     string
		policies []string
		ns       string
		cap      string
		want     bool
	}{
		{name: "write grants purge-job", policies: []string{`namespace "default" { policy = "write" }`},
			ns: "default", cap: NamespaceCapabilityPurgeJob, want: true},
		{name: "write grants deregister-job", policies: []string{`namespace "default" { policy = "write" }`},
			ns: "default", cap: NamespaceCapabilityDeregisterJob, want: true},
		{name: "write does not grant alloc-node-exec", policies: []string{`namespace "default" { policy = "write" }`},
			ns: "default", cap: NamespaceCapabilityAllocNodeExec, want: false},
		{name: "read does not grant submit-job", policies: []string{`namespace "default" { policy = "read" }`},
			ns: "default", cap: NamespaceCapabilitySubmitJob, want: false},
		{name: "hand-written submit-job may stop",
			policies: []string{`namespace "default" { capabilities = ["submit-job"] }`},
			ns:       "default", cap: NamespaceCapabilityDeregisterJob, want: true},
		{name: "hand-written submit-job may not purge",
			policies: []string{`namespace "default" { capabilities = ["list-jobs","read-job","submit-job","scale-job"] }`},
			ns:       "default", cap: NamespaceCapabilityPurgeJob, want: false},
		{name: "purge-job implies stop",
			policies: []string{`namespace "default" { capabilities = ["purge-job"] }`},
			ns:       "default", cap: NamespaceCapabilityDeregisterJob, want: true},
		{name: "policy and capabilities are unioned",
			policies: []string{"namespace \"default\" {\n policy = \"read\"\n capabilities = [\"alloc-exec\"]\n}"},
			ns:       "default", cap: NamespaceCapabilityAllocExec, want: true},
		{name: "capabilities union across policies",
			policies: []string{
				`namespace "default" { capabilities = ["read-job"] }`,
				`namespace "default" { capabilities = ["alloc-exec"] }`,
			},
			ns: "default", cap: NamespaceCapabilityReadJob, want: true},
		{name: "capabilities union across policies, second",
			policies: []string{
				`namespace "default" { capabilities = ["read-job"] }`,
				`namespace "default" { capabilities = ["alloc-exec"] }`,
			},
			ns: "default", cap: NamespaceCapabilityAllocExec, want: true},
		{name: "deny first wins",
			policies: []string{`namespace "default" { policy = "deny" }`, `namespace "default" { policy = "write" }`},
			ns:       "default", cap: NamespaceCapabilityReadJob, want: false},
		{name: "deny last wins",
			policies: []string{`namespace "default" { policy = "write" }`, `namespace "default" { policy = "deny" }`},
			ns:       "default", cap: NamespaceCapabilityReadJob, want: false},
		{name: "deny capability wins within a block",
			policies: []string{"namespace \"default\" {\n policy = \"write\"\n capabilities = [\"deny\"]\n}"},
			ns:       "default", cap: NamespaceCapabilityListJobs, want: false},
		{name: "asking for deny is never allowed",
			policies: []string{`namespace "default" { policy = "deny" }`},
			ns:       "default", cap: NamespaceCapabilityDeny, want: false},
		{name: "other namespace not granted",
			policies: []string{`namespace "default" { policy = "write" }`},
			ns:       "prod", cap: NamespaceCapabilityReadJob, want: false},
		{name: "glob grants",
			policies: []string{`namespace "*" { policy = "read" }`},
			ns:       "anything", cap: NamespaceCapabilityReadJob, want: true},
		{name: "exact deny beats glob write",
			policies: []string{`namespace "prod" { policy = "deny" }`, `namespace "*" { policy = "write" }`},
			ns:       "prod", cap: NamespaceCapabilitySubmitJob, want: false},
		{name: "glob write still applies elsewhere",
			policies: []string{`namespace "prod" { policy = "deny" }`, `namespace "*" { policy = "write" }`},
			ns:       "dev", cap: NamespaceCapabilitySubmitJob, want: true},
		{name: "exact read beats glob write",
			policies: []string{`namespace "*" { policy = "write" }`, `namespace "prod" { policy = "read" }`},
			ns:       "prod", cap: NamespaceCapabilitySubmitJob, want: false},
		{name: "closest glob wins: deny",
			policies: []string{`namespace "*" { policy = "write" }`, `namespace "prod-*" { policy = "deny" }`},
			ns:       "prod-api", cap: NamespaceCapabilityReadJob, want: false},
		{name: "closest glob wins: grant",
			policies: []string{`namespace "*" { policy = "deny" }`, `namespace "prod-*" { policy = "read" }`},
			ns:       "prod-api", cap: NamespaceCapabilityReadJob, want: true},
		{name: "glob not matching falls back to wider glob",
			policies: []string{`namespace "*" { policy = "read" }`, `namespace "prod-*" { policy = "deny" }`},
			ns:       "dev-api", cap: NamespaceCapabilityReadJob, want: true},
		{name: "tie between globs broken lexically",
			// "*-api" and "dev-*" both leave 3 bytes to '*'; "*-api" sorts first.
			policies: []string{`namespace "dev-*" { policy = "read" }`, `namespace "*-api" { policy = "deny" }`},
			ns:       "dev-api", cap: NamespaceCapabilityReadJob, want: false},
		{name: "implication applies after union",
			policies: []string{`namespace "default" { capabilities = ["host-volume-write"] }`},
			ns:       "default", cap: NamespaceCapabilityHostVolumeDelete, want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := compile(t, tc.policies...)
			must.Eq(t, tc.want, a.AllowNamespaceOperation(tc.ns, tc.cap))
		})
	}
}

func TestACL_AllowNamespace(t *testing.T) {
	a := compile(t,
		`namespace "dev" { capabilities = ["list-jobs"] }`,
		`namespace "prod" { policy = "deny" }`,
		`namespace "empty" {}`,
		`namespace "team-*" { policy = "read" }`,
	)
	cases := []struct {
		name string
		ns   string
		want bool
	}{
		{name: "any capability", ns: "dev", want: true},
		{name: "denied", ns: "prod", want: false},
		{name: "block granting nothing", ns: "empty", want: false},
		{name: "glob", ns: "team-a", want: true},
		{name: "no rule", ns: "other", want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, a.AllowNamespace(tc.ns))
		})
	}
}

func TestACL_AllowAnyNamespaceOperation(t *testing.T) {
	a := compile(t,
		`namespace "prod" { policy = "deny" }`,
		`namespace "dev-*" { capabilities = ["alloc-exec"] }`,
		`namespace "dev" { policy = "read" }`,
	)
	cases := []struct {
		name string
		cap  string
		want bool
	}{
		{name: "via exact", cap: NamespaceCapabilityListJobs, want: true},
		{name: "via glob", cap: NamespaceCapabilityAllocExec, want: true},
		{name: "nowhere", cap: NamespaceCapabilitySubmitJob, want: false},
		{name: "deny is not an operation", cap: NamespaceCapabilityDeny, want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, a.AllowAnyNamespaceOperation(tc.cap))
		})
	}
}

func TestACL_Coarse(t *testing.T) {
	type check struct {
		name string
		fn   func(*ACL) bool
	}
	var (
		nodeRead   = check{"node read", (*ACL).AllowNodeRead}
		nodeWrite  = check{"node write", (*ACL).AllowNodeWrite}
		agentRead  = check{"agent read", (*ACL).AllowAgentRead}
		agentWrite = check{"agent write", (*ACL).AllowAgentWrite}
		opRead     = check{"operator read", (*ACL).AllowOperatorRead}
		opWrite    = check{"operator write", (*ACL).AllowOperatorWrite}
		quotaRead  = check{"quota read", (*ACL).AllowQuotaRead}
		quotaWrite = check{"quota write", (*ACL).AllowQuotaWrite}
		pluginRead = check{"plugin read", (*ACL).AllowPluginRead}
		pluginList = check{"plugin list", (*ACL).AllowPluginList}
	)
	cases := []struct {
		name     string
		policies []string
		allowed  []check
		denied   []check
	}{
		{name: "read", policies: []string{`node { policy = "read" }`},
			allowed: []check{nodeRead}, denied: []check{nodeWrite, agentRead}},
		{name: "write implies read", policies: []string{`agent { policy = "write" }`},
			allowed: []check{agentRead, agentWrite}, denied: []check{nodeRead}},
		{name: "most permissive wins", policies: []string{`operator { policy = "read" }`, `operator { policy = "write" }`},
			allowed: []check{opRead, opWrite}},
		{name: "deny wins first", policies: []string{`quota { policy = "deny" }`, `quota { policy = "write" }`},
			denied: []check{quotaRead, quotaWrite}},
		{name: "deny wins last", policies: []string{`quota { policy = "write" }`, `quota { policy = "deny" }`},
			denied: []check{quotaRead, quotaWrite}},
		{name: "operator deny capability", policies: []string{"operator {\n policy = \"write\"\n capabilities = [\"deny\"]\n}"},
			denied: []check{opRead, opWrite}},
		{name: "plugin list is not read", policies: []string{`plugin { policy = "list" }`},
			allowed: []check{pluginList}, denied: []check{pluginRead}},
		{name: "plugin read implies list", policies: []string{`plugin { policy = "read" }`},
			allowed: []check{pluginList, pluginRead}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := compile(t, tc.policies...)
			for _, c := range tc.allowed {
				must.True(t, c.fn(a), must.Sprint(c.name))
			}
			for _, c := range tc.denied {
				must.False(t, c.fn(a), must.Sprint(c.name))
			}
		})
	}
}

func TestACL_NodePoolsAndHostVolumes(t *testing.T) {
	a := compile(t,
		`node_pool "prod_*" { policy = "read" }`,
		`node_pool "prod_gpu" { policy = "write" }`,
		`node_pool "*" { policy = "deny" }`,
		`host_volume "shared" { policy = "write" }`,
		`host_volume "ro-*" { policy = "read" }`,
		`host_volume "ro-secret" { policy = "deny" }`,
	)
	cases := []struct {
		name string
		fn   func() bool
		want bool
	}{
		{"pool glob read", func() bool { return a.AllowNodePoolOperation("prod_a", NodePoolCapabilityRead) }, true},
		{"pool glob no write", func() bool { return a.AllowNodePoolOperation("prod_a", NodePoolCapabilityWrite) }, false},
		{"pool exact write", func() bool { return a.AllowNodePoolOperation("prod_gpu", NodePoolCapabilityDelete) }, true},
		{"pool catch-all deny", func() bool { return a.AllowNodePoolOperation("dev", NodePoolCapabilityRead) }, false},
		{"volume write mounts rw", func() bool { return a.AllowHostVolumeOperation("shared", HostVolumeCapabilityMountReadWrite) }, true},
		{"volume read mounts ro", func() bool { return a.AllowHostVolumeOperation("ro-data", HostVolumeCapabilityMountReadOnly) }, true},
		{"volume read not rw", func() bool { return a.AllowHostVolumeOperation("ro-data", HostVolumeCapabilityMountReadWrite) }, false},
		{"volume exact deny", func() bool { return a.AllowHostVolumeOperation("ro-secret", HostVolumeCapabilityMountReadOnly) }, false},
		{"volume no rule", func() bool { return a.AllowHostVolumeOperation("other", HostVolumeCapabilityMountReadOnly) }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, tc.fn())
		})
	}
}

func TestACL_Variables(t *testing.T) {
	a := compile(t,
		"namespace \"dev\" {\n variables {\n  path \"app/*\" { capabilities = [\"read\", \"write\"] }\n"+
			"  path \"app/secret\" { capabilities = [\"deny\"] }\n }\n}",
		"namespace \"*\" {\n variables {\n  path \"*\" { capabilities = [\"list\"] }\n }\n}",
		"namespace \"prod\" {\n policy = \"deny\"\n variables {\n  path \"*\" { capabilities = [\"read\"] }\n }\n}",
		"namespace \"dev\" {\n variables {\n  path \"app/*\" { capabilities = [\"destroy\"] }\n }\n}",
	)
	cases := []struct {
		name     string
		ns, path string
		op       string
		want     bool
	}{
		{name: "glob path read", ns: "dev", path: "app/db", op: "read", want: true},
		{name: "read implies list", ns: "dev", path: "app/db", op: "list", want: true},
		{name: "union across policies", ns: "dev", path: "app/db", op: "destroy", want: true},
		{name: "exact path deny beats glob", ns: "dev", path: "app/secret", op: "read", want: false},
		{name: "glob matches across slashes", ns: "dev", path: "app/a/b", op: "write", want: true},
		{name: "path outside rules", ns: "dev", path: "other", op: "read", want: false},
		{name: "namespace glob", ns: "qa", path: "x", op: "list", want: true},
		{name: "namespace glob no read", ns: "qa", path: "x", op: "read", want: false},
		{name: "namespace deny shuts variables", ns: "prod", path: "x", op: "read", want: false},
		{name: "deny op never allowed", ns: "dev", path: "app/secret", op: "deny", want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, a.AllowVariableOperation(tc.ns, tc.path, tc.op))
		})
	}
}

// allChecks runs every exported check, so the special ACL values below are
// proven against the whole surface and a new method must be added here.
func allChecks(a *ACL) map[string]bool {
	return map[string]bool{
		"AllowNamespaceOperation":    a.AllowNamespaceOperation("default", NamespaceCapabilityPurgeJob),
		"AllowNamespace":             a.AllowNamespace("default"),
		"AllowAnyNamespaceOperation": a.AllowAnyNamespaceOperation(NamespaceCapabilitySubmitJob),
		"AllowVariableOperation":     a.AllowVariableOperation("default", "x", VariablesCapabilityRead),
		"AllowNodePoolOperation":     a.AllowNodePoolOperation("default", NodePoolCapabilityWrite),
		"AllowHostVolumeOperation":   a.AllowHostVolumeOperation("v", HostVolumeCapabilityMountReadWrite),
		"AllowNodeRead":              a.AllowNodeRead(),
		"AllowNodeWrite":             a.AllowNodeWrite(),
		"AllowAgentRead":             a.AllowAgentRead(),
		"AllowAgentWrite":            a.AllowAgentWrite(),
		"AllowOperatorRead":          a.AllowOperatorRead(),
		"AllowOperatorWrite":         a.AllowOperatorWrite(),
		"AllowQuotaRead":             a.AllowQuotaRead(),
		"AllowQuotaWrite":            a.AllowQuotaWrite(),
		"AllowPluginRead":            a.AllowPluginRead(),
		"AllowPluginList":            a.AllowPluginList(),
	}
}

func TestACL_SpecialValues(t *testing.T) {
	mgmt, err := NewACL(true, []*Policy{{Node: &NodePolicy{Policy: PolicyDeny}}})
	must.NoError(t, err)
	empty, err := NewACL(false, nil)
	must.NoError(t, err)

	cases := []struct {
		name           string
		acl            *ACL
		wantAllowed    bool
		wantManagement bool
		wantDisabled   bool
	}{
		{name: "nil denies", acl: nil, wantAllowed: false},
		{name: "no policies denies", acl: empty, wantAllowed: false},
		{name: "management allows", acl: ManagementACL, wantAllowed: true, wantManagement: true},
		{name: "NewACL management ignores policies", acl: mgmt, wantAllowed: true, wantManagement: true},
		{name: "disabled allows", acl: DisabledACL, wantAllowed: true, wantDisabled: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for check, got := range allChecks(tc.acl) {
				must.Eq(t, tc.wantAllowed, got, must.Sprint(check))
			}
			must.Eq(t, tc.wantManagement, tc.acl.IsManagement())
			must.Eq(t, tc.wantDisabled, tc.acl.IsDisabled())
		})
	}
}

func TestNewACL_Errors(t *testing.T) {
	_, err := NewACL(false, []*Policy{{Namespaces: []*NamespacePolicy{{Name: "a", Policy: "admin"}}}})
	must.ErrorContains(t, err, `policy 0: Invalid namespace policy "admin"`)

	a, err := NewACL(false, []*Policy{nil, {Node: &NodePolicy{Policy: PolicyRead}}})
	must.NoError(t, err)
	must.True(t, a.AllowNodeRead())
}

func TestGlobMatch(t *testing.T) {
	cases := []struct {
		name, pattern, s string
		want             bool
	}{
		{name: "star alone", pattern: "*", s: "", want: true},
		{name: "prefix", pattern: "prod-*", s: "prod-a", want: true},
		{name: "prefix empty rest", pattern: "prod-*", s: "prod-", want: true},
		{name: "prefix mismatch", pattern: "prod-*", s: "prod", want: false},
		{name: "suffix", pattern: "*-api", s: "dev-api", want: true},
		{name: "middle", pattern: "a*c", s: "abbbc", want: true},
		{name: "backtrack", pattern: "*ab", s: "aab", want: true},
		{name: "multi", pattern: "a*b*c", s: "axbyc", want: true},
		{name: "multi mismatch", pattern: "a*b*c", s: "axbyd", want: false},
		{name: "literal", pattern: "abc", s: "abd", want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, globMatch(tc.pattern, tc.s))
		})
	}
}

func TestACL_AllowWorkloadServices(t *testing.T) {
	token, err := NewACL(false, nil)
	must.NoError(t, err)
	cases := []struct {
		name string
		acl  *ACL
		ns   string
		want bool
	}{
		{name: "nil denies", acl: nil, ns: "default", want: false},
		{name: "a token without the grant", acl: token, ns: "default", want: false},
		{name: "the workload's namespace", acl: token.WithWorkloadVariables("prod", "nomad/jobs"), ns: "prod", want: true},
		{name: "another namespace", acl: token.WithWorkloadVariables("prod", "nomad/jobs"), ns: "default", want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, tc.acl.AllowWorkloadServices(tc.ns))
		})
	}
}
