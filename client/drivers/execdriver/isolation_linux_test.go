package execdriver

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nomadfork/nomad/client/drivers"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// TestExecDriver_Isolation runs a task that reports what it sees: its PID, user, hostname,
// the host's files and its own directories.
func TestExecDriver_Isolation(t *testing.T) {
	requireIsolation(t)
	hostDir := t.TempDir()
	marker := filepath.Join(hostDir, "host-only")
	must.NoError(t, os.WriteFile(marker, []byte("x"), 0o644))
	hostname, err := os.Hostname()
	must.NoError(t, err)

	script := strings.Join([]string{
		`echo "pid=$$"`,
		`echo "uid=$(id -u)"`,
		`echo "hostname=$(hostname)"`,
		`test -e ` + marker + ` && echo marker=visible || echo marker=invisible`,
		`test -d ` + hostDir + ` && echo hostdir=visible || echo hostdir=invisible`,
		`echo "pwd=$PWD"`,
		`echo "greeting=$GREETING task_dir=$NOMAD_TASK_DIR"`,
		`echo hi > /local/out && echo local=writable`,
		`touch /etc/nomad-exec-test 2>/dev/null && echo etc=writable || echo etc=readonly`,
		`echo data > /alloc/data/shared && echo alloc=writable`,
		`ls /proc | grep -c '^[0-9]' | sed 's/^/procs=/'`,
		`test -c /dev/null && echo devnull=ok`,
		`test -d /sys/devices/system/cpu && echo sys=ok`,
		`ls /dev | tr '\n' ' ' | sed 's/^/dev=/'; echo`,
		`awk '$5 == "/usr" { print "usr=" $6 } $5 == "/alloc" { print "allocmount=" $6 } $5 == "/" { print "rootmount=" $6 }' /proc/self/mountinfo`,
	}, "\n")
	d := New(Options{})
	cfg := testTask(t, map[string]any{"command": "/bin/sh", "args": []any{"-c", script}})
	res, stdout, stderr := runTask(t, d, cfg)
	must.True(t, res.Successful(), must.Sprintf("result %s, stderr %q, stdout %q", res, stderr, stdout))

	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			got[k] = v
		}
	}
	must.Eq(t, "1", got["pid"], must.Sprint("the command is PID 1 of its namespace"))
	must.Eq(t, "65534", got["uid"], must.Sprint("the default user is nobody"))
	must.NotEq(t, hostname, got["hostname"])
	must.Eq(t, cfg.AllocID[:8], got["hostname"])
	must.Eq(t, "invisible", got["marker"])
	must.Eq(t, "invisible", got["hostdir"])
	must.Eq(t, "/", got["pwd"])
	must.Eq(t, "hello task_dir=/local", got["greeting"])
	must.Eq(t, "writable", got["local"])
	must.Eq(t, "readonly", got["etc"])
	must.Eq(t, "writable", got["alloc"])
	must.Eq(t, "ok", got["devnull"])
	must.Eq(t, "ok", got["sys"])
	// Only the task's own processes: sh and the commands of the pipeline.
	must.True(t, len(got["procs"]) == 1, must.Sprintf("the task sees few processes, got %q", got["procs"]))
	must.StrNotContains(t, got["dev"], "sda", must.Sprint("/dev is the task's own"))
	for _, opt := range []string{"ro", "nosuid", "nodev"} {
		must.SliceContains(t, strings.Split(got["usr"], ","), opt, must.Sprintf("/usr is mounted %q", got["usr"]))
	}
	for _, opt := range []string{"rw", "nosuid", "nodev"} {
		must.SliceContains(t, strings.Split(got["allocmount"], ","), opt, must.Sprintf("/alloc is mounted %q", got["allocmount"]))
		must.SliceContains(t, strings.Split(got["rootmount"], ","), opt, must.Sprintf("/ is mounted %q", got["rootmount"]))
	}

	// What the task wrote landed in its directories on the host, and nothing else did.
	out, err := os.ReadFile(filepath.Join(cfg.TaskDir, "local", "out"))
	must.NoError(t, err)
	must.Eq(t, "hi\n", string(out))
	_, err = os.Stat("/etc/nomad-exec-test")
	must.ErrorIs(t, err, os.ErrNotExist)
	// The cgroup went with the task.
	for _, p := range d.tasksSeen(t) {
		_, err := os.Stat(p)
		must.ErrorIs(t, err, os.ErrNotExist, must.Sprintf("cgroup %s was removed", p))
	}
}

// tasksSeen are the cgroup directories of the tasks this driver started, recorded by the
// test's own Start wrapper.
func (d *Driver) tasksSeen(t *testing.T) []string {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	must.MapEmpty(t, d.tasks, must.Sprint("ended tasks are no longer tracked"))
	var out []string
	for _, c := range v1Controllers {
		out = append(out, filepath.Join("/sys/fs/cgroup", c, cgroupParentV1, cgroupName("0c3b1d2e-1111-2222-3333-444455556666", "web")))
	}
	out = append(out, filepath.Join("/sys/fs/cgroup", cgroupParentV2, cgroupName("0c3b1d2e-1111-2222-3333-444455556666", "web")))
	return out
}

func TestExecDriver_StartFailures(t *testing.T) {
	requireIsolation(t)
	cases := []struct {
		name   string
		config map[string]any
		user   string
		errHas string
	}{
		{name: "unknown config key", config: map[string]any{"command": "/bin/true", "ipc_mode": "host"}, errHas: `unknown config key "ipc_mode"`},
		{name: "a capability allow_caps does not allow", config: map[string]any{"command": "/bin/true", "cap_add": []any{"net_admin"}}, user: "root", errHas: `capability "net_admin" is not allowed`},
		{name: "missing command", config: map[string]any{"command": "/no/such/program"}, errHas: `starting "/no/such/program"`},
		{name: "command not on the path", config: map[string]any{"command": "no-such-program"}, errHas: "executable file not found"},
		{name: "unknown user", config: map[string]any{"command": "/bin/true"}, user: "no-such-user-here", errHas: `user "no-such-user-here"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := New(Options{})
			cfg := testTask(t, tc.config)
			cfg.User = tc.user
			_, err := d.Start(cfg)
			must.ErrorContains(t, err, tc.errHas)
			must.MapEmpty(t, d.tasks)
		})
	}
}

func TestExecDriver_UserAndExitCode(t *testing.T) {
	requireIsolation(t)
	d := New(Options{})
	cfg := testTask(t, map[string]any{"command": "sh", "args": []any{"-c", "id -un; exit 3"}})
	cfg.User = "daemon"
	res, stdout, _ := runTask(t, d, cfg)
	must.Eq(t, 3, res.ExitCode)
	must.False(t, res.OOMKilled)
	must.Eq(t, "daemon\n", stdout)
}

// TestExecDriver_OOMKilled gives a task 16 MiB and lets it take 96.
func TestExecDriver_OOMKilled(t *testing.T) {
	requireIsolation(t)
	d := New(Options{})
	cfg := testTask(t, map[string]any{"command": "/bin/sh", "args": []any{"-c", "dd if=/dev/zero of=/dev/null bs=96M count=1"}})
	cfg.Resources = drivers.TaskResources{MemoryMB: 16, CPU: 100}
	res, _, stderr := runTask(t, d, cfg)
	must.True(t, res.OOMKilled, must.Sprintf("result %s, stderr %q", res, stderr))
	must.False(t, res.Successful())
	must.StrContains(t, res.String(), "OOM Killed")
}

func TestExecDriver_MemoryMaxIsTheHardLimit(t *testing.T) {
	requireIsolation(t)
	d := New(Options{})
	// 16 MiB reserved, 160 MiB allowed: a 96 MiB buffer fits.
	cfg := testTask(t, map[string]any{"command": "/bin/sh", "args": []any{"-c", "dd if=/dev/zero of=/dev/null bs=96M count=1 2>/dev/null && echo done"}})
	cfg.Resources = drivers.TaskResources{MemoryMB: 16, MemoryMaxMB: 160}
	res, stdout, _ := runTask(t, d, cfg)
	must.True(t, res.Successful(), must.Sprintf("result %s", res))
	must.Eq(t, "done\n", stdout)
}

// TestExecDriver_Kill stops a task whose command ignores the kill signal: as the init of
// its namespace it cannot be killed by an unhandled signal, so the SIGKILL after the
// timeout ends it, with everything it started.
func TestExecDriver_Kill(t *testing.T) {
	requireIsolation(t)
	d := New(Options{})
	cfg := testTask(t, map[string]any{"command": "/bin/sh", "args": []any{"-c", "sleep 300 & echo started; wait"}})
	h, err := d.Start(cfg)
	must.NoError(t, err)
	state := h.(*Handle).State()
	must.Positive(t, state.PID)
	must.Positive(t, state.StartTicks)
	must.StrContains(t, state.CgroupPath, cgroupName(cfg.AllocID, cfg.TaskName))
	waitForFile(t, cfg.StdoutPath, "started\n")
	must.NoError(t, h.Kill(100*time.Millisecond))
	select {
	case res := <-h.WaitCh():
		must.Eq(t, int(syscall.SIGKILL), res.Signal)
		must.False(t, res.OOMKilled)
	case <-time.After(20 * time.Second):
		t.Fatal("task was not killed")
	}
	for _, dir := range state.Cgroups {
		_, err := os.Stat(dir)
		must.ErrorIs(t, err, os.ErrNotExist)
	}
}

// TestExecDriver_KillSignalHandled: a command that handles the kill signal ends by it.
func TestExecDriver_KillSignalHandled(t *testing.T) {
	requireIsolation(t)
	d := New(Options{})
	cfg := testTask(t, map[string]any{"command": "/bin/sh", "args": []any{"-c", `trap 'echo got-int; exit 7' INT; echo started; while :; do sleep 0.05; done`}})
	cfg.KillSignal = "SIGINT"
	h, err := d.Start(cfg)
	must.NoError(t, err)
	waitForFile(t, cfg.StdoutPath, "started\n")
	must.NoError(t, h.Kill(20*time.Second))
	select {
	case res := <-h.WaitCh():
		must.Eq(t, 7, res.ExitCode)
	case <-time.After(20 * time.Second):
		t.Fatal("task did not end on its kill signal")
	}
	waitForFile(t, cfg.StdoutPath, "started\ngot-int\n")
}

func waitForFile(t *testing.T, path, want string) {
	t.Helper()
	var got []byte
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		got, _ = os.ReadFile(path)
		return string(got) == want
	}), wait.Timeout(20*time.Second), wait.Gap(10*time.Millisecond)), must.Sprintf("%s has %q, want %q", path, got, want))
}

// BenchmarkExecDriver_Start: task start latency (namespaces, chroot mounts, cgroup) of
// /bin/true.
func BenchmarkExecDriver_Start(b *testing.B) {
	requireIsolation(b)
	d := New(Options{})
	cfg := testTask(b, map[string]any{"command": "/bin/true"})
	// ns/op is a whole task, start to cgroup removed; start-ns/op is Start alone (until the
	// command runs in its chroot).
	var started time.Duration
	for b.Loop() {
		t0 := time.Now()
		h, err := d.Start(cfg)
		started += time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		if res := <-h.WaitCh(); !res.Successful() {
			b.Fatal(res)
		}
	}
	b.ReportMetric(float64(started.Nanoseconds())/float64(b.N), "start-ns/op")
}

// TestExecDriver_ChrootEnv: the chroot holds what chroot_env names and nothing else of the
// host.
func TestExecDriver_ChrootEnv(t *testing.T) {
	requireIsolation(t)
	env := map[string]string{}
	for src, dst := range DefaultChrootEnv {
		if src != "/etc" {
			env[src] = dst
		}
	}
	hostFile := filepath.Join(t.TempDir(), "shared")
	must.NoError(t, os.WriteFile(hostFile, []byte("x"), 0o644))
	env[hostFile] = "/srv/host-name"
	d := New(Options{ChrootEnv: env})
	cfg := testTask(t, map[string]any{"command": "/bin/sh", "args": []any{"-c",
		`test -e /etc/passwd && echo passwd=yes || echo passwd=no; test -f /srv/host-name && echo file=yes`}})
	res, stdout, stderr := runTask(t, d, cfg)
	must.True(t, res.Successful(), must.Sprintf("result %s, stderr %q", res, stderr))
	must.Eq(t, "passwd=no\nfile=yes\n", stdout)
}

// TestExecDriver_SurvivedOOMIsSuccess: a task whose child the kernel killed for the memory
// limit, and that then exits 0, succeeded.
func TestExecDriver_SurvivedOOMIsSuccess(t *testing.T) {
	requireIsolation(t)
	d := New(Options{})
	cfg := testTask(t, map[string]any{"command": "/bin/sh", "args": []any{"-c", "dd if=/dev/zero of=/dev/null bs=96M count=1 2>/dev/null; echo survived"}})
	cfg.Resources = drivers.TaskResources{MemoryMB: 16}
	res, stdout, _ := runTask(t, d, cfg)
	must.True(t, res.Successful(), must.Sprintf("result %s", res))
	must.False(t, res.OOMKilled)
	must.Eq(t, "survived\n", stdout)
}

// TestExecDriver_DirectoriesBehindALink: an agent whose data directory is reached through a
// link (a /tmp that is one) still runs tasks.
func TestExecDriver_DirectoriesBehindALink(t *testing.T) {
	requireIsolation(t)
	d := New(Options{})
	cfg := testTask(t, map[string]any{"command": "/bin/sh", "args": []any{"-c", "echo ok"}})
	link := filepath.Join(t.TempDir(), "link")
	must.NoError(t, os.Symlink(filepath.Dir(cfg.TaskDir), link))
	cfg.TaskDir = filepath.Join(link, filepath.Base(cfg.TaskDir))
	res, stdout, stderr := runTask(t, d, cfg)
	must.True(t, res.Successful(), must.Sprintf("result %s, stderr %q", res, stderr))
	must.Eq(t, "ok\n", stdout)
}

// TestExecDriver_PidsLimit: pids_limit caps the task's processes in its cgroup; a task that
// forks past it is refused the fork.
func TestExecDriver_PidsLimit(t *testing.T) {
	requireIsolation(t)
	d := New(Options{})
	cfg := testTask(t, map[string]any{"command": "/bin/sh", "pids_limit": 4, "args": []any{"-c",
		`while [ ! -e /local/go ]; do :; done; for i in 1 2 3 4 5 6 7 8; do sleep 30 & done; echo spawned; exec sleep 300`}})
	h, err := d.Start(cfg)
	must.NoError(t, err)
	// The limit is set once the command runs (Start returns after that): the task forks only
	// then.
	must.NoError(t, os.WriteFile(filepath.Join(cfg.TaskDir, "local", "go"), nil, 0o644))
	t.Cleanup(func() {
		_ = h.Kill(0)
		<-h.WaitCh()
	})
	st := h.(*Handle)
	pidsDir := st.cg.dirs[0]
	if st.cg.mode == cgroupV1 {
		pidsDir = st.cg.dirs[2]
	}
	raw, err := os.ReadFile(filepath.Join(pidsDir, "pids.max"))
	must.NoError(t, err)
	must.Eq(t, "4\n", string(raw))
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		raw, _ := os.ReadFile(cfg.StderrPath)
		return strings.Contains(string(raw), "fork")
	}), wait.Timeout(20*time.Second), wait.Gap(20*time.Millisecond)), must.Func(func() string {
		raw, _ := os.ReadFile(cfg.StderrPath)
		out, _ := os.ReadFile(cfg.StdoutPath)
		return "stderr " + string(raw) + " stdout " + string(out)
	}))
	must.LessEq(t, 4, len(cgroupPIDs(pidsDir)))
}

// TestExecDriver_LogsDisabled: with empty log paths (logs { disabled = true }) the task runs
// and no log file is written.
func TestExecDriver_LogsDisabled(t *testing.T) {
	requireIsolation(t)
	d := New(Options{})
	cfg := testTask(t, map[string]any{"command": "/bin/sh", "args": []any{"-c", "echo out; echo err >&2; exit 4"}})
	logs := filepath.Dir(cfg.StdoutPath)
	cfg.StdoutPath, cfg.StderrPath = "", ""
	h, err := d.Start(cfg)
	must.NoError(t, err)
	select {
	case res := <-h.WaitCh():
		must.Eq(t, 4, res.ExitCode)
	case <-time.After(30 * time.Second):
		_ = h.Kill(0)
		t.Fatal("task did not end")
	}
	entries, err := os.ReadDir(logs)
	must.NoError(t, err)
	must.SliceEmpty(t, entries)
}
