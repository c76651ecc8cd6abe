package docker

import (
	"context"
	"fmt"
	"os"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/nomadfork/nomad/client/drivers"
)

// Recover implements drivers.Recoverer: the container is found by ID. One still running is
// followed again; one that exited while the agent was down reports the exit code the engine
// kept. Either way the output the container wrote since the log files were last written is
// copied from the engine's log, so nothing is lost while no agent ran (a line written in the
// instant the agent died may appear twice).
func (d *Driver) Recover(cfg *drivers.TaskConfig, st *drivers.HandleState) (drivers.TaskHandle, error) {
	if d.err != nil {
		return nil, fmt.Errorf("docker: no client: %w", d.err)
	}
	if st == nil || st.ContainerID == "" {
		return nil, drivers.ErrTaskNotFound
	}
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	insp, err := d.cli.ContainerInspect(ctx, st.ContainerID)
	if cerrdefs.IsNotFound(err) {
		return nil, drivers.ErrTaskNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("docker: inspecting container: %w", err)
	}
	since := lastWrite(cfg.StdoutPath, cfg.StderrPath)
	stdout, stderr, err := drivers.OpenTaskLogs(cfg)
	if err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	opts := container.LogsOptions{ShowStdout: true, ShowStderr: true, Follow: true}
	if !since.IsZero() {
		opts.Since = fmt.Sprintf("%d.%09d", since.Unix(), since.Nanosecond())
	}
	// Not bound to ctx: the stream lasts as long as the container.
	logs, err := d.cli.ContainerLogs(context.Background(), st.ContainerID, opts)
	if err != nil {
		_ = stdout.Close()
		_ = stderr.Close()
		return nil, fmt.Errorf("docker: following container logs: %w", err)
	}
	h := &handle{d: d, id: st.ContainerID, killSignal: cfg.KillSignal, waitCh: make(chan *drivers.ExitResult, 1), done: make(chan struct{})}
	if insp.State != nil {
		h.pid = insp.State.Pid
	}
	// The re-attached container holds its image as a started one does, so that a task of
	// this run that pulls the same image does not leave it to the GC while this one runs.
	imgKey := ""
	if insp.Config != nil {
		imgKey = imageKey(insp.Config.Image)
		d.acquireImage(imgKey)
	}
	remove := func() {
		rctx, rcancel := context.WithTimeout(context.Background(), apiTimeout)
		defer rcancel()
		_ = d.cli.ContainerRemove(rctx, st.ContainerID, container.RemoveOptions{Force: true, RemoveVolumes: true})
		if imgKey != "" {
			d.releaseImage(imgKey)
		}
	}
	go h.follow(logs, func() { _ = logs.Close() }, stdout, stderr, remove)
	return h, nil
}

// lastWrite is when the newest of the files was last written, zero when none exists.
func lastWrite(paths ...string) time.Time {
	var out time.Time
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.Size() > 0 && fi.ModTime().After(out) {
			out = fi.ModTime()
		}
	}
	return out
}
