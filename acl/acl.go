package acl

import (
	"fmt"
	"sort"
	"strings"
)

// ACL is a token's policies compiled for lookup. It is immutable once built,
// so one value may be shared between goroutines and cached.
type ACL struct {
	management bool
	disabled   bool

	namespaces  matcher[capSet]
	variables   matcher[*matcher[capSet]] // namespace label -> path rules
	nodePools   matcher[capSet]
	hostVolumes matcher[capSet]

	// Merged dispositions of the unlabelled blocks; "" grants nothing.
	agent, node, operator, quota, plugin string

	// workload holds the implicit variable grants of a workload identity: read and list of
	// exact paths in one namespace. Nil for tokens.
	workload *workloadGrant
}

// workloadGrant is read and list of a set of exact variable paths in one namespace.
type workloadGrant struct {
	namespace string
	paths     map[string]struct{}
}

// WithWorkloadVariables returns a copy of a that may also read and list the variables at
// exactly paths in namespace ns: the implicit rights of a workload identity. Paths are
// matched literally, never as globs, so a job ID holding "*" widens nothing.
func (a *ACL) WithWorkloadVariables(ns string, paths ...string) *ACL {
	if a == nil {
		return nil
	}
	out := *a
	g := &workloadGrant{namespace: ns, paths: make(map[string]struct{}, len(paths))}
	for _, p := range paths {
		g.paths[p] = struct{}{}
	}
	out.workload = g
	return &out
}

// AllowWorkloadServices reports whether a is a workload identity's ACL of namespace ns:
// upstream's implicit policy lets a workload list and read the service registrations of its
// own namespace (what templates' nomadService and nomadServices call), without read-job.
func (a *ACL) AllowWorkloadServices(ns string) bool {
	return a != nil && a.workload != nil && a.workload.namespace == ns
}

var (
	// ManagementACL allows every operation.
	ManagementACL = &ACL{management: true}

	// DisabledACL is what callers use when the ACL system is off. It is a
	// distinct value rather than nil because nil must deny.
	DisabledACL = &ACL{disabled: true}
)

// NewACL compiles policies into one ACL. With management set the policies
// are ignored. Each policy is validated again because a policy built in code
// has not been through Parse.
func NewACL(management bool, policies []*Policy) (*ACL, error) {
	if management {
		return ManagementACL, nil
	}
	nsCaps := labelAccumulator{}
	poolCaps := labelAccumulator{}
	volCaps := labelAccumulator{}
	varCaps := map[string]labelAccumulator{}
	a := &ACL{}

	for i, p := range policies {
		if p == nil {
			continue
		}
		if err := p.Validate(); err != nil {
			return nil, fmt.Errorf("policy %d: %w", i, err)
		}
		for _, ns := range p.Namespaces {
			nsCaps.add(ns.Name, namespaceCapabilities, ns.Policy, ns.Capabilities)
			if ns.Variables == nil {
				continue
			}
			paths := varCaps[ns.Name]
			if paths == nil {
				paths = labelAccumulator{}
				varCaps[ns.Name] = paths
			}
			for _, vp := range ns.Variables.Paths {
				paths.add(vp.PathSpec, variablesCapabilities, "", vp.Capabilities)
			}
		}
		for _, np := range p.NodePools {
			poolCaps.add(np.Name, nodePoolCapabilities, np.Policy, np.Capabilities)
		}
		for _, hv := range p.HostVolumes {
			volCaps.add(hv.Name, hostVolumeCapabilities, hv.Policy, hv.Capabilities)
		}
		if p.Agent != nil {
			a.agent = mergeDisposition(a.agent, p.Agent.Policy)
		}
		if p.Node != nil {
			a.node = mergeDisposition(a.node, p.Node.Policy)
		}
		if p.Quota != nil {
			a.quota = mergeDisposition(a.quota, p.Quota.Policy)
		}
		if p.Plugin != nil {
			a.plugin = mergeDisposition(a.plugin, p.Plugin.Policy)
		}
		if op := p.Operator; op != nil {
			a.operator = mergeDisposition(a.operator, op.Policy)
			for _, c := range op.Capabilities {
				if c == OperatorCapabilityDeny {
					a.operator = PolicyDeny
				}
			}
		}
	}

	a.namespaces = nsCaps.build(namespaceCapabilities)
	a.nodePools = poolCaps.build(nodePoolCapabilities)
	a.hostVolumes = volCaps.build(hostVolumeCapabilities)
	varRules := map[string]*matcher[capSet]{}
	for ns, paths := range varCaps {
		m := paths.build(variablesCapabilities)
		varRules[ns] = &m
	}
	a.variables = newMatcher(varRules)
	return a, nil
}

// IsManagement is false for DisabledACL: "ACLs off" is not a management
// token, even though every check passes.
func (a *ACL) IsManagement() bool { return a != nil && a.management }

func (a *ACL) IsDisabled() bool { return a != nil && a.disabled }

// bypass must be called only on a non-nil receiver.
func (a *ACL) bypass() bool { return a.management || a.disabled }

func (a *ACL) AllowNamespaceOperation(ns, capability string) bool {
	if a == nil {
		return false
	}
	if a.bypass() {
		return true
	}
	set, _ := a.namespaces.lookup(ns)
	return set.allows(capability)
}

// AllowNamespace reports whether the token holds any capability in ns.
func (a *ACL) AllowNamespace(ns string) bool {
	if a == nil {
		return false
	}
	if a.bypass() {
		return true
	}
	set, _ := a.namespaces.lookup(ns)
	return len(set) > 0 && !set.denied()
}

// AllowAnyNamespaceOperation reports whether capability is granted under any
// namespace rule, exact or glob; list endpoints use it before filtering.
func (a *ACL) AllowAnyNamespaceOperation(capability string) bool {
	if a == nil {
		return false
	}
	if a.bypass() {
		return true
	}
	return a.namespaces.any(func(s capSet) bool { return s.allows(capability) })
}

// AllowVariableOperation requires a path rule granting op; a deny on the
// namespace itself also shuts its variables.
func (a *ACL) AllowVariableOperation(ns, path, op string) bool {
	if a == nil {
		return false
	}
	if a.bypass() {
		return true
	}
	if set, ok := a.namespaces.lookup(ns); ok && set.denied() {
		return false
	}
	var set capSet
	if paths, ok := a.variables.lookup(ns); ok {
		set, _ = paths.lookup(path)
	}
	if set.denied() {
		return false
	}
	if w := a.workload; w != nil && w.namespace == ns && (op == VariablesCapabilityRead || op == VariablesCapabilityList) {
		if _, ok := w.paths[path]; ok {
			return true
		}
	}
	return set.allows(op)
}

func (a *ACL) AllowNodePoolOperation(pool, capability string) bool {
	if a == nil {
		return false
	}
	if a.bypass() {
		return true
	}
	set, _ := a.nodePools.lookup(pool)
	return set.allows(capability)
}

func (a *ACL) AllowHostVolumeOperation(name, capability string) bool {
	if a == nil {
		return false
	}
	if a.bypass() {
		return true
	}
	set, _ := a.hostVolumes.lookup(name)
	return set.allows(capability)
}

func (a *ACL) AllowNodeRead() bool {
	return a != nil && (a.bypass() || atLeast(a.node, PolicyRead))
}

func (a *ACL) AllowNodeWrite() bool {
	return a != nil && (a.bypass() || atLeast(a.node, PolicyWrite))
}

func (a *ACL) AllowAgentRead() bool {
	return a != nil && (a.bypass() || atLeast(a.agent, PolicyRead))
}

func (a *ACL) AllowAgentWrite() bool {
	return a != nil && (a.bypass() || atLeast(a.agent, PolicyWrite))
}

func (a *ACL) AllowQuotaRead() bool {
	return a != nil && (a.bypass() || atLeast(a.quota, PolicyRead))
}

func (a *ACL) AllowQuotaWrite() bool {
	return a != nil && (a.bypass() || atLeast(a.quota, PolicyWrite))
}

func (a *ACL) AllowOperatorRead() bool {
	return a != nil && (a.bypass() || atLeast(a.operator, PolicyRead))
}

func (a *ACL) AllowOperatorWrite() bool {
	return a != nil && (a.bypass() || atLeast(a.operator, PolicyWrite))
}

// AllowPluginRead is not implied by "list": list shows plugins without their
// details.
func (a *ACL) AllowPluginRead() bool {
	return a != nil && (a.bypass() || atLeast(a.plugin, PolicyRead))
}

func (a *ACL) AllowPluginList() bool {
	return a != nil && (a.bypass() || atLeast(a.plugin, PolicyList))
}

// atLeast works because deny and "" have rank 0 and every need ranks >= 1.
func atLeast(have, need string) bool {
	return dispositionRank[have] >= dispositionRank[need]
}

// mergeDisposition keeps the more permissive of two dispositions, except that
// deny, once seen, is final.
func mergeDisposition(cur, next string) string {
	if cur == PolicyDeny || next == PolicyDeny {
		return PolicyDeny
	}
	if dispositionRank[next] > dispositionRank[cur] {
		return next
	}
	return cur
}

// capSet is a closed capability set: implications applied and, if deny was
// present, reduced to {deny}.
type capSet map[string]struct{}

func (s capSet) denied() bool {
	_, ok := s[PolicyDeny]
	return ok
}

func (s capSet) allows(capability string) bool {
	if capability == PolicyDeny || s.denied() {
		return false
	}
	_, ok := s[capability]
	return ok
}

// labelAccumulator gathers raw capabilities per label across policies; the
// union is closed only in build, which is what makes deny win regardless of
// the order the policies arrive in.
type labelAccumulator map[string]map[string]struct{}

func (acc labelAccumulator) add(label string, table *capabilityTable, disposition string, caps []string) {
	set := acc[label]
	if set == nil {
		set = map[string]struct{}{}
		acc[label] = set
	}
	for _, c := range table.expand(disposition) {
		set[c] = struct{}{}
	}
	for _, c := range caps {
		set[c] = struct{}{}
	}
}

func (acc labelAccumulator) build(table *capabilityTable) matcher[capSet] {
	sets := make(map[string]capSet, len(acc))
	for label, raw := range acc {
		names := make([]string, 0, len(raw))
		for c := range raw {
			names = append(names, c)
		}
		set := capSet{}
		for _, c := range table.closure(names) {
			set[c] = struct{}{}
		}
		sets[label] = set
	}
	return newMatcher(sets)
}

// matcher resolves a name to the value of its exact label or, failing that,
// of the closest matching glob label.
type matcher[T any] struct {
	exact map[string]T
	globs []globRule[T] // sorted by pattern: the tie-break order
}

type globRule[T any] struct {
	pattern string
	literal int // non-'*' bytes; the closest glob leaves fewest bytes to '*'
	val     T
}

func newMatcher[T any](byLabel map[string]T) matcher[T] {
	m := matcher[T]{exact: map[string]T{}}
	for label, v := range byLabel {
		if strings.Contains(label, "*") {
			m.globs = append(m.globs, globRule[T]{
				pattern: label,
				literal: len(label) - strings.Count(label, "*"),
				val:     v,
			})
			continue
		}
		m.exact[label] = v
	}
	sort.Slice(m.globs, func(i, j int) bool { return m.globs[i].pattern < m.globs[j].pattern })
	return m
}

func (m *matcher[T]) lookup(name string) (T, bool) {
	if v, ok := m.exact[name]; ok {
		return v, true
	}
	best := -1
	for i, g := range m.globs {
		if !globMatch(g.pattern, name) {
			continue
		}
		// Strict comparison keeps the lexically first pattern on a tie.
		if best < 0 || g.literal > m.globs[best].literal {
			best = i
		}
	}
	if best < 0 {
		var zero T
		return zero, false
	}
	return m.globs[best].val, true
}

func (m *matcher[T]) any(pred func(T) bool) bool {
	for _, v := range m.exact {
		if pred(v) {
			return true
		}
	}
	for _, g := range m.globs {
		if pred(g.val) {
			return true
		}
	}
	return false
}

// globMatch reports whether name matches pattern, where '*' matches any run
// of bytes, '/' included. It backtracks only to the last '*', so it runs in
// O(len(pattern)*len(name)) even on hostile input.
func globMatch(pattern, name string) bool {
	p, n := 0, 0
	star, mark := -1, 0
	for n < len(name) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, n
			p++
		case p < len(pattern) && pattern[p] == name[n]:
			p++
			n++
		case star >= 0:
			p = star + 1
			mark++
			n = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
