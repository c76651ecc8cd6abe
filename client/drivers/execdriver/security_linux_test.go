package execdriver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nomadfork/nomad/client/drivers"
	"github.com/shoenig/test/must"
	"golang.org/x/sys/unix"
)

// keyctlScript asks the kernel for the session keyring's ID by the raw system call (no
// keyutils needed): it exits 0 when the call is allowed.
var keyctlScript = fmt.Sprintf(`python3 -c 'import ctypes, sys; sys.exit(0 if ctypes.CDLL(None).syscall(%d, 0, -3, 0, 0, 0) >= 0 else 1)'`, unix.SYS_KEYCTL)

// escapes are what a hostile task would try, to reach the host from its chroot. Each script
// prints "escaped" only if it got through. rootToo marks those that must fail for a task run
// as root as well (the others are a root task's right inside its own namespaces, such as
// writing to its chroot's root).
func escapes(hostSecret string, agentPID int) []struct {
	name    string
	script  string
	rootToo bool
} {
	return []struct {
		name    string
		script  string
		rootToo bool
	}{
		{name: "read a host file by its path", script: "cat " + hostSecret + " && echo escaped", rootToo: true},
		{name: "signal the agent", script: fmt.Sprintf("kill -0 %d && echo escaped", agentPID), rootToo: true},
		{name: "see the agent in /proc", script: fmt.Sprintf("test -e /proc/%d && echo escaped", agentPID), rootToo: true},
		{name: "mount a filesystem", script: "mkdir -p /tmp/m && mount -t tmpfs none /tmp/m && echo escaped", rootToo: true},
		{name: "remount a host path writable", script: "mount -o remount,rw /usr && echo escaped", rootToo: true},
		{name: "write to a host path", script: "echo x > /usr/escaped && echo escaped", rootToo: true},
		{name: "reach the cgroup tree", script: "ls /sys/fs/cgroup | grep -q . && echo escaped", rootToo: true},
		{name: "write to /sys", script: "echo 1 > /sys/kernel/mm/ksm/run && echo escaped", rootToo: true},
		{name: "the host's root through /proc", script: "ls /proc/1/root" + filepath.Dir(hostSecret) + " && echo escaped", rootToo: true},
		{name: "change the hostname", script: "hostname evil && echo escaped", rootToo: true},
		{name: "read a disk through a device node", script: "mknod /tmp/sda b 8 0; head -c 1 /tmp/sda >/dev/null && echo escaped", rootToo: true},
		// Writes back the value it read, so that a failure of this test changes nothing on
		// the host; before the fix a root task wrote "|/its/program" here and the kernel
		// ran it as host root at the next crash.
		{name: "write the kernel's core_pattern", script: "cat /proc/sys/kernel/core_pattern > /tmp/cp; cat /tmp/cp > /proc/sys/kernel/core_pattern && echo escaped", rootToo: true},
		{name: "write another sysctl", script: "echo 1 > /proc/sys/kernel/sysrq && echo escaped", rootToo: true},
		{name: "the sysrq trigger", script: "echo h > /proc/sysrq-trigger && echo escaped", rootToo: true},
		{name: "read the host's password hashes", script: "grep -q . /etc/shadow && echo escaped", rootToo: true},
		{name: "read the host's group password hashes", script: "grep -q . /etc/gshadow && echo escaped", rootToo: true},
		{name: "read the kernel's timers", script: "grep -q . /proc/timer_list && echo escaped", rootToo: true},
		{name: "read the kernel's keyring", script: "grep -q . /proc/keys && echo escaped", rootToo: true},
		{name: "read kernel memory", script: "head -c 1 /proc/kcore | grep -q . && echo escaped", rootToo: true},
		// /dev is the one writable mount without nodev: a node made there would open.
		{name: "create a device node in /dev", script: "mknod /dev/null2 c 1 3 && echo escaped", rootToo: true},
		{name: "unmount a mask", script: "umount /proc/sys && echo escaped; umount /etc/shadow && echo escaped", rootToo: true},
		// The seccomp filter refuses user namespaces; where there is none (another
		// architecture), a task's own user namespace still finds the masks locked and a new
		// /proc refused while the one it sees has paths masked.
		{name: "unmask in a user namespace", script: "unshare -Urm sh -c 'umount /etc/shadow; umount /proc/sys; grep -q . /etc/shadow || echo 1 > /proc/sys/vm/drop_caches' && echo escaped", rootToo: true},
		{name: "a fresh /proc in a user namespace", script: "unshare -Urmpf sh -c 'mount -t proc proc /proc && grep -q . /proc/timer_list' && echo escaped", rootToo: true},
		{name: "create a user namespace", script: "unshare -Ur true && echo escaped", rootToo: true},
		{name: "use the kernel's keyring", script: "keyctl show @s && echo escaped; " + keyctlScript + " && echo escaped", rootToo: true},
		{name: "set the clock", script: "date -s @$(date +%s) && echo escaped", rootToo: true},
		{name: "write to the chroot's root", script: "echo x > /escaped && echo escaped"},
		{name: "create a device node", script: "mknod /tmp/null c 1 3 && echo escaped"},
	}
}

// TestSecurity_ExecDriverEscapes runs each escape as a task, as nobody and as root.
func TestSecurity_ExecDriverEscapes(t *testing.T) {
	requireIsolation(t)
	hostSecret := filepath.Join(t.TempDir(), "secret")
	must.NoError(t, os.WriteFile(hostSecret, []byte("host secret"), 0o644))
	for _, user := range []string{"", "root"} {
		for _, tc := range escapes(hostSecret, os.Getpid()) {
			if user == "root" && !tc.rootToo {
				continue
			}
			t.Run(tc.name+" as "+map[string]string{"": "nobody", "root": "root"}[user], func(t *testing.T) {
				d := New(Options{})
				cfg := testTask(t, map[string]any{"command": "/bin/sh", "args": []any{"-c", tc.script + "; exit 0"}})
				cfg.User = user
				res, stdout, _ := runTask(t, d, cfg)
				must.True(t, res.Successful(), must.Sprint(res))
				must.False(t, strings.Contains(stdout, "escaped"), must.Sprintf("stdout %q", stdout))
				must.StrNotContains(t, stdout, "host secret")
			})
		}
	}
}

// TestSecurity_ExecDriverExecEscapes runs the same escapes through alloc exec into a task run
// as root: the command joins the task with the task's capabilities, not the agent's.
func TestSecurity_ExecDriverExecEscapes(t *testing.T) {
	requireIsolation(t)
	hostSecret := filepath.Join(t.TempDir(), "secret")
	must.NoError(t, os.WriteFile(hostSecret, []byte("host secret"), 0o644))
	d := New(Options{})
	cfg := testTask(t, map[string]any{"command": "/bin/sh", "args": []any{"-c", "echo started; exec sleep 300"}})
	cfg.User = "root"
	h, err := d.Start(cfg)
	must.NoError(t, err)
	t.Cleanup(func() {
		_ = h.Kill(0)
		<-h.WaitCh()
	})
	waitForFile(t, cfg.StdoutPath, "started\n")
	for _, tc := range escapes(hostSecret, os.Getpid()) {
		if !tc.rootToo {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var stdout, stderr syncBuffer
			code, err := d.Exec(ctx, cfg, &drivers.ExecOptions{Command: []string{"/bin/sh", "-c", tc.script + "; exit 0"}, Stdout: &stdout, Stderr: &stderr})
			must.NoError(t, err)
			must.Eq(t, 0, code, must.Sprintf("stderr %q", stderr.String()))
			must.False(t, strings.Contains(stdout.String(), "escaped"), must.Sprintf("stdout %q", stdout.String()))
			must.StrNotContains(t, stdout.String(), "host secret")
		})
	}
}

// statusOf reads fields of /proc/self/status as the task saw them, printed by statusScript.
const statusScript = `grep -E '^(NoNewPrivs|CapBnd|CapEff|CapPrm|CapAmb):' /proc/self/status | tr -d ' \t'`

func parseStatus(out string) map[string]string {
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			got[k] = v
		}
	}
	return got
}

// capMask is the hexadecimal /proc/<pid>/status shows for a set of capabilities.
func capMask(t *testing.T, names []string) string {
	t.Helper()
	set, err := parseCaps("test", names)
	must.NoError(t, err)
	var m uint64
	for _, n := range set.numbers() {
		m |= 1 << n
	}
	return fmt.Sprintf("%016x", m)
}

// TestSecurity_ExecDriverHardening checks what the command is left with: no_new_privs set, the
// bounding set cut to the task's capabilities (the defaults, or as allow_caps and
// cap_add/cap_drop say), no capability at all for another user.
func TestSecurity_ExecDriverHardening(t *testing.T) {
	requireIsolation(t)
	cases := []struct {
		name  string
		opts  Options
		user  string
		extra map[string]any
		want  []string
		eff   []string
		amb   []string
	}{
		{name: "root with the defaults", user: "root", want: DefaultCaps, eff: DefaultCaps},
		{name: "nobody", want: DefaultCaps, eff: nil},
		{name: "nobody with cap_add gets it as ambient, and only it", extra: map[string]any{"cap_add": []any{"net_bind_service"}},
			want: DefaultCaps, eff: []string{"net_bind_service"}, amb: []string{"net_bind_service"}},
		{name: "root with cap_drop all and cap_add one", user: "root",
			extra: map[string]any{"cap_drop": []any{"all"}, "cap_add": []any{"net_bind_service"}},
			want:  []string{"net_bind_service"}, eff: []string{"net_bind_service"}},
		{name: "root with an allowed cap_add", user: "root", opts: Options{AllowCaps: append([]string{"net_raw"}, DefaultCaps...)},
			extra: map[string]any{"cap_add": []any{"net_raw"}},
			want:  append([]string{"net_raw"}, DefaultCaps...), eff: append([]string{"net_raw"}, DefaultCaps...)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := New(tc.opts)
			config := map[string]any{"command": "/bin/sh", "args": []any{"-c", statusScript}}
			for k, v := range tc.extra {
				config[k] = v
			}
			cfg := testTask(t, config)
			cfg.User = tc.user
			res, stdout, stderr := runTask(t, d, cfg)
			must.True(t, res.Successful(), must.Sprintf("result %s, stderr %q", res, stderr))
			got := parseStatus(stdout)
			must.Eq(t, "1", got["NoNewPrivs"])
			must.Eq(t, capMask(t, tc.want), got["CapBnd"])
			must.Eq(t, capMask(t, tc.eff), got["CapEff"])
			must.Eq(t, capMask(t, tc.amb), got["CapAmb"])
		})
	}
	t.Run("alloc exec into a root task", func(t *testing.T) {
		d := New(Options{})
		cfg := testTask(t, map[string]any{"command": "/bin/sh", "args": []any{"-c", "echo started; exec sleep 300"}, "cap_drop": []any{"chown"}})
		cfg.User = "root"
		h, err := d.Start(cfg)
		must.NoError(t, err)
		t.Cleanup(func() {
			_ = h.Kill(0)
			<-h.WaitCh()
		})
		waitForFile(t, cfg.StdoutPath, "started\n")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var stdout, stderr syncBuffer
		code, err := d.Exec(ctx, cfg, &drivers.ExecOptions{Command: []string{"/bin/sh", "-c", statusScript}, Stdout: &stdout, Stderr: &stderr})
		must.NoError(t, err)
		must.Eq(t, 0, code, must.Sprintf("stderr %q", stderr.String()))
		got := parseStatus(stdout.String())
		var want []string
		for _, c := range DefaultCaps {
			if c != "chown" {
				want = append(want, c)
			}
		}
		must.Eq(t, "1", got["NoNewPrivs"])
		must.Eq(t, capMask(t, want), got["CapBnd"])
	})
	t.Run("alloc exec into a task of another user with cap_add", func(t *testing.T) {
		d := New(Options{})
		cfg := testTask(t, map[string]any{"command": "/bin/sh", "args": []any{"-c", "echo started; exec sleep 300"}, "cap_add": []any{"net_bind_service"}})
		h, err := d.Start(cfg)
		must.NoError(t, err)
		t.Cleanup(func() {
			_ = h.Kill(0)
			<-h.WaitCh()
		})
		waitForFile(t, cfg.StdoutPath, "started\n")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var stdout, stderr syncBuffer
		code, err := d.Exec(ctx, cfg, &drivers.ExecOptions{Command: []string{"/bin/sh", "-c", statusScript}, Stdout: &stdout, Stderr: &stderr})
		must.NoError(t, err)
		must.Eq(t, 0, code, must.Sprintf("stderr %q", stderr.String()))
		got := parseStatus(stdout.String())
		must.Eq(t, "1", got["NoNewPrivs"])
		must.Eq(t, capMask(t, []string{"net_bind_service"}), got["CapEff"])
		must.Eq(t, capMask(t, []string{"net_bind_service"}), got["CapAmb"])
	})
}

// TestSecurity_ExecDriverMasks checks the mounts a root task finds: the kernel's knobs
// read-only, its leaks and the host's secrets masked, /dev read-only.
func TestSecurity_ExecDriverMasks(t *testing.T) {
	requireIsolation(t)
	script := `awk '{ print $5 "=" $6 }' /proc/self/mountinfo; ` +
		`for f in /etc/shadow /etc/gshadow /proc/timer_list /proc/keys /proc/kcore; do test -e $f && printf '%s size=%s\n' $f $(wc -c < $f); done; exit 0`
	d := New(Options{})
	cfg := testTask(t, map[string]any{"command": "/bin/sh", "args": []any{"-c", script}})
	cfg.User = "root"
	res, stdout, stderr := runTask(t, d, cfg)
	must.True(t, res.Successful(), must.Sprintf("result %s, stderr %q", res, stderr))
	mounts := map[string]string{}
	for _, line := range strings.Split(stdout, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && strings.HasPrefix(k, "/") {
			mounts[k] = v
		}
	}
	for _, p := range []string{"/proc/sys", "/proc/irq", "/proc/bus", "/dev"} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		opts, ok := mounts[p]
		must.True(t, ok, must.Sprintf("%s is a mount of its own: %v", p, mounts))
		must.SliceContains(t, strings.Split(opts, ","), "ro", must.Sprintf("%s is mounted %q", p, opts))
	}
	for _, f := range []string{"/etc/shadow", "/etc/gshadow", "/proc/timer_list", "/proc/keys", "/proc/kcore"} {
		if _, err := os.Stat(f); err != nil {
			continue
		}
		must.StrContains(t, stdout, f+" size=0", must.Sprintf("%s is masked", f))
	}
}

// TestSecurity_ExecDriverSeccompFollowsCaps: the seccomp filter refuses what no capability of
// the task allows, and lifts a rule when the operator's allow_caps and the job's cap_add give
// the capability it stands for.
func TestSecurity_ExecDriverSeccompFollowsCaps(t *testing.T) {
	requireIsolation(t)
	cases := []struct {
		name   string
		capAdd []any
		script string
		works  bool
	}{
		{name: "mount with the defaults", script: "mkdir -p /tmp/m && mount -t tmpfs none /tmp/m"},
		{name: "mount with sys_admin added", capAdd: []any{"sys_admin"}, script: "mkdir -p /tmp/m && mount -t tmpfs none /tmp/m", works: true},
		{name: "a user namespace with the defaults", script: "unshare -Ur true"},
		{name: "a user namespace with sys_admin added", capAdd: []any{"sys_admin"}, script: "unshare -Ur true", works: true},
		{name: "the keyring even with sys_admin added", capAdd: []any{"sys_admin"},
			script: keyctlScript},
		{name: "ordinary work", script: "sh -c 'echo child' && ls / >/dev/null", works: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := New(Options{AllowCaps: []string{"all"}})
			config := map[string]any{"command": "/bin/sh", "args": []any{"-c", "if " + tc.script + "; then echo works; else echo refused; fi"}}
			if tc.capAdd != nil {
				config["cap_add"] = tc.capAdd
			}
			cfg := testTask(t, config)
			cfg.User = "root"
			res, stdout, stderr := runTask(t, d, cfg)
			must.True(t, res.Successful(), must.Sprintf("result %s, stderr %q", res, stderr))
			want := map[bool]string{true: "works", false: "refused"}[tc.works]
			must.StrContains(t, stdout, want, must.Sprintf("stderr %q", stderr))
		})
	}
}
