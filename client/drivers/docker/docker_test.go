package docker

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/hashicorp/go-uuid"
	"github.com/nomadfork/nomad/client/allocdir"
	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/client/drivers/docker/dockertest"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// testDriver is a driver of the local engine whose containers are labelled with a fresh
// allocation root, with the test image built.
func testDriver(t *testing.T) (*Driver, string) {
	t.Helper()
	cli := dockertest.Client(t)
	dockertest.BuildImage(t, cli)
	root := t.TempDir()
	return New(Options{AllocRoot: root}), root
}

// newTask lays out an allocation directory under root as the client does and returns the
// configuration of its task "web".
func newTask(t testing.TB, root string, config map[string]any) *drivers.TaskConfig {
	t.Helper()
	id, err := uuid.GenerateUUID()
	must.NoError(t, err)
	allocDir := filepath.Join(root, id, "alloc")
	taskDir := filepath.Join(root, id, "web")
	for _, d := range []string{filepath.Join(allocDir, "logs"), filepath.Join(taskDir, "local"), filepath.Join(taskDir, "secrets")} {
		must.NoError(t, os.MkdirAll(d, 0o755))
	}
	return &drivers.TaskConfig{
		AllocID: id, JobName: "job", GroupName: "group", TaskName: "web",
		Config:     config,
		Env:        map[string]string{"GREETING": "hello", "NOMAD_TASK_DIR": filepath.Join(taskDir, "local")},
		TaskDir:    taskDir,
		AllocDir:   allocDir,
		StdoutPath: filepath.Join(allocDir, "logs", "web.stdout.0"),
		StderrPath: filepath.Join(allocDir, "logs", "web.stderr.0"),
	}
}

func waitExit(t *testing.T, h drivers.TaskHandle, within time.Duration) *drivers.ExitResult {
	t.Helper()
	select {
	case res := <-h.WaitCh():
		return res
	case <-time.After(within):
		t.Fatalf("task still running after %s", within)
	}
	return nil
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	must.NoError(t, err)
	return string(b)
}

func TestDocker_RunsImageLogsAndExits(t *testing.T) {
	d, root := testDriver(t)
	cfg := newTask(t, root, map[string]any{"image": dockertest.Image, "args": []any{"echo", "hello", "from", "docker"}})
	h, err := d.Start(cfg)
	must.NoError(t, err)
	res := waitExit(t, h, time.Minute)
	must.True(t, res.Successful(), must.Sprintf("result %s", res))
	must.Eq(t, "hello from docker\n", readFile(t, cfg.StdoutPath))
	must.Eq(t, "err:hello from docker\n", readFile(t, cfg.StderrPath))

	// The container is gone once its task ended.
	ctx := context.Background()
	list, err := d.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", labelAllocID+"="+cfg.AllocID))})
	must.NoError(t, err)
	must.SliceEmpty(t, list)
}

// TestDocker_LogsDisabled: with empty log paths (logs { disabled = true }) the container
// runs and no log file is written.
func TestDocker_LogsDisabled(t *testing.T) {
	d, root := testDriver(t)
	cfg := newTask(t, root, map[string]any{"image": dockertest.Image, "args": []any{"echo", "hello", "from", "docker"}})
	logs := filepath.Dir(cfg.StdoutPath)
	cfg.StdoutPath, cfg.StderrPath = "", ""
	h, err := d.Start(cfg)
	must.NoError(t, err)
	res := waitExit(t, h, time.Minute)
	must.True(t, res.Successful(), must.Sprintf("result %s", res))
	entries, err := os.ReadDir(logs)
	must.NoError(t, err)
	must.SliceEmpty(t, entries)
}

func TestDocker_ExitCodeAndCommand(t *testing.T) {
	d, root := testDriver(t)
	// command replaces the image's command; entrypoint its entrypoint.
	cfg := newTask(t, root, map[string]any{"image": dockertest.Image, "entrypoint": []any{"/taskbin"}, "command": "exit", "args": []any{"4"}})
	h, err := d.Start(cfg)
	must.NoError(t, err)
	must.Eq(t, 4, waitExit(t, h, time.Minute).ExitCode)
}

func TestDocker_AllocDirsMountedAsUpstream(t *testing.T) {
	d, root := testDriver(t)
	cases := []struct {
		name string
		dir  func(cfg *drivers.TaskConfig) string
		path string
	}{
		{name: "local", dir: func(cfg *drivers.TaskConfig) string { return filepath.Join(cfg.TaskDir, "local") }, path: "/local/greeting"},
		{name: "secrets", dir: func(cfg *drivers.TaskConfig) string { return filepath.Join(cfg.TaskDir, "secrets") }, path: "/secrets/greeting"},
		{name: "alloc", dir: func(cfg *drivers.TaskConfig) string { return cfg.AllocDir }, path: "/alloc/greeting"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := newTask(t, root, map[string]any{"image": dockertest.Image, "args": []any{"cat", tc.path}})
			must.NoError(t, os.WriteFile(filepath.Join(tc.dir(cfg), "greeting"), []byte("hi "+tc.name), 0o644))
			h, err := d.Start(cfg)
			must.NoError(t, err)
			res := waitExit(t, h, time.Minute)
			must.True(t, res.Successful(), must.Sprintf("result %s, stderr %q", res, readFile(t, cfg.StderrPath)))
			must.Eq(t, "hi "+tc.name, readFile(t, cfg.StdoutPath))
		})
	}
}

func TestDocker_ContainerEnvAndLabels(t *testing.T) {
	d, root := testDriver(t)
	cfg := newTask(t, root, map[string]any{"image": dockertest.Image})
	ccfg, _, err := d.containerConfig(cfg, &taskConfig{Image: dockertest.Image})
	must.NoError(t, err)
	must.SliceContains(t, ccfg.Env, "GREETING=hello")
	// Directories are where they are mounted, not the host's paths.
	must.SliceContains(t, ccfg.Env, "NOMAD_TASK_DIR=/local")
	must.Eq(t, cfg.AllocID, ccfg.Labels[labelAllocID])
}

func TestDocker_KillSignalWithinKillTimeout(t *testing.T) {
	d, root := testDriver(t)
	cfg := newTask(t, root, map[string]any{"image": dockertest.Image, "args": []any{"sleep"}})
	cfg.KillSignal = "SIGINT"
	h, err := d.Start(cfg)
	must.NoError(t, err)
	// Kill only once the program has set up its signal handling.
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return strings.Contains(readFile(t, cfg.StdoutPath), "sleeping")
	}), wait.Timeout(30*time.Second), wait.Gap(20*time.Millisecond)))
	start := time.Now()
	must.NoError(t, h.Kill(30*time.Second))
	res := waitExit(t, h, 30*time.Second)
	// taskbin exits 3 on SIGINT; SIGKILL after the timeout would be 137.
	must.Eq(t, 3, res.ExitCode)
	must.Less(t, 20*time.Second, time.Since(start))
	must.StrContains(t, readFile(t, cfg.StdoutPath), "got interrupt")
}

func TestDocker_KillTimeoutForcesStop(t *testing.T) {
	d, root := testDriver(t)
	// taskbin ignores SIGTERM, the default kill signal: only the SIGKILL after the timeout
	// stops it.
	cfg := newTask(t, root, map[string]any{"image": dockertest.Image, "args": []any{"sleep"}})
	h, err := d.Start(cfg)
	must.NoError(t, err)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return strings.Contains(readFile(t, cfg.StdoutPath), "sleeping")
	}), wait.Timeout(30*time.Second), wait.Gap(20*time.Millisecond)))
	must.NoError(t, h.Kill(200*time.Millisecond))
	must.Eq(t, 137, waitExit(t, h, 30*time.Second).ExitCode)
}

func TestDocker_BadTasksFailWithReason(t *testing.T) {
	d, root := testDriver(t)
	cases := []struct {
		name   string
		config map[string]any
		setup  func(cfg *drivers.TaskConfig)
		want   string
	}{
		{name: "missing image", config: map[string]any{"image": "nomadfork-no-such-image:1"}, want: `failed to pull image "nomadfork-no-such-image:1"`},
		{name: "unknown key", config: map[string]any{"image": dockertest.Image, "privileged": true}, want: `unknown config key "privileged"`},
		{name: "no image", config: map[string]any{"command": "x"}, want: `config "image" is required`},
		{name: "tarball that does not load", config: map[string]any{"image": "nomadfork-bad:1", "load": "bad.tar"},
			setup: func(cfg *drivers.TaskConfig) {
				must.NoError(t, os.WriteFile(filepath.Join(cfg.TaskDir, "bad.tar"), []byte("not a tarball"), 0o644))
			}, want: `loading image from "bad.tar"`},
		{name: "load outside the task dir", config: map[string]any{"image": dockertest.Image, "load": "../../x.tar"}, want: `config "load"`},
		{name: "volume escaping the alloc dir", config: map[string]any{"image": dockertest.Image, "volumes": []any{"../../../etc:/etc2"}}, want: "leaves the allocation directory"},
		{name: "absolute volume", config: map[string]any{"image": dockertest.Image, "volumes": []any{"/etc:/etc2"}}, want: "only relative paths"},
		{name: "invalid mount", config: map[string]any{"image": dockertest.Image, "mount": []any{map[string]any{"type": "nfs", "target": "/x", "source": "y"}}}, want: `type "nfs" is not one of bind, volume, tmpfs`},
		{name: "named volume without volumes enabled", config: map[string]any{"image": dockertest.Image, "mount": []any{map[string]any{"type": "volume", "target": "/x", "source": "shared"}}}, want: "need the docker plugin to enable volumes"},
		{name: "mount target relative", config: map[string]any{"image": dockertest.Image, "mount": []any{map[string]any{"type": "tmpfs", "target": "x"}}}, want: "must be an absolute path"},
		{name: "port without a host port", config: map[string]any{"image": dockertest.Image, "ports": []any{"http"}},
			setup: func(cfg *drivers.TaskConfig) { cfg.Ports = []drivers.PortMapping{{Label: "http"}} }, want: `port "http" has no host port in the allocation`},
		{name: "unknown port", config: map[string]any{"image": dockertest.Image, "ports": []any{"db"}}, want: `no port "db"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := newTask(t, root, tc.config)
			if tc.setup != nil {
				tc.setup(cfg)
			}
			_, err := d.Start(cfg)
			must.ErrorContains(t, err, tc.want)
		})
	}
}

func TestDocker_LoadsImageFromTarball(t *testing.T) {
	d, root := testDriver(t)
	ctx := context.Background()
	// A second tag of the test image, saved to the task directory and removed from the
	// engine: only loading the tarball brings it back.
	const tag = "nomadfork-docker-test:loaded"
	must.NoError(t, d.cli.ImageTag(ctx, dockertest.Image, tag))
	cfg := newTask(t, root, map[string]any{"image": tag, "load": "image.tar", "args": []any{"echo", "loaded"}})
	rc, err := d.cli.ImageSave(ctx, []string{tag})
	must.NoError(t, err)
	var buf bytes.Buffer
	_, err = buf.ReadFrom(rc)
	must.NoError(t, err)
	_ = rc.Close()
	must.NoError(t, os.WriteFile(filepath.Join(cfg.TaskDir, "image.tar"), buf.Bytes(), 0o644))
	_, err = d.cli.ImageRemove(ctx, tag, image.RemoveOptions{})
	must.NoError(t, err)
	t.Cleanup(func() { _, _ = d.cli.ImageRemove(context.Background(), tag, image.RemoveOptions{}) })

	h, err := d.Start(cfg)
	must.NoError(t, err)
	must.True(t, waitExit(t, h, time.Minute).Successful())
	must.Eq(t, "loaded\n", readFile(t, cfg.StdoutPath))
}

func TestDocker_PortsVolumesLabelsLimits(t *testing.T) {
	d, root := testDriver(t)
	cfg := newTask(t, root, map[string]any{
		"image":   dockertest.Image,
		"args":    []any{"cat", "/data/file"},
		"ports":   []any{"http"},
		"volumes": []any{"shared:/data:ro"},
		"mount":   []any{map[string]any{"type": "tmpfs", "target": "/scratch"}},
		"labels":  []any{map[string]any{"team": "infra"}},
	})
	// The port's host address (its host network's, chosen by the scheduler) is where docker
	// binds it.
	cfg.Ports = []drivers.PortMapping{{Label: "http", Value: 28080, To: 80, HostIP: "127.0.0.1"}}
	cfg.Resources = drivers.TaskResources{CPU: 500, MemoryMB: 64, MemoryMaxMB: 128}
	must.NoError(t, os.MkdirAll(filepath.Join(cfg.TaskDir, "shared"), 0o755))
	must.NoError(t, os.WriteFile(filepath.Join(cfg.TaskDir, "shared", "file"), []byte("volume"), 0o644))

	c, err := parseConfig(cfg.Config)
	must.NoError(t, err)
	ccfg, hcfg, err := d.containerConfig(cfg, c)
	must.NoError(t, err)
	must.Eq(t, "infra", ccfg.Labels["team"])
	must.Eq(t, int64(128)<<20, hcfg.Memory)
	must.Eq(t, int64(64)<<20, hcfg.MemoryReservation)
	must.Eq(t, int64(500), hcfg.CPUShares)
	must.Eq(t, "28080", hcfg.PortBindings["80/tcp"][0].HostPort)
	must.Eq(t, "127.0.0.1", hcfg.PortBindings["80/tcp"][0].HostIP)

	h, err := d.Start(cfg)
	must.NoError(t, err)
	res := waitExit(t, h, time.Minute)
	must.True(t, res.Successful(), must.Sprintf("result %s, stderr %q", res, readFile(t, cfg.StderrPath)))
	must.Eq(t, "volume", readFile(t, cfg.StdoutPath))
}

func TestDocker_RemovesDanglingContainers(t *testing.T) {
	d, root := testDriver(t)
	cfg := newTask(t, root, map[string]any{"image": dockertest.Image, "args": []any{"sleep"}})
	h, err := d.Start(cfg)
	must.NoError(t, err)
	// Another agent's container, whose allocation directory exists, is not ours to remove.
	other, otherRoot := testDriver(t)
	otherCfg := newTask(t, otherRoot, map[string]any{"image": dockertest.Image, "args": []any{"sleep"}})
	oh, err := other.Start(otherCfg)
	must.NoError(t, err)
	t.Cleanup(func() { _ = oh.Kill(0); <-oh.WaitCh() })

	// A container the restarted client re-attaches to is kept.
	again := New(Options{AllocRoot: root})
	n, err := again.RemoveDangling(context.Background(), map[string]bool{h.(drivers.Persistent).HandleState().ContainerID: true})
	must.NoError(t, err)
	must.Zero(t, n)
	select {
	case <-h.WaitCh():
		t.Fatal("a kept container was removed")
	default:
	}

	// An agent starting again on the same allocation directory that keeps nothing: every
	// container labelled with it is left over.
	n, err = again.RemoveDangling(context.Background(), nil)
	must.NoError(t, err)
	must.Eq(t, 1, n)
	res := waitExit(t, h, 30*time.Second)
	must.Eq(t, 137, res.ExitCode)
	n, err = again.RemoveDangling(context.Background(), nil)
	must.NoError(t, err)
	must.Zero(t, n)
	select {
	case <-oh.WaitCh():
		t.Fatal("another agent's container was removed")
	default:
	}
}

func TestDocker_Fingerprint(t *testing.T) {
	d, _ := testDriver(t)
	info := d.Fingerprint()
	must.True(t, info.Detected)
	must.True(t, info.Healthy)
	must.NotEq(t, "", info.Attributes["driver.docker.version"])
	must.Eq(t, "1", info.Attributes["driver.docker"])

	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "no.sock"))
	down := New(Options{})
	info = down.Fingerprint()
	must.False(t, info.Detected)
	must.False(t, info.Healthy)
	must.StrContains(t, info.HealthDescription, "Failed to connect to docker daemon")
}

// TestSecurity_DockerBindThroughLink: a link the task left in its directory cannot make the
// engine mount a host directory outside the allocation's.
func TestSecurity_DockerBindThroughLink(t *testing.T) {
	d, root := testDriver(t)
	cfg := newTask(t, root, map[string]any{"image": dockertest.Image, "volumes": []any{"escape:/host"}})
	must.NoError(t, os.Symlink("/etc", filepath.Join(cfg.TaskDir, "escape")))
	_, err := d.Start(cfg)
	must.ErrorContains(t, err, "through a link")
	_, err = allocdir.Rel(root, cfg.TaskDir)
	must.NoError(t, err)
}

func TestDocker_PluginOptions(t *testing.T) {
	// Upstream's defaults: images pulled are collected 3m after their last use.
	defaults := Options{ImageGC: true, ImageGCDelay: 3 * time.Minute}
	with := func(f func(*Options)) Options {
		o := defaults
		f(&o)
		return o
	}
	cases := []struct {
		name     string
		raw      map[string]any
		want     Options
		warnings int
		err      string
	}{
		{name: "none", raw: nil, want: defaults},
		{name: "volumes block", raw: map[string]any{"volumes": map[string]any{"enabled": true}}, want: with(func(o *Options) { o.VolumesEnabled = true })},
		{name: "volumes from JSON", raw: map[string]any{"volumes": []any{map[string]any{"enabled": true}}}, want: with(func(o *Options) { o.VolumesEnabled = true })},
		{name: "upstream key warned", raw: map[string]any{"allow_privileged": true}, want: defaults, warnings: 1},
		{name: "bad volumes", raw: map[string]any{"volumes": map[string]any{"enabled": "yes"}}, err: `"enabled" must be a bool`},
		{name: "auth config and helper", raw: map[string]any{"auth": map[string]any{"config": "/etc/docker.json", "helper": "ecr-login"}},
			want: with(func(o *Options) { o.AuthConfig, o.AuthHelper = "/etc/docker.json", "ecr-login" })},
		{name: "auth helper path refused", raw: map[string]any{"auth": map[string]any{"helper": "/bin/sh"}}, err: "must be a name"},
		{name: "gc off and delay", raw: map[string]any{"gc": []any{map[string]any{"image": false, "image_delay": "10s"}}},
			want: with(func(o *Options) { o.ImageGC, o.ImageGCDelay = false, 10*time.Second })},
		{name: "gc bad delay", raw: map[string]any{"gc": map[string]any{"image_delay": "soon"}}, err: `image_delay "soon"`},
		{name: "gc container warned", raw: map[string]any{"gc": map[string]any{"container": false}}, want: defaults, warnings: 1},
		{name: "pull activity timeout", raw: map[string]any{"pull_activity_timeout": "30s"}, want: with(func(o *Options) { o.PullActivityTimeout = 30 * time.Second })},
		{name: "bad pull activity timeout", raw: map[string]any{"pull_activity_timeout": "0s"}, err: "not a positive duration"},
		{name: "unknown auth key", raw: map[string]any{"auth": map[string]any{"password": "x"}}, err: `unknown key "password"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, warnings, err := PluginOptions(tc.raw)
			if tc.err != "" {
				must.ErrorContains(t, err, tc.err)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.want, got)
			must.Len(t, tc.warnings, warnings)
		})
	}
}

func writeFile(path, body string) error { return os.WriteFile(path, []byte(body), 0o644) }

// The task's `user` is the container's user.
func TestDocker_TaskUser(t *testing.T) {
	d, root := testDriver(t)
	cfg := newTask(t, root, map[string]any{"image": dockertest.Image, "args": []any{"cat", "/proc/self/status"}})
	cfg.User = "1234:1234"
	h, err := d.Start(cfg)
	must.NoError(t, err)
	res := waitExit(t, h, time.Minute)
	must.True(t, res.Successful(), must.Sprintf("result %s", res))
	must.StrContains(t, readFile(t, cfg.StdoutPath), "Uid:\t1234\t1234\t1234\t1234")
}
