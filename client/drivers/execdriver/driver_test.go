package execdriver

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nomadfork/nomad/client/drivers"
	"github.com/shoenig/test/must"
)

// TestMain lets the test binary be the task's init, as the agent's binary is.
func TestMain(m *testing.M) {
	if IsInit() {
		RunInit()
	}
	os.Exit(m.Run())
}

// requireIsolation skips a test that needs Linux and root, but fails it in CI, where the
// machine is meant to run them: there a skip would hide that they never ran.
func requireIsolation(t testing.TB) {
	t.Helper()
	if runtime.GOOS == "linux" && os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("the exec driver tests need Linux and root in CI (GOOS %s, euid %d)", runtime.GOOS, os.Geteuid())
	}
	t.Skipf("the exec driver needs Linux and root (GOOS %s, euid %d)", runtime.GOOS, os.Geteuid())
}

// testTask lays out an allocation as the client does and returns a task config for it.
func testTask(t testing.TB, config map[string]any) *drivers.TaskConfig {
	t.Helper()
	root := t.TempDir()
	allocDir := filepath.Join(root, "alloc")
	taskDir := filepath.Join(root, "web")
	for _, d := range []string{filepath.Join(allocDir, "logs"), filepath.Join(allocDir, "data"), filepath.Join(allocDir, "tmp"),
		filepath.Join(taskDir, "local"), filepath.Join(taskDir, "secrets"), filepath.Join(taskDir, "tmp")} {
		must.NoError(t, os.MkdirAll(d, 0o755))
	}
	return &drivers.TaskConfig{
		AllocID: "0c3b1d2e-1111-2222-3333-444455556666", JobName: "job", GroupName: "group", TaskName: "web",
		Config:     config,
		Env:        map[string]string{"GREETING": "hello", "NOMAD_TASK_DIR": filepath.Join(taskDir, "local")},
		TaskDir:    taskDir,
		AllocDir:   allocDir,
		StdoutPath: filepath.Join(allocDir, "logs", "web.stdout.0"),
		StderrPath: filepath.Join(allocDir, "logs", "web.stderr.0"),
	}
}

// runTask starts a task and waits for it to end, returning its result and output.
func runTask(t *testing.T, d *Driver, cfg *drivers.TaskConfig) (*drivers.ExitResult, string, string) {
	t.Helper()
	h, err := d.Start(cfg)
	must.NoError(t, err)
	var res *drivers.ExitResult
	select {
	case res = <-h.WaitCh():
	case <-time.After(30 * time.Second):
		_ = h.Kill(0)
		t.Fatal("task did not end")
	}
	stdout, err := os.ReadFile(cfg.StdoutPath)
	must.NoError(t, err)
	stderr, err := os.ReadFile(cfg.StderrPath)
	must.NoError(t, err)
	return res, string(stdout), string(stderr)
}

func TestExecDriver_Fingerprint(t *testing.T) {
	v1Mounts := strings.Join([]string{
		"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755",
		"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu",
		"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
		"39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids",
		"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw",
	}, "\n")
	noPids := strings.Join([]string{
		"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu",
		"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
	}, "\n")
	cases := []struct {
		name        string
		goos        string
		euid        int
		controllers string // "" for no cgroup v2 at the root
		mountinfo   string
		detected    bool
		descHas     string
	}{
		{name: "v1 as root", goos: "linux", mountinfo: v1Mounts, detected: true, descHas: "Healthy"},
		{name: "v2 as root", goos: "linux", controllers: "cpuset cpu io memory pids", detected: true, descHas: "Healthy"},
		{name: "not linux", goos: "darwin", mountinfo: v1Mounts, descHas: "only supported on Linux"},
		{name: "not root", goos: "linux", euid: 1000, mountinfo: v1Mounts, descHas: "must run as root"},
		{name: "v1 without pids", goos: "linux", mountinfo: noPids, descHas: "pids controller is not mounted"},
		{name: "v2 without memory", goos: "linux", controllers: "cpu pids", descHas: "lacks the memory controller"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			mi := filepath.Join(dir, "mountinfo")
			must.NoError(t, os.WriteFile(mi, []byte(tc.mountinfo), 0o644))
			cgroot := filepath.Join(dir, "cgroup")
			must.NoError(t, os.Mkdir(cgroot, 0o755))
			if tc.controllers != "" {
				must.NoError(t, os.WriteFile(filepath.Join(cgroot, "cgroup.controllers"), []byte(tc.controllers+"\n"), 0o644))
			}
			d := New(Options{})
			d.goos, d.geteuid, d.cgroupRoot, d.mountinfo = tc.goos, func() int { return tc.euid }, cgroot, mi
			info := d.Fingerprint()
			must.Eq(t, tc.detected, info.Detected)
			must.Eq(t, tc.detected, info.Healthy)
			must.StrContains(t, info.HealthDescription, tc.descHas)
			if tc.detected {
				must.Eq(t, "1", info.Attributes["driver.exec"])
			}
		})
	}
}

func TestExecDriver_FSIsolationIsChroot(t *testing.T) {
	must.Eq(t, drivers.FSIsolationChroot, drivers.FSIsolationOf("exec"))
}

func TestExecDriver_ConfigRefused(t *testing.T) {
	cases := []struct {
		name   string
		config map[string]any
		errHas string
	}{
		{name: "unknown key", config: map[string]any{"command": "/bin/true", "pid_mode": "host"}, errHas: `unknown config key "pid_mode"`},
		{name: "no command", config: map[string]any{"args": []any{"x"}}, errHas: `"command" is required`},
		{name: "args not strings", config: map[string]any{"command": "/bin/true", "args": []any{1}}, errHas: `"args"[0] must be a string`},
		{name: "negative pids_limit", config: map[string]any{"command": "/bin/true", "pids_limit": float64(-1)}, errHas: `"pids_limit" must be 0 (no limit) or more, not -1`},
		{name: "pids_limit not a number", config: map[string]any{"command": "/bin/true", "pids_limit": "many"}, errHas: `"pids_limit" must be a number`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig(tc.config)
			must.ErrorContains(t, err, tc.errHas)
		})
	}
}

func TestExecDriver_ChrootEnvRefused(t *testing.T) {
	cases := []struct {
		name   string
		env    map[string]string
		errHas string
	}{
		{name: "relative", env: map[string]string{"bin": "/bin"}, errHas: "must be absolute"},
		{name: "root", env: map[string]string{"/srv": "/"}, errHas: "cannot be replaced"},
		{name: "over alloc", env: map[string]string{"/srv": "/alloc/data"}, errHas: "/alloc belongs to the task"},
		{name: "over proc's parent", env: map[string]string{"/srv": "/dev"}, errHas: "/dev belongs to the task"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.ErrorContains(t, CheckChrootEnv(tc.env), tc.errHas)
		})
	}
	must.NoError(t, CheckChrootEnv(DefaultChrootEnv))
}
