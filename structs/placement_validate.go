package structs

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/Masterminds/semver/v3"
	"github.com/hashicorp/go-version"
	"github.com/hashicorp/nomad/api"
)

// maxTargetLength bounds a constraint's or affinity's targets: a regexp or version
// constraint is compiled once per evaluation and checked against every node.
const maxTargetLength = 1024

// constraintOperands are upstream's operands; affinities take all but the distinct_* ones.
var constraintOperands = map[string]bool{
	"": true, "=": true, "==": true, "is": true, "!=": true, "not": true,
	"<": true, "<=": true, ">": true, ">=": true, "regexp": true, "version": true, "semver": true,
	"set_contains": true, "set_contains_all": true, "set_contains_any": true,
	"is_set": true, "is_not_set": true, "distinct_hosts": true, "distinct_property": true,
}

// checkPlacement reports what the scheduler could not honour in the job's constraints,
// affinities, spreads and resources, each message naming where it is. The scheduler never
// fails on these (a malformed constraint matches no node), but a job stored with one would
// silently never run.
func checkPlacement(j *Job) []string {
	var msgs []string
	add := func(format string, args ...any) { msgs = append(msgs, fmt.Sprintf(format, args...)) }
	check := func(where string, cs []*api.Constraint, as []*api.Affinity, ss []*api.Spread) {
		for i, c := range cs {
			if c != nil {
				if msg := checkConstraint(c.Operand, c.LTarget, c.RTarget, false); msg != "" {
					add("%sconstraint %d: %s", where, i, msg)
				}
			}
		}
		for i, a := range as {
			if a == nil {
				continue
			}
			if msg := checkConstraint(a.Operand, a.LTarget, a.RTarget, true); msg != "" {
				add("%saffinity %d: %s", where, i, msg)
			}
			if a.Weight != nil && (*a.Weight == 0 || *a.Weight < -100 || *a.Weight > 100) {
				add("%saffinity %d: weight must be within [-100, 100] and not 0, got %d", where, i, *a.Weight)
			}
		}
		for i, s := range ss {
			if s != nil {
				for _, msg := range checkSpread(s) {
					add("%sspread %d: %s", where, i, msg)
				}
			}
		}
	}
	check("", j.Constraints, j.Affinities, j.Spreads)
	for _, tg := range j.TaskGroups {
		if tg == nil {
			continue
		}
		where := fmt.Sprintf("group %s: ", quoteName(stringValue(tg.Name)))
		check(where, tg.Constraints, tg.Affinities, tg.Spreads)
		if tg.EphemeralDisk != nil && tg.EphemeralDisk.SizeMB != nil && *tg.EphemeralDisk.SizeMB < 0 {
			add("%sephemeral_disk: size must not be negative", where)
		}
		ports := map[int]string{}
		labels := map[string]bool{}
		checkNetworks := func(where string, nets []*api.NetworkResource) {
			for _, n := range nets {
				if n == nil {
					continue
				}
				for _, p := range append(append([]api.Port(nil), n.ReservedPorts...), n.DynamicPorts...) {
					if labels[p.Label] {
						add("%snetwork: port label %s is used more than once", where, quoteName(p.Label))
					}
					labels[p.Label] = true
					if p.To < -1 || p.To > MaxPort {
						add("%snetwork: port %s: to must be within [-1, %d], got %d", where, quoteName(p.Label), MaxPort, p.To)
					}
				}
				for _, p := range n.ReservedPorts {
					if p.Value < 1 || p.Value > MaxPort {
						add("%snetwork: port %s: static must be within [1, %d], got %d", where, quoteName(p.Label), MaxPort, p.Value)
					} else if prev, dup := ports[p.Value]; dup {
						add("%snetwork: static port %d is asked for by both %s and %s", where, p.Value, quoteName(prev), quoteName(p.Label))
					} else {
						ports[p.Value] = p.Label
					}
				}
			}
		}
		checkNetworks(where, tg.Networks)
		for _, task := range tg.Tasks {
			if task == nil {
				continue
			}
			tw := fmt.Sprintf("%stask %s: ", where, quoteName(task.Name))
			check(tw, task.Constraints, task.Affinities, nil)
			if r := task.Resources; r != nil {
				if r.Cores != nil && *r.Cores < 0 {
					add("%sresources: cores must not be negative", tw)
				}
				if r.Cores != nil && *r.Cores > 0 && r.CPU != nil && *r.CPU > 0 {
					add("%sresources: ask for cpu or cores, not both", tw)
				}
				if r.MemoryMaxMB != nil && *r.MemoryMaxMB > 0 && r.MemoryMB != nil && *r.MemoryMaxMB < *r.MemoryMB {
					add("%sresources: memory_max (%d) must be at least memory (%d)", tw, *r.MemoryMaxMB, *r.MemoryMB)
				}
				checkNetworks(tw, r.Networks)
			}
		}
	}
	return msgs
}

// checkConstraint says what is wrong with one constraint or affinity, "" when nothing.
func checkConstraint(op, l, r string, affinity bool) string {
	if !constraintOperands[op] || affinity && (op == "distinct_hosts" || op == "distinct_property") {
		return fmt.Sprintf("unknown operand %s", quoteName(op))
	}
	if len(l) > maxTargetLength || len(r) > maxTargetLength {
		return fmt.Sprintf("attribute and value must be at most %d characters", maxTargetLength)
	}
	switch op {
	case "distinct_hosts":
		if _, err := strconv.ParseBool(r); r != "" && err != nil {
			return fmt.Sprintf("distinct_hosts value must be true or false, got %s", quoteName(r))
		}
		return ""
	case "distinct_property":
		if l == "" {
			return "distinct_property needs an attribute"
		}
		if n, err := strconv.Atoi(r); r != "" && (err != nil || n < 1) {
			return fmt.Sprintf("distinct_property value must be a positive count, got %s", quoteName(r))
		}
		return ""
	}
	if l == "" {
		return "missing attribute (LTarget)"
	}
	switch op {
	case "regexp":
		if _, err := regexp.Compile(r); err != nil {
			return fmt.Sprintf("invalid regexp %s: %v", quoteName(r), err)
		}
	case "version":
		if _, err := version.NewConstraint(r); err != nil {
			return fmt.Sprintf("invalid version constraint %s: %v", quoteName(r), err)
		}
	case "semver":
		if _, err := semver.NewConstraint(r); err != nil {
			return fmt.Sprintf("invalid semver constraint %s: %v", quoteName(r), err)
		}
	}
	return ""
}

func checkSpread(s *api.Spread) []string {
	var msgs []string
	if s.Attribute == "" {
		msgs = append(msgs, "missing attribute")
	} else if len(s.Attribute) > maxTargetLength {
		msgs = append(msgs, fmt.Sprintf("attribute must be at most %d characters", maxTargetLength))
	}
	if s.Weight != nil && (*s.Weight < 0 || *s.Weight > 100) {
		msgs = append(msgs, fmt.Sprintf("weight must be within [0, 100], got %d", *s.Weight))
	}
	total := 0
	seen := map[string]bool{}
	for i, t := range s.SpreadTarget {
		if t == nil {
			continue
		}
		if t.Percent > 100 {
			msgs = append(msgs, fmt.Sprintf("target %d: percent must be within [0, 100], got %d", i, t.Percent))
		}
		if seen[t.Value] {
			msgs = append(msgs, fmt.Sprintf("target %s is given more than once", quoteName(t.Value)))
		}
		seen[t.Value] = true
		total += int(t.Percent)
	}
	if total > 100 {
		msgs = append(msgs, fmt.Sprintf("targets' percentages must add up to at most 100, got %d", total))
	}
	return msgs
}
