package execdriver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nomadfork/nomad/client/drivers"
	"github.com/shoenig/test/must"
)

// TestCgroup_Limits checks the files written for each hierarchy on a fake cgroup tree (the
// kernel's own is exercised by the tests that run tasks).
func TestCgroup_Limits(t *testing.T) {
	cases := []struct {
		name  string
		mode  cgroupMode
		res   drivers.TaskResources
		files map[string]string // path under the fake root -> content; "" must not exist
	}{
		{
			name: "v2 memory is the hard limit",
			mode: cgroupV2, res: drivers.TaskResources{MemoryMB: 256, CPU: 500},
			files: map[string]string{
				"cgroup.subtree_control":             "+memory +cpu +pids",
				"nomad.slice/cgroup.subtree_control": "+memory +cpu +pids",
				"nomad.slice/a1.web/memory.max":      "268435456",
				"nomad.slice/a1.web/memory.low":      "",
				"nomad.slice/a1.web/cpu.weight":      "19",
				"nomad.slice/a1.web/cgroup.procs":    "",
				"nomad.slice/a1.web/memory.swap.max": "",
			},
		},
		{
			name: "v2 memory_max is the hard limit, memory the protected amount",
			mode: cgroupV2, res: drivers.TaskResources{MemoryMB: 128, MemoryMaxMB: 512},
			files: map[string]string{
				"nomad.slice/a1.web/memory.max": "536870912",
				"nomad.slice/a1.web/memory.low": "134217728",
				"nomad.slice/a1.web/cpu.weight": "",
			},
		},
		{
			name: "v1 memory is the hard limit",
			mode: cgroupV1, res: drivers.TaskResources{MemoryMB: 256, CPU: 500},
			files: map[string]string{
				"memory/nomad/a1.web/memory.limit_in_bytes":      "268435456",
				"memory/nomad/a1.web/memory.soft_limit_in_bytes": "",
				"cpu/nomad/a1.web/cpu.shares":                    "500",
				"pids/nomad/a1.web/cgroup.procs":                 "",
			},
		},
		{
			name: "v1 memory_max is the hard limit, memory the soft one",
			mode: cgroupV1, res: drivers.TaskResources{MemoryMB: 128, MemoryMaxMB: 512, CPU: 1},
			files: map[string]string{
				"memory/nomad/a1.web/memory.limit_in_bytes":      "536870912",
				"memory/nomad/a1.web/memory.soft_limit_in_bytes": "134217728",
				"cpu/nomad/a1.web/cpu.shares":                    "2",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			h := &cgroupHost{mode: tc.mode, root: root, v1: map[string]string{}}
			for _, c := range v1Controllers {
				h.v1[c] = filepath.Join(root, c)
			}
			cg, err := h.create(cgroupName("a1", "web"), tc.res)
			must.NoError(t, err)
			for rel, want := range tc.files {
				got, err := os.ReadFile(filepath.Join(root, rel))
				if want == "" {
					must.ErrorIs(t, err, os.ErrNotExist, must.Sprintf("%s is not written", rel))
					continue
				}
				must.NoError(t, err)
				must.Eq(t, want, string(got), must.Sprint(rel))
			}
			must.StrContains(t, cg.Path(), "a1.web")
			if tc.mode == cgroupV1 {
				must.Eq(t, filepath.Join(root, "memory", "nomad", "a1.web"), cg.Path())
				must.Len(t, 3, cg.procsFiles())
			}
		})
	}
}

func TestCgroup_OOMKillCount(t *testing.T) {
	cases := []struct {
		name    string
		mode    cgroupMode
		file    string
		content string
		want    int
	}{
		{name: "v1 killed", mode: cgroupV1, file: "memory.oom_control", content: "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n", want: 2},
		{name: "v1 not killed", mode: cgroupV1, file: "memory.oom_control", content: "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n"},
		{name: "v2 killed", mode: cgroupV2, file: "memory.events", content: "low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\noom_group_kill 0\n", want: 1},
		{name: "no file", mode: cgroupV2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.file != "" {
				must.NoError(t, os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.content), 0o644))
			}
			cg := &taskCgroup{mode: tc.mode, dirs: []string{dir}}
			must.Eq(t, tc.want, cg.oomKills())
		})
	}
}

func TestCgroup_CPUWeight(t *testing.T) {
	for shares, want := range map[uint64]uint64{2: 1, 1024: 39, 262144: 10000} {
		must.Eq(t, want, cpuWeight(shares), must.Sprintf("shares %d", shares))
	}
	must.Eq(t, 2, cpuShares(0))
	must.Eq(t, 262144, cpuShares(1<<30))
}

func TestCgroup_NameMustBeOneElement(t *testing.T) {
	h := &cgroupHost{mode: cgroupV2, root: t.TempDir()}
	for _, name := range []string{"", "..", "a/b"} {
		_, err := h.create(name, drivers.TaskResources{})
		must.Error(t, err)
		must.True(t, strings.Contains(err.Error(), "one path element"))
	}
}

// TestCgroup_ControllersAlreadyEnabled: a v2 root whose children have the controllers
// already is not written to (a container's root cgroup with processes refuses the write).
func TestCgroup_ControllersAlreadyEnabled(t *testing.T) {
	root := t.TempDir()
	must.NoError(t, os.WriteFile(filepath.Join(root, "cgroup.subtree_control"), []byte("cpuset cpu io memory pids\n"), 0o644))
	h := &cgroupHost{mode: cgroupV2, root: root}
	_, err := h.create(cgroupName("a1", "web"), drivers.TaskResources{MemoryMB: 64})
	must.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(root, "cgroup.subtree_control"))
	must.NoError(t, err)
	must.Eq(t, "cpuset cpu io memory pids\n", string(got))
	got, err = os.ReadFile(filepath.Join(root, "nomad.slice", "cgroup.subtree_control"))
	must.NoError(t, err)
	must.Eq(t, "+memory +cpu +pids", string(got))
}
