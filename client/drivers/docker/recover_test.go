package docker

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/client/drivers/docker/dockertest"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// TestDocker_RecoverRunning: a driver of a restarted agent finds a running container by ID,
// signals it, and learns its exit code.
func TestDocker_RecoverRunning(t *testing.T) {
	d, root := testDriver(t)
	cfg := newTask(t, root, map[string]any{"image": dockertest.Image, "args": []any{"sleep"}})
	h, err := d.Start(cfg)
	must.NoError(t, err)
	t.Cleanup(func() { _ = h.Kill(0) })
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return strings.Contains(readFile(t, cfg.StdoutPath), "sleeping")
	}), wait.Timeout(30*time.Second), wait.Gap(50*time.Millisecond)))
	st := h.(drivers.Persistent).HandleState()
	must.Eq(t, "docker", st.Driver)

	again := New(Options{AllocRoot: root})
	rh, err := again.Recover(cfg, st)
	must.NoError(t, err)
	must.Eq(t, h.PID(), rh.PID())
	must.Eq(t, st, rh.(drivers.Persistent).HandleState())
	must.NoError(t, rh.Signal(syscall.SIGINT))
	res := waitExit(t, rh, 30*time.Second)
	must.Eq(t, 3, res.ExitCode)
	must.StrContains(t, readFile(t, cfg.StdoutPath), "got interrupt")
}

// TestDocker_RecoverExited: a container that exited while no agent ran reports the exit code
// the engine kept, its output reaches the log files, and it is removed.
func TestDocker_RecoverExited(t *testing.T) {
	cases := []struct {
		name       string
		cmd        []string
		wantCode   int
		wantStdout string
	}{
		{name: "success", cmd: []string{"echo", "bye"}, wantCode: 0, wantStdout: "bye\n"},
		{name: "failure", cmd: []string{"exit", "3"}, wantCode: 3, wantStdout: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, root := testDriver(t)
			cfg := newTask(t, root, map[string]any{"image": dockertest.Image})
			// Made by hand, as a previous agent would have: no handle of this run follows it.
			ctx := context.Background()
			created, err := d.cli.ContainerCreate(ctx, &container.Config{Image: dockertest.Image, Cmd: tc.cmd,
				Labels: map[string]string{labelAllocRoot: root}}, nil, nil, nil, "")
			must.NoError(t, err)
			t.Cleanup(func() { _ = d.cli.ContainerRemove(ctx, created.ID, container.RemoveOptions{Force: true}) })
			must.NoError(t, d.cli.ContainerStart(ctx, created.ID, container.StartOptions{}))
			statusCh, errCh := d.cli.ContainerWait(ctx, created.ID, container.WaitConditionNotRunning)
			select {
			case <-statusCh:
			case err := <-errCh:
				t.Fatal(err)
			}

			rh, err := New(Options{AllocRoot: root}).Recover(cfg, &drivers.HandleState{Driver: "docker", ContainerID: created.ID})
			must.NoError(t, err)
			res := waitExit(t, rh, 30*time.Second)
			must.Eq(t, tc.wantCode, res.ExitCode, must.Sprint(res))
			must.NoError(t, res.Err)
			must.Eq(t, tc.wantStdout, readFile(t, cfg.StdoutPath))
			_, err = d.cli.ContainerInspect(ctx, created.ID)
			must.Error(t, err, must.Sprint("the ended container is removed"))

			_, err = d.Recover(cfg, &drivers.HandleState{Driver: "docker", ContainerID: created.ID})
			must.ErrorIs(t, err, drivers.ErrTaskNotFound)
		})
	}
}
