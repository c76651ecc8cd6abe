package execdriver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nomadfork/nomad/client/drivers"
	"github.com/shoenig/test/must"
)

// A host volume is bound into the task's root at its destination: the task reads the
// host's file, writes through a writable mount and cannot through a read-only one.
func TestExecDriver_HostVolumeMounts(t *testing.T) {
	requireIsolation(t)
	hostDir := t.TempDir()
	// The task runs as nobody by default; the directory is the operator's to open up.
	must.NoError(t, os.Chmod(hostDir, 0o777))
	must.NoError(t, os.WriteFile(filepath.Join(hostDir, "greeting"), []byte("from the host"), 0o644))

	run := func(t *testing.T, readOnly bool, script string) (*drivers.ExitResult, string, string) {
		cfg := testTask(t, map[string]any{"command": "/bin/sh", "args": []any{"-c", script}})
		cfg.Mounts = []drivers.Mount{{Volume: "data", HostPath: hostDir, TaskPath: "/srv/data", ReadOnly: readOnly}}
		return runTask(t, New(Options{}), cfg)
	}

	t.Run("read-only", func(t *testing.T) {
		res, stdout, stderr := run(t, true, `cat /srv/data/greeting; echo; echo x > /srv/data/new && echo write=ok || echo write=refused`)
		must.True(t, res.Successful(), must.Sprintf("result %s, stderr %q", res, stderr))
		must.Eq(t, "from the host\nwrite=refused\n", stdout)
		must.StrContains(t, stderr, "Read-only file system")
		must.FileNotExists(t, filepath.Join(hostDir, "new"))
	})
	t.Run("writable", func(t *testing.T) {
		res, stdout, stderr := run(t, false, `cat /srv/data/greeting; echo; echo written > /srv/data/new && echo write=ok`)
		must.True(t, res.Successful(), must.Sprintf("result %s, stderr %q", res, stderr))
		must.Eq(t, "from the host\nwrite=ok\n", stdout)
		b, err := os.ReadFile(filepath.Join(hostDir, "new"))
		must.NoError(t, err)
		must.Eq(t, "written", strings.TrimSpace(string(b)))
	})
	t.Run("destination not clean is refused", func(t *testing.T) {
		cfg := testTask(t, map[string]any{"command": "/bin/true"})
		cfg.Mounts = []drivers.Mount{{Volume: "data", HostPath: hostDir, TaskPath: "/srv/../../etc"}}
		_, err := New(Options{}).Start(cfg)
		must.ErrorContains(t, err, `volume "data": destination "/srv/../../etc" is not a clean absolute path`)
	})
}
