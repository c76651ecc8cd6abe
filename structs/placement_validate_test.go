package structs

import (
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// Constraints, affinities, spreads and resources the scheduler could not honour are refused
// at register time with the place they are in, instead of a job that silently never runs.
func TestSecurity_PlacementValidated(t *testing.T) {
	con := func(l, op, r string) []*api.Constraint {
		return []*api.Constraint{{LTarget: l, Operand: op, RTarget: r}}
	}
	cases := []struct {
		name    string
		mutate  func(j *Job)
		wantErr string
	}{
		{name: "valid constraints", mutate: func(j *Job) {
			j.Constraints = append(con("${attr.kernel.name}", "=", "linux"), con("${attr.os.version}", "version", ">= 20.04")...)
			j.TaskGroups[0].Constraints = append(con("${meta.rack}", "regexp", "^r[0-9]+$"), &api.Constraint{Operand: "distinct_hosts", RTarget: "true"})
			j.TaskGroups[0].Tasks[0].Constraints = con("${meta.x}", "is_set", "")
		}},
		{name: "unknown operand", mutate: func(j *Job) { j.Constraints = con("${attr.kernel.name}", "resembles", "linux") },
			wantErr: `constraint 0: unknown operand "resembles"`},
		{name: "bad regexp in group", mutate: func(j *Job) { j.TaskGroups[0].Constraints = con("${meta.rack}", "regexp", "(") },
			wantErr: `group "g": constraint 0: invalid regexp "("`},
		{name: "bad version in task", mutate: func(j *Job) { j.TaskGroups[0].Tasks[0].Constraints = con("${attr.v}", "version", "~~1") },
			wantErr: `group "g": task "t": constraint 0: invalid version constraint "~~1"`},
		{name: "bad semver", mutate: func(j *Job) { j.Constraints = con("${attr.v}", "semver", "one") },
			wantErr: `constraint 0: invalid semver constraint "one"`},
		{name: "missing ltarget", mutate: func(j *Job) { j.Constraints = con("", "=", "x") },
			wantErr: "constraint 0: missing attribute (LTarget)"},
		{name: "distinct_property count", mutate: func(j *Job) { j.Constraints = con("${meta.rack}", "distinct_property", "0") },
			wantErr: `distinct_property value must be a positive count, got "0"`},
		{name: "distinct_hosts value", mutate: func(j *Job) { j.Constraints = con("", "distinct_hosts", "maybe") },
			wantErr: `distinct_hosts value must be true or false`},
		{name: "huge target", mutate: func(j *Job) { j.Constraints = con("${meta.a}", "regexp", strings.Repeat("a", 2000)) },
			wantErr: "at most 1024 characters"},
		{name: "affinity distinct", mutate: func(j *Job) {
			j.Affinities = []*api.Affinity{{LTarget: "${meta.a}", Operand: "distinct_hosts", Weight: new(int8(50))}}
		}, wantErr: `affinity 0: unknown operand "distinct_hosts"`},
		{name: "affinity weight", mutate: func(j *Job) {
			j.TaskGroups[0].Affinities = []*api.Affinity{{LTarget: "${meta.a}", Operand: "=", RTarget: "b", Weight: new(int8(120))}}
		}, wantErr: `group "g": affinity 0: weight must be within [-100, 100] and not 0, got 120`},
		{name: "spread over 100", mutate: func(j *Job) {
			j.Spreads = []*api.Spread{{Attribute: "${meta.rack}", SpreadTarget: []*api.SpreadTarget{{Value: "a", Percent: 70}, {Value: "b", Percent: 40}}}}
		}, wantErr: "spread 0: targets' percentages must add up to at most 100, got 110"},
		{name: "spread percent", mutate: func(j *Job) {
			j.TaskGroups[0].Spreads = []*api.Spread{{Attribute: "${meta.rack}", SpreadTarget: []*api.SpreadTarget{{Value: "a", Percent: 200}}}}
		}, wantErr: `group "g": spread 0: target 0: percent must be within [0, 100], got 200`},
		{name: "spread attribute", mutate: func(j *Job) { j.Spreads = []*api.Spread{{}} }, wantErr: "spread 0: missing attribute"},
		{name: "memory_max below memory", mutate: func(j *Job) {
			j.TaskGroups[0].Tasks[0].Resources = &api.Resources{MemoryMB: new(500), MemoryMaxMB: new(100)}
		}, wantErr: `task "t": resources: memory_max (100) must be at least memory (500)`},
		{name: "cpu and cores", mutate: func(j *Job) {
			j.TaskGroups[0].Tasks[0].Resources = &api.Resources{CPU: new(500), Cores: new(2)}
		}, wantErr: "resources: ask for cpu or cores, not both"},
		{name: "static port range", mutate: func(j *Job) {
			j.TaskGroups[0].Networks = []*api.NetworkResource{{ReservedPorts: []api.Port{{Label: "http", Value: 70000}}}}
		}, wantErr: `group "g": network: port "http": static must be within [1, 65535], got 70000`},
		{name: "duplicate static port", mutate: func(j *Job) {
			j.TaskGroups[0].Networks = []*api.NetworkResource{{ReservedPorts: []api.Port{{Label: "a", Value: 80}, {Label: "b", Value: 80}}}}
		}, wantErr: `static port 80 is asked for by both "a" and "b"`},
		{name: "duplicate label", mutate: func(j *Job) {
			j.TaskGroups[0].Networks = []*api.NetworkResource{{DynamicPorts: []api.Port{{Label: "a"}, {Label: "a"}}}}
		}, wantErr: `port label "a" is used more than once`},
		{name: "negative disk", mutate: func(j *Job) { j.TaskGroups[0].EphemeralDisk = &api.EphemeralDisk{SizeMB: new(-1)} },
			wantErr: "ephemeral_disk: size must not be negative"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := validJob()
			tc.mutate(j)
			err := j.Validate()
			if tc.wantErr == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, tc.wantErr)
		})
	}
}
