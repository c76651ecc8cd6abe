package execdriver

import (
	"testing"

	"github.com/shoenig/test/must"
)

func TestSecurity_ExecTaskCaps(t *testing.T) {
	defaults := append([]string(nil), DefaultCaps...)
	without := func(drop ...string) []string {
		var out []string
		for _, c := range defaults {
			keep := true
			for _, d := range drop {
				keep = keep && c != d
			}
			if keep {
				out = append(out, c)
			}
		}
		return out
	}
	with := func(add ...string) []string {
		s := capSet{}
		for _, c := range append(append([]string(nil), defaults...), add...) {
			s[c] = true
		}
		return s.sorted()
	}
	cases := []struct {
		name   string
		allow  []string
		add    []string
		drop   []string
		want   []string
		errHas string
	}{
		{name: "defaults", allow: DefaultCaps, want: defaults},
		{name: "drop one", allow: DefaultCaps, drop: []string{"CAP_CHOWN"}, want: without("chown")},
		{name: "drop all", allow: DefaultCaps, drop: []string{"all"}, want: []string{}},
		{name: "drop all then add one", allow: DefaultCaps, drop: []string{"ALL"}, add: []string{"net_bind_service"}, want: []string{"net_bind_service"}},
		{name: "add one allowed", allow: append([]string{"net_raw"}, DefaultCaps...), add: []string{"net_raw"}, want: with("net_raw")},
		{name: "add one not allowed", allow: DefaultCaps, add: []string{"sys_admin"}, errHas: `cap_add: capability "sys_admin" is not allowed by the exec driver's allow_caps`},
		{name: "add with the CAP_ prefix", allow: []string{"all"}, add: []string{"CAP_SYS_PTRACE"}, want: with("sys_ptrace")},
		{name: "a narrower allow_caps narrows the defaults", allow: []string{"chown", "kill"}, want: []string{"chown", "kill"}},
		{name: "an empty allow_caps allows nothing", allow: []string{}, want: []string{}},
		{name: "add all is what allow_caps allows", allow: []string{"chown", "net_raw"}, add: []string{"all"}, want: []string{"chown", "net_raw"}},
		{name: "unknown capability to add", allow: DefaultCaps, add: []string{"fly"}, errHas: `cap_add: unknown capability "fly"`},
		{name: "unknown capability to drop", allow: DefaultCaps, drop: []string{"cap_fly"}, errHas: `cap_drop: unknown capability "cap_fly"`},
	}
	t.Run("the defaults hold no way out", func(t *testing.T) {
		allow, err := parseCaps("allow_caps", DefaultCaps)
		must.NoError(t, err)
		got, err := taskCaps(allow, nil, nil)
		must.NoError(t, err)
		for _, c := range []string{"sys_admin", "sys_module", "sys_ptrace", "sys_rawio", "sys_boot", "net_admin", "sys_time", "net_raw", "dac_read_search", "bpf", "sys_resource", "syslog"} {
			must.MapNotContainsKey(t, got, c)
		}
	})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			allow, err := parseCaps("allow_caps", tc.allow)
			must.NoError(t, err)
			got, err := taskCaps(allow, tc.add, tc.drop)
			if tc.errHas != "" {
				must.ErrorContains(t, err, tc.errHas)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.want, got.sorted())
		})
	}
}

func TestExecDriver_PluginOptions(t *testing.T) {
	cases := []struct {
		name     string
		raw      map[string]any
		want     []string
		warnings int
		errHas   string
	}{
		{name: "unset", raw: nil, want: nil},
		{name: "allow_caps", raw: map[string]any{"allow_caps": []any{"chown", "net_raw"}}, want: []string{"chown", "net_raw"}},
		{name: "empty allow_caps allows nothing", raw: map[string]any{"allow_caps": []any{}}, want: []string{}},
		{name: "unknown capability", raw: map[string]any{"allow_caps": []any{"fly"}}, errHas: `allow_caps: unknown capability "fly"`},
		{name: "unsupported key is a warning", raw: map[string]any{"no_pivot_root": true}, warnings: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, warnings, err := PluginOptions(tc.raw)
			if tc.errHas != "" {
				must.ErrorContains(t, err, tc.errHas)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.want, o.AllowCaps)
			must.Len(t, tc.warnings, warnings)
		})
	}
}
