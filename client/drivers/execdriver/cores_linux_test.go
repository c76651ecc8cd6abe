package execdriver

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nomadfork/nomad/client/drivers"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

func TestParseCPUList(t *testing.T) {
	cases := []struct {
		in   string
		want []int
		err  bool
	}{
		{in: "0-3,6\n", want: []int{0, 1, 2, 3, 6}},
		{in: "1", want: []int{1}},
		{in: "", want: nil},
		{in: "a-b", err: true},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseCPUList(tc.in)
			if tc.err {
				must.Error(t, err)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.want, got)
		})
	}
}

// TestExecDriver_Cores pins each task asking for a core to one no other task holds, and
// refuses a task when none is free; a core comes back when its task ends.
func TestExecDriver_Cores(t *testing.T) {
	requireIsolation(t)
	d := New(Options{})
	host, err := d.host()
	must.NoError(t, err)
	all, err := host.hostCores()
	must.NoError(t, err)

	script := `grep Cpus_allowed_list /proc/self/status | tr -d '\t'; exec sleep 300`
	var handles []drivers.TaskHandle
	seen := map[string]bool{}
	for i := range all {
		cfg := testTask(t, map[string]any{"command": "/bin/sh", "args": []any{"-c", script}})
		cfg.TaskName = "web" + string(rune('a'+i))
		cfg.Resources.Cores = 1
		h, err := d.Start(cfg)
		must.NoError(t, err)
		handles = append(handles, h)
		t.Cleanup(func() {
			_ = h.Kill(0)
			<-h.WaitCh()
		})
		waitForFileHas(t, cfg.StdoutPath, "Cpus_allowed_list:")
		line := readFile(t, cfg.StdoutPath)
		must.False(t, seen[line], must.Sprintf("core %q given twice", line))
		seen[line] = true
		must.StrNotContains(t, line, ",")
		must.StrNotContains(t, line, "-")
	}
	// Every core is held: one more is refused, with why.
	cfg := testTask(t, map[string]any{"command": "/bin/true"})
	cfg.TaskName = "extra"
	cfg.Resources.Cores = 1
	_, err = d.Start(cfg)
	must.ErrorContains(t, err, "resources.cores = 1, but only 0 of the node's")

	// One ends: its core is free again.
	must.NoError(t, handles[0].Kill(0))
	select {
	case <-handles[0].WaitCh():
	case <-time.After(20 * time.Second):
		t.Fatal("task did not end")
	}
	h, err := d.Start(cfg)
	must.NoError(t, err)
	<-h.WaitCh()
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	must.NoError(t, err)
	return strings.TrimSpace(string(raw))
}

func waitForFileHas(t *testing.T, path, want string) {
	t.Helper()
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		raw, _ := os.ReadFile(path)
		return strings.Contains(string(raw), want)
	}), wait.Timeout(20*time.Second), wait.Gap(10*time.Millisecond)))
}

// TestExecDriver_CoresRecovered: a re-attached task takes its core back from its cgroup, so
// a restarted agent does not give it to another task.
func TestExecDriver_CoresRecovered(t *testing.T) {
	requireIsolation(t)
	first := New(Options{})
	cfg := testTask(t, map[string]any{"command": "/bin/sh", "args": []any{"-c", "echo started; exec sleep 300"}})
	cfg.Resources.Cores = 1
	h, err := first.Start(cfg)
	must.NoError(t, err)
	t.Cleanup(func() {
		_ = h.Kill(0)
		<-h.WaitCh()
	})
	waitForFile(t, cfg.StdoutPath, "started\n")

	second := New(Options{})
	rh, err := second.Recover(cfg, restartedState(t, h))
	must.NoError(t, err)
	// Both handles are done before the next test: each removes the task's cgroup, whose
	// name the next test's task has too.
	t.Cleanup(func() {
		_ = rh.Kill(0)
		<-rh.WaitCh()
	})
	host, err := second.host()
	must.NoError(t, err)
	all, err := host.hostCores()
	must.NoError(t, err)
	_, err = second.reserveCores(host, "other", len(all))
	must.ErrorContains(t, err, "are free")
	got, err := second.reserveCores(host, "other", len(all)-1)
	must.NoError(t, err)
	must.SliceNotContains(t, got, pinnedCores(h.(*Handle).cg)[0])
}
