package docker

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/client/drivers/docker/dockertest"
	"github.com/shoenig/test/must"
)

// A host volume is bound at its destination: the container reads the host's file, writes
// through a writable mount, and cannot write through a read-only one.
func TestDocker_HostVolumeMounts(t *testing.T) {
	d, root := testDriver(t)
	hostDir := t.TempDir()
	must.NoError(t, os.WriteFile(filepath.Join(hostDir, "greeting"), []byte("from the host"), 0o644))

	run := func(t *testing.T, readOnly bool, args ...any) (*drivers.TaskConfig, *drivers.ExitResult) {
		cfg := newTask(t, root, map[string]any{"image": dockertest.Image, "args": args})
		cfg.Mounts = []drivers.Mount{{Volume: "data", HostPath: hostDir, TaskPath: "/srv/data", ReadOnly: readOnly}}
		h, err := d.Start(cfg)
		must.NoError(t, err)
		return cfg, waitExit(t, h, time.Minute)
	}

	t.Run("reads the host file", func(t *testing.T) {
		cfg, res := run(t, true, "cat", "/srv/data/greeting")
		must.True(t, res.Successful(), must.Sprintf("result %s, stderr %q", res, readFile(t, cfg.StderrPath)))
		must.Eq(t, "from the host", readFile(t, cfg.StdoutPath))
	})
	t.Run("read-only refuses a write", func(t *testing.T) {
		cfg, res := run(t, true, "write", "/srv/data/new", "x")
		must.Eq(t, 1, res.ExitCode)
		must.StrContains(t, readFile(t, cfg.StderrPath), "read-only file system")
		must.FileNotExists(t, filepath.Join(hostDir, "new"))
	})
	t.Run("writable lets the task write to the host", func(t *testing.T) {
		cfg, res := run(t, false, "write", "/srv/data/new", "written")
		must.True(t, res.Successful(), must.Sprintf("result %s, stderr %q", res, readFile(t, cfg.StderrPath)))
		must.Eq(t, "written", readFile(t, filepath.Join(hostDir, "new")))
	})
}
