package scheduler

import (
	"testing"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func TestConstraints_Operands(t *testing.T) {
	n := &structs.Node{ID: "n1", Name: "box", Datacenter: "dc1", NodeClass: "fast", NodePool: "default",
		Attributes: map[string]string{
			"kernel.name": "linux", "kernel.version": "6.1.0", "cpu.numcores": "8",
			"driver.docker.version": "24.0.7", "os.version": "22.04", "tags": "a,b,c",
		},
		Meta: map[string]string{"rack": "r1"},
	}
	cases := []struct {
		name        string
		op, l, r    string
		wantMatched bool
	}{
		{name: "equal attr", op: "=", l: "${attr.kernel.name}", r: "linux", wantMatched: true},
		{name: "equal other", op: "=", l: "${attr.kernel.name}", r: "plan9"},
		{name: "empty operand is equal", op: "", l: "${attr.kernel.name}", r: "linux", wantMatched: true},
		{name: "double equal", op: "==", l: "${meta.rack}", r: "r1", wantMatched: true},
		{name: "is", op: "is", l: "${node.datacenter}", r: "dc1", wantMatched: true},
		{name: "not equal", op: "!=", l: "${node.class}", r: "slow", wantMatched: true},
		{name: "not equal same", op: "not", l: "${node.class}", r: "fast"},
		{name: "not equal unset", op: "!=", l: "${meta.zone}", r: "z1", wantMatched: true},
		{name: "equal unset", op: "=", l: "${meta.zone}", r: ""},
		{name: "numeric less", op: "<", l: "${attr.cpu.numcores}", r: "10", wantMatched: true},
		{name: "numeric not lexical", op: ">", l: "${attr.cpu.numcores}", r: "10"},
		{name: "less equal", op: "<=", l: "${attr.cpu.numcores}", r: "8", wantMatched: true},
		{name: "greater equal", op: ">=", l: "${attr.cpu.numcores}", r: "9"},
		{name: "lexical", op: "<", l: "${node.unique.name}", r: "car", wantMatched: true},
		{name: "order unset", op: "<", l: "${meta.zone}", r: "z"},
		{name: "regexp", op: "regexp", l: "${attr.kernel.version}", r: `^6\.\d+`, wantMatched: true},
		{name: "regexp miss", op: "regexp", l: "${attr.kernel.version}", r: `^5\.`},
		{name: "bad regexp never matches", op: "regexp", l: "${attr.kernel.version}", r: `(`},
		{name: "version", op: "version", l: "${attr.driver.docker.version}", r: ">= 20.10, < 25", wantMatched: true},
		{name: "version miss", op: "version", l: "${attr.driver.docker.version}", r: "< 24"},
		{name: "version two parts", op: "version", l: "${attr.os.version}", r: ">= 20.04", wantMatched: true},
		{name: "bad version never matches", op: "version", l: "${attr.driver.docker.version}", r: "~~1"},
		{name: "semver", op: "semver", l: "${attr.driver.docker.version}", r: ">= 24.0.0", wantMatched: true},
		{name: "semver strict", op: "semver", l: "${attr.os.version}", r: ">= 20.0.0"},
		{name: "set_contains", op: "set_contains", l: "${attr.tags}", r: "a,c", wantMatched: true},
		{name: "set_contains missing one", op: "set_contains", l: "${attr.tags}", r: "a,d"},
		{name: "set_contains_all", op: "set_contains_all", l: "${attr.tags}", r: "b", wantMatched: true},
		{name: "set_contains_any", op: "set_contains_any", l: "${attr.tags}", r: "x,c", wantMatched: true},
		{name: "set_contains_any none", op: "set_contains_any", l: "${attr.tags}", r: "x,y"},
		{name: "is_set", op: "is_set", l: "${meta.rack}", wantMatched: true},
		{name: "is_set unset", op: "is_set", l: "${meta.zone}"},
		{name: "is_not_set", op: "is_not_set", l: "${meta.zone}", wantMatched: true},
		{name: "node id", op: "=", l: "${node.unique.id}", r: "n1", wantMatched: true},
		{name: "node pool", op: "=", l: "${node.pool}", r: "default", wantMatched: true},
		{name: "unknown variable", op: "=", l: "${foo.bar}", r: ""},
		{name: "unknown operand", op: "resembles", l: "${attr.kernel.name}", r: "linux"},
	}
	m := newMatcher()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.wantMatched, m.matches(tc.op, tc.l, tc.r, n))
		})
	}
}
