package authmethod

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/go-bexpr"
	"github.com/nomadfork/nomad/structs"
)

// Vars are the selector variables of one login: value.<name> for each ClaimMappings entry,
// list.<name> for each ListClaimMappings entry.
type Vars struct {
	Value map[string]string   `bexpr:"value"`
	List  map[string][]string `bexpr:"list"`
}

// MapClaims maps a token's claims through the method's claim mappings. A mapping's key is a
// claim name or, starting with "/", a JSON pointer into nested claims. A claim that is
// missing or null maps to nothing; one of the wrong shape is an error.
func MapClaims(cfg *structs.ACLAuthMethodConfig, claims map[string]any) (*Vars, error) {
	vars := &Vars{Value: map[string]string{}, List: map[string][]string{}}
	if cfg == nil {
		return vars, nil
	}
	for claim, name := range cfg.ClaimMappings {
		raw, ok := lookupClaim(claims, claim)
		if !ok {
			continue
		}
		s, ok := scalarString(raw)
		if !ok {
			return nil, fmt.Errorf("claim %q mapped to value.%s is not a string, number or bool", claim, name)
		}
		vars.Value[name] = s
	}
	for claim, name := range cfg.ListClaimMappings {
		raw, ok := lookupClaim(claims, claim)
		if !ok {
			continue
		}
		items, ok := raw.([]any)
		if !ok {
			if s, scalar := scalarString(raw); scalar {
				vars.List[name] = []string{s}
				continue
			}
			return nil, fmt.Errorf("claim %q mapped to list.%s is not a list", claim, name)
		}
		out := make([]string, 0, len(items))
		for _, it := range items {
			s, ok := scalarString(it)
			if !ok {
				return nil, fmt.Errorf("claim %q mapped to list.%s holds a value that is not a string, number or bool", claim, name)
			}
			out = append(out, s)
		}
		vars.List[name] = out
	}
	return vars, nil
}

func lookupClaim(claims map[string]any, key string) (any, bool) {
	if !strings.HasPrefix(key, "/") {
		v, ok := claims[key]
		return v, ok && v != nil
	}
	var cur any = claims
	for _, part := range strings.Split(key[1:], "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, cur != nil
}

func scalarString(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true
	}
	return "", false
}

// Result is what a login's token gets: management, or client with policies and role names.
type Result struct {
	Management bool
	Policies   []string
	Roles      []string
}

// Empty reports that no rule bound anything.
func (r *Result) Empty() bool { return !r.Management && len(r.Policies) == 0 && len(r.Roles) == 0 }

// Bind evaluates the binding rules against the login's variables. A rule whose selector does
// not match, or whose BindName names a variable the login lacks, binds nothing.
func Bind(rules []*structs.ACLBindingRule, vars *Vars) (*Result, error) {
	res := &Result{}
	seen := map[string]bool{}
	for _, rule := range rules {
		if rule.Selector != "" {
			eval, err := bexpr.CreateEvaluator(rule.Selector)
			if err != nil {
				return nil, fmt.Errorf("binding rule %s: invalid Selector: %w", rule.ID, err)
			}
			ok, err := eval.Evaluate(vars)
			if err != nil || !ok {
				continue
			}
		}
		switch rule.BindType {
		case structs.ACLBindingRuleBindTypeManagement:
			res.Management = true
		case structs.ACLBindingRuleBindTypeRole, structs.ACLBindingRuleBindTypePolicy:
			name, ok := InterpolateBindName(rule.BindName, vars)
			if !ok || name == "" {
				continue
			}
			key := rule.BindType + "\x00" + name
			if seen[key] {
				continue
			}
			seen[key] = true
			if rule.BindType == structs.ACLBindingRuleBindTypeRole {
				res.Roles = append(res.Roles, name)
			} else {
				res.Policies = append(res.Policies, name)
			}
		}
	}
	return res, nil
}

var bindVarRe = regexp.MustCompile(`\$\{([^}]*)\}`)

// InterpolateBindName fills ${value.<name>} references; false when one names a variable the
// login does not have, or is not of that form.
func InterpolateBindName(name string, vars *Vars) (string, bool) {
	ok := true
	out := bindVarRe.ReplaceAllStringFunc(name, func(ref string) string {
		v := strings.TrimSpace(ref[2 : len(ref)-1])
		key, found := strings.CutPrefix(v, "value.")
		if !found {
			ok = false
			return ""
		}
		s, present := vars.Value[key]
		if !present {
			ok = false
		}
		return s
	})
	return out, ok
}
