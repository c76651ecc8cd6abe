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
)

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
