package docker

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/client/drivers/docker/dockertest"
	"github.com/shoenig/test/must"
)

// BenchmarkDocker_StartToRunning is the driver's share of task start latency: Start returns
// once the container runs.
func BenchmarkDocker_StartToRunning(b *testing.B) {
	cli := dockertest.Client(b)
	dockertest.BuildImage(b, cli)
	root := b.TempDir()
	d := New(Options{AllocRoot: root})
	for b.Loop() {
		cfg := newTask(b, root, map[string]any{"image": dockertest.Image, "args": []any{"sleep"}})
		h, err := d.Start(cfg)
		must.NoError(b, err)
		b.StopTimer()
		_ = h.Kill(0)
		<-h.WaitCh()
		b.StartTimer()
	}
}

// BenchmarkDocker_ExecSession is the setup and teardown of one exec session that runs a
// command which exits at once.
func BenchmarkDocker_ExecSession(b *testing.B) {
	cli := dockertest.Client(b)
	dockertest.BuildImage(b, cli)
	root := b.TempDir()
	d := New(Options{AllocRoot: root})
	cfg := newTask(b, root, map[string]any{"image": dockertest.Image, "args": []any{"sleep"}})
	h, err := d.Start(cfg)
	must.NoError(b, err)
	b.Cleanup(func() { _ = h.Kill(0); <-h.WaitCh() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for b.Loop() {
		code, err := d.Exec(ctx, cfg, &drivers.ExecOptions{Command: []string{"/taskbin", "exit", "0"}, Stdout: io.Discard, Stderr: io.Discard})
		must.NoError(b, err)
		must.Zero(b, code)
	}
}

// BenchmarkDocker_PullAndStart is Start of a task whose image the node lacks, pulled from a
// docker-registry on loopback. The image's layers stay on the node between iterations (its
// other tag keeps them), so this measures the pull's round trips, not layer transfer.
func BenchmarkDocker_PullAndStart(b *testing.B) {
	cli := dockertest.Client(b)
	dockertest.BuildImage(b, cli)
	reg := dockertest.StartRegistry(b, dockertest.RegistryOptions{})
	ref := reg.Push(b, cli, dockertest.Image, "nomadfork/pullbench:v1")
	b.Cleanup(func() { dockertest.RemoveImage(b, cli, ref) })
	root := b.TempDir()
	d := New(Options{AllocRoot: root, ImageGC: false})
	b.Cleanup(d.Shutdown)
	for b.Loop() {
		b.StopTimer()
		dockertest.RemoveImage(b, cli, ref)
		cfg := newTask(b, root, map[string]any{"image": ref, "args": []any{"sleep"}})
		b.StartTimer()
		h, err := d.Start(cfg)
		must.NoError(b, err)
		b.StopTimer()
		_ = h.Kill(0)
		<-h.WaitCh()
		b.StartTimer()
	}
}
