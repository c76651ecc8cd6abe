package jobspec

import (
	"fmt"
	"reflect"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/nomad/api"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// hook adjusts the tag-driven decoding of one api struct where the HCL a
// user writes differs from the struct's shape. Everything not listed here
// is decoded from the tags alone.
type hook struct {
	// hidden are tagged names that are not part of the HCL language
	// (server-owned or derived fields); writing them is an error.
	hidden []string
	// extraAttrs and extraBlocks are accepted in addition to the tagged
	// fields and handed to after.
	extraAttrs  []hcl.AttributeSchema
	extraBlocks []hcl.BlockHeaderSchema
	// after runs once the tagged fields are decoded; dst is a pointer to
	// the struct (e.g. *api.Task).
	after func(x *extras, dst any) hcl.Diagnostics
}

func (h *hook) hasExtraBlock(typ string) bool {
	if h == nil {
		return false
	}
	for _, b := range h.extraBlocks {
		if b.Type == typ {
			return true
		}
	}
	return false
}

// extras is what a hook's after function receives.
type extras struct {
	attrs  hcl.Attributes
	blocks []*block
	ctx    *hcl.EvalContext
	body   hcl.Body
}

var hooks map[reflect.Type]*hook

// Filled in init because the task hook decodes nested blocks, which reads
// hooks again.
func init() {
	hooks = map[reflect.Type]*hook{
		// The job's ID is its block label. A task written directly in the job is
		// shorthand for a group of its own name holding just that task, as upstream
		// reads it.
		reflect.TypeFor[api.Job](): {
			hidden:      []string{"id"},
			extraBlocks: []hcl.BlockHeaderSchema{{Type: "task", LabelNames: []string{"name"}}},
			after:       wrapJobTasks,
		},

		reflect.TypeFor[api.Constraint](): {
			extraAttrs: shorthandSchema(constraintShorthands),
			after: func(x *extras, dst any) hcl.Diagnostics {
				c := dst.(*api.Constraint)
				diags := applyShorthand(x, constraintShorthands, &c.Operand, &c.LTarget, &c.RTarget)
				if c.Operand == "" {
					c.Operand = "="
				}
				return diags
			},
		},

		// The defaults below are filled at parse time, as upstream's parser fills them, so
		// that `job run -output` renders the same JSON and tools diffing it see no change.
		reflect.TypeFor[api.Template](): {after: func(_ *extras, dst any) hcl.Diagnostics {
			t := dst.(*api.Template)
			setDefault(&t.ChangeMode, "restart")
			setDefault(&t.Splay, 5*time.Second)
			setDefault(&t.Perms, "0644")
			return nil
		}},
		reflect.TypeFor[api.PeriodicConfig](): {after: func(_ *extras, dst any) hcl.Diagnostics {
			setDefault(&dst.(*api.PeriodicConfig).SpecType, "cron")
			return nil
		}},
		reflect.TypeFor[api.Vault](): {after: func(_ *extras, dst any) hcl.Diagnostics {
			v := dst.(*api.Vault)
			setDefault(&v.ChangeMode, "restart")
			setDefault(&v.Env, true)
			return nil
		}},
		// A task's scaling "cpu"/"mem" blocks set their vertical type after this runs.
		reflect.TypeFor[api.ScalingPolicy](): {after: func(_ *extras, dst any) hcl.Diagnostics {
			if p := dst.(*api.ScalingPolicy); p.Type == "" {
				p.Type = "horizontal"
			}
			return nil
		}},
		reflect.TypeFor[api.Affinity](): {
			extraAttrs: shorthandSchema(affinityShorthands),
			after: func(x *extras, dst any) hcl.Diagnostics {
				a := dst.(*api.Affinity)
				return applyShorthand(x, affinityShorthands, &a.Operand, &a.LTarget, &a.RTarget)
			},
		},

		reflect.TypeFor[api.Task](): {
			hidden:      []string{"scaling"},
			extraBlocks: []hcl.BlockHeaderSchema{{Type: "scaling", LabelNames: []string{"resource"}}},
			after:       finishTask,
		},

		// Users write every port as `port "label" {}`; the api splits
		// them by whether a static value was asked for.
		reflect.TypeFor[api.NetworkResource](): {
			hidden: []string{"reserved_ports"},
			after: func(_ *extras, dst any) hcl.Diagnostics {
				n := dst.(*api.NetworkResource)
				var dynamic []api.Port
				for _, p := range n.DynamicPorts {
					if p.Value != 0 {
						n.ReservedPorts = append(n.ReservedPorts, p)
					} else {
						dynamic = append(dynamic, p)
					}
				}
				n.DynamicPorts = dynamic
				return nil
			},
		},
	}
}

// Operator shorthands: `version = ">= 1.2"` means operator "version" with
// that value. distinct_hosts takes a bool, distinct_property names the
// attribute (left-hand side) to keep distinct.
var (
	constraintShorthands = []string{
		"distinct_hosts", "distinct_property", "regexp", "semver",
		"set_contains", "set_contains_all", "set_contains_any", "version",
	}
	affinityShorthands = []string{
		"regexp", "semver", "set_contains_all", "set_contains_any", "version",
	}
)

func shorthandSchema(names []string) []hcl.AttributeSchema {
	out := make([]hcl.AttributeSchema, len(names))
	for i, n := range names {
		out[i] = hcl.AttributeSchema{Name: n}
	}
	return out
}

func applyShorthand(x *extras, names []string, operand, ltarget, rtarget *string) hcl.Diagnostics {
	var set []*hcl.Attribute
	for _, n := range names {
		if attr, ok := x.attrs[n]; ok {
			set = append(set, attr)
		}
	}
	if len(set) == 0 {
		return nil
	}
	attr := set[0]
	if len(set) > 1 || *operand != "" {
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Conflicting operators",
			Detail:   fmt.Sprintf("%q already sets the operator; use either it or operator, once.", attr.Name),
			Subject:  set[len(set)-1].NameRange.Ptr(),
		}}
	}

	val, diags := attr.Expr.Value(x.ctx)
	if diags.HasErrors() {
		return diags
	}
	if attr.Name == "distinct_hosts" {
		b, err := convert.Convert(val, cty.Bool)
		if err != nil || b.IsNull() {
			return append(diags, invalidShorthand(attr, "true or false"))
		}
		if b.True() {
			*operand = "distinct_hosts"
		}
		return diags
	}

	s, err := convert.Convert(val, cty.String)
	if err != nil || s.IsNull() {
		return append(diags, invalidShorthand(attr, "a string"))
	}
	target := rtarget
	if attr.Name == "distinct_property" {
		target = ltarget
	}
	if *target != "" {
		return append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Conflicting arguments",
			Detail:   fmt.Sprintf("%q sets the same field as attribute/value; remove one.", attr.Name),
			Subject:  attr.NameRange.Ptr(),
		})
	}
	*operand, *target = attr.Name, s.AsString()
	return diags
}

func invalidShorthand(attr *hcl.Attribute, want string) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Invalid value",
		Detail:   fmt.Sprintf("%q must be %s.", attr.Name, want),
		Subject:  attr.Expr.Range().Ptr(),
	}
}

// verticalScaling maps the label of a task `scaling "cpu" {}` block to the
// policy type Nomad uses for it.
var verticalScaling = map[string]string{
	"cpu": "vertical_cpu",
	"mem": "vertical_mem",
}

func finishTask(x *extras, dst any) hcl.Diagnostics {
	t := dst.(*api.Task)
	var diags hcl.Diagnostics

	seen := map[string]bool{}
	for _, b := range x.blocks {
		typ, ok := verticalScaling[b.Labels[0]]
		if !ok || seen[typ] {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid scaling block",
				Detail:   `A task may have one scaling "cpu" and one scaling "mem" block.`,
				Subject:  b.DefRange.Ptr(),
			})
			continue
		}
		seen[typ] = true
		p := &api.ScalingPolicy{}
		diags = append(diags, decodeBody(b.Body, b.ctx, reflect.ValueOf(p).Elem())...)
		p.Type = typ
		t.ScalingPolicies = append(t.ScalingPolicies, p)
	}

	// An identity block without a name is the task's default workload
	// identity (api.Task.Identity); named ones are extra identities.
	var named []*api.WorkloadIdentity
	for _, id := range t.Identities {
		if id.Name != "" {
			named = append(named, id)
			continue
		}
		if t.Identity != nil {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Duplicate default identity",
				Detail:   "Only one identity block without a name is allowed in a task.",
				Subject:  x.body.MissingItemRange().Ptr(),
			})
			continue
		}
		t.Identity = id
	}
	t.Identities = named
	return diags
}

func setDefault[T any](field **T, value T) {
	if *field == nil {
		*field = &value
	}
}

func wrapJobTasks(x *extras, dst any) hcl.Diagnostics {
	job := dst.(*api.Job)
	var diags hcl.Diagnostics
	for _, b := range x.blocks {
		task := &api.Task{}
		if d := decodeBlockInto(b, reflect.ValueOf(&task).Elem()); d.HasErrors() {
			diags = append(diags, d...)
			continue
		}
		name := task.Name
		job.TaskGroups = append(job.TaskGroups, &api.TaskGroup{Name: &name, Tasks: []*api.Task{task}})
	}
	return diags
}
