package structs

import (
	"fmt"
	"maps"
	"reflect"

	"github.com/hashicorp/nomad/api"
)

// Scaling policies are derived from the `scaling` blocks of jobs' task groups: the job write
// that adds, changes or removes a block writes the policy rows in the same transaction, and
// purging the job deletes them. Their IDs are fixed by the leader before the write
// (AssignScalingPolicyIDs), so every server derives the same rows.

// ScalingPolicyTypeHorizontal scales a group's count; the only type a group block makes.
const ScalingPolicyTypeHorizontal = "horizontal"

// Target keys, as upstream names them.
const (
	ScalingTargetNamespace = "Namespace"
	ScalingTargetJob       = "Job"
	ScalingTargetGroup     = "Group"
)

// ScalingPolicy is one stored policy.
type ScalingPolicy struct {
	ID          string
	Type        string
	Namespace   string
	JobID       string
	Group       string
	Target      map[string]string
	Min         int64
	Max         *int64
	Policy      map[string]any
	Enabled     bool
	CreateIndex uint64
	ModifyIndex uint64
}

// SameSpec reports whether two rows say the same thing, indexes aside.
func (p *ScalingPolicy) SameSpec(o *ScalingPolicy) bool {
	a, b := *p, *o
	a.CreateIndex, a.ModifyIndex, b.CreateIndex, b.ModifyIndex = 0, 0, 0, 0
	return reflect.DeepEqual(a, b)
}

// Stub is the list form.
func (p *ScalingPolicy) Stub() *ScalingPolicyListStub {
	return &ScalingPolicyListStub{ID: p.ID, Enabled: p.Enabled, Type: p.Type, Target: maps.Clone(p.Target),
		CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex}
}

// ScalingPolicyListStub is the wire shape of api.ScalingPolicyListStub.
type ScalingPolicyListStub struct {
	ID          string
	Enabled     bool
	Type        string
	Target      map[string]string
	CreateIndex uint64
	ModifyIndex uint64
}

// JobScalingPolicies derives the policy rows of a job's task groups. A stopped job's
// policies are disabled, so an autoscaler leaves it alone. IDs come from the groups' blocks
// (set by the leader); a block without one gets none here and must not be stored.
func JobScalingPolicies(j *Job) []*ScalingPolicy {
	var out []*ScalingPolicy
	for _, tg := range j.TaskGroups {
		if tg == nil || tg.Scaling == nil || tg.Name == nil {
			continue
		}
		s := tg.Scaling
		p := &ScalingPolicy{
			ID: s.ID, Type: s.Type, Namespace: j.Namespace, JobID: j.ID, Group: *tg.Name,
			Target: map[string]string{
				ScalingTargetNamespace: j.Namespace, ScalingTargetJob: j.ID, ScalingTargetGroup: *tg.Name,
			},
			Max: s.Max, Policy: s.Policy, Enabled: !j.Stop,
		}
		if p.Type == "" {
			p.Type = ScalingPolicyTypeHorizontal
		}
		if s.Enabled != nil && !*s.Enabled {
			p.Enabled = false
		}
		switch {
		case s.Min != nil:
			p.Min = *s.Min
		case tg.Count != nil:
			p.Min = int64(*tg.Count)
		}
		out = append(out, p)
	}
	return out
}

// ScalingPolicyListRequest lists policies; Job and Type filter.
type ScalingPolicyListRequest struct {
	Job  string
	Type string
	QueryOptions
}

// ScalingPolicyListResponse answers ScalingPolicyListRequest.
type ScalingPolicyListResponse struct {
	Policies []*ScalingPolicyListStub
	QueryMeta
}

// ScalingPolicySpecificRequest reads one policy by ID.
type ScalingPolicySpecificRequest struct {
	ID string
	QueryOptions
}

// SingleScalingPolicyResponse answers ScalingPolicySpecificRequest; Policy is nil when unknown.
type SingleScalingPolicyResponse struct {
	Policy *ScalingPolicy
	QueryMeta
}

// scalingProblems checks a group's scaling block as upstream does: a maximum is required,
// 0 <= min <= max, and the group's count within them.
func scalingProblems(tg *api.TaskGroup) []string {
	s := tg.Scaling
	if s == nil {
		return nil
	}
	var out []string
	if s.Type != "" && s.Type != ScalingPolicyTypeHorizontal {
		out = append(out, fmt.Sprintf("type %q is not supported (only %q)", s.Type, ScalingPolicyTypeHorizontal))
	}
	if s.Max == nil {
		out = append(out, "max must be specified")
	} else if *s.Max < 0 {
		out = append(out, "max must not be negative")
	}
	if s.Min != nil && *s.Min < 0 {
		out = append(out, "min must not be negative")
	}
	if s.Min != nil && s.Max != nil && *s.Min > *s.Max {
		out = append(out, fmt.Sprintf("min %d is greater than max %d", *s.Min, *s.Max))
	}
	if tg.Count != nil {
		count := int64(*tg.Count)
		if s.Max != nil && count > *s.Max {
			out = append(out, fmt.Sprintf("count %d is greater than max %d", count, *s.Max))
		}
		if s.Min != nil && count < *s.Min {
			out = append(out, fmt.Sprintf("count %d is less than min %d", count, *s.Min))
		}
	}
	return out
}
