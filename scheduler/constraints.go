package scheduler

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/hashicorp/go-version"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// Constraint operands, with upstream's spellings.
const (
	opDistinctHosts    = "distinct_hosts"
	opDistinctProperty = "distinct_property"
)

// resolveTarget reads a constraint's target against a node: "${attr.kernel.name}" is a node
// attribute, "${meta.rack}" its metadata, "${node.datacenter}" and the other node variables
// its fields; anything else is a literal. ok is false for an attribute or key the node does
// not have, or an unknown variable.
func resolveTarget(target string, n *structs.Node) (string, bool) {
	if !strings.HasPrefix(target, "${") || !strings.HasSuffix(target, "}") {
		return target, true
	}
	name := target[2 : len(target)-1]
	switch name {
	case "node.unique.id":
		return n.ID, true
	case "node.unique.name":
		return n.Name, true
	case "node.datacenter":
		return n.Datacenter, true
	case "node.class":
		return n.NodeClass, true
	case "node.pool":
		return n.NodePool, true
	}
	if k, ok := strings.CutPrefix(name, "attr."); ok {
		v, ok := n.Attributes[k]
		return v, ok
	}
	if k, ok := strings.CutPrefix(name, "meta."); ok {
		v, ok := n.Meta[k]
		return v, ok
	}
	return "", false
}

// constraintKey names a constraint in the metrics' ConstraintFiltered, as upstream's
// Constraint.String does.
func constraintKey(c *api.Constraint) string {
	return fmt.Sprintf("%s %s %s", c.LTarget, c.Operand, c.RTarget)
}

// matcher evaluates constraints and affinities, caching what it compiles: one plan checks
// the same regexp or version constraint against every node.
type matcher struct {
	regexps  map[string]*regexp.Regexp
	versions map[string]version.Constraints
	semvers  map[string]*semver.Constraints
}

func newMatcher() *matcher {
	return &matcher{regexps: map[string]*regexp.Regexp{}, versions: map[string]version.Constraints{},
		semvers: map[string]*semver.Constraints{}}
}

// matches reports whether node meets the constraint. distinct_hosts and distinct_property
// depend on the other allocations and are checked elsewhere; here they always hold. An
// unknown operand or a malformed pattern never matches (register refuses them; a job stored
// before that check cannot crash the scheduler).
func (m *matcher) matches(operand, ltarget, rtarget string, n *structs.Node) bool {
	l, lok := resolveTarget(ltarget, n)
	r, rok := resolveTarget(rtarget, n)
	switch operand {
	case "", "=", "==", "is":
		return lok && rok && l == r
	case "!=", "not":
		return lok != rok || l != r
	case "<", "<=", ">", ">=":
		return lok && rok && checkOrder(operand, l, r)
	case "regexp":
		if !lok || !rok {
			return false
		}
		re, ok := m.regexps[r]
		if !ok {
			re, _ = regexp.Compile(r)
			m.regexps[r] = re
		}
		return re != nil && re.MatchString(l)
	case "version":
		if !lok || !rok {
			return false
		}
		cs, ok := m.versions[r]
		if !ok {
			cs, _ = version.NewConstraint(r)
			m.versions[r] = cs
		}
		v, err := version.NewVersion(l)
		return cs != nil && err == nil && cs.Check(v)
	case "semver":
		if !lok || !rok {
			return false
		}
		cs, ok := m.semvers[r]
		if !ok {
			cs, _ = semver.NewConstraint(r)
			m.semvers[r] = cs
		}
		v, err := semver.StrictNewVersion(strings.TrimPrefix(l, "v"))
		return cs != nil && err == nil && cs.Check(v)
	case "set_contains", "set_contains_all":
		return lok && rok && setContains(l, r, true)
	case "set_contains_any":
		return lok && rok && setContains(l, r, false)
	case "is_set":
		return lok
	case "is_not_set":
		return !lok
	case opDistinctHosts, opDistinctProperty:
		return true
	}
	return false
}

// checkOrder compares numerically when both sides are numbers, otherwise as strings, as
// upstream does.
func checkOrder(op, l, r string) bool {
	var cmp int
	lf, lerr := strconv.ParseFloat(l, 64)
	rf, rerr := strconv.ParseFloat(r, 64)
	switch {
	case lerr == nil && rerr == nil:
		switch {
		case lf < rf:
			cmp = -1
		case lf > rf:
			cmp = 1
		}
	default:
		cmp = strings.Compare(l, r)
	}
	switch op {
	case "<":
		return cmp < 0
	case "<=":
		return cmp <= 0
	case ">":
		return cmp > 0
	default:
		return cmp >= 0
	}
}

// setContains reports whether the comma-separated set have holds every (all) or any (!all)
// element of want.
func setContains(have, want string, all bool) bool {
	set := map[string]bool{}
	for v := range strings.SplitSeq(have, ",") {
		set[strings.TrimSpace(v)] = true
	}
	for v := range strings.SplitSeq(want, ",") {
		ok := set[strings.TrimSpace(v)]
		if all && !ok {
			return false
		}
		if !all && ok {
			return true
		}
	}
	return all
}

// distinctLimit is how many allocations may share a value of a distinct_property
// constraint: its RTarget, 1 when empty or not a positive number.
func distinctLimit(c *api.Constraint) int {
	n, err := strconv.Atoi(c.RTarget)
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// distinctHostsOn reports whether a distinct_hosts constraint is in force: upstream accepts
// `distinct_hosts = false` to switch it off.
func distinctHostsOn(c *api.Constraint) bool {
	b, err := strconv.ParseBool(c.RTarget)
	return err != nil || b
}
