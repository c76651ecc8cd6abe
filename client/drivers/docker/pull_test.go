package docker

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/client"
	"github.com/hashicorp/go-uuid"
	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/client/drivers/docker/dockertest"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// pullDriver is a driver of the local engine, stopped when the test ends, with the test image
// built.
func pullDriver(t *testing.T, opts Options) (*Driver, *client.Client, string) {
	t.Helper()
	cli := dockertest.Client(t)
	dockertest.BuildImage(t, cli)
	opts.AllocRoot = t.TempDir()
	d := New(opts)
	d.progressEvery = time.Nanosecond
	t.Cleanup(d.Shutdown)
	return d, cli, opts.AllocRoot
}

// uniqueRepo is a repository name no other test pushes or pulls.
func uniqueRepo(t *testing.T) string {
	t.Helper()
	id, err := uuid.GenerateUUID()
	must.NoError(t, err)
	return "nomadfork/pulltest-" + id[:8] + ":v1"
}

// events records a task's driver messages.
type events struct {
	mu   sync.Mutex
	msgs []string
}

func (e *events) hook(cfg *drivers.TaskConfig) *drivers.TaskConfig {
	cfg.Event = func(m string) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.msgs = append(e.msgs, m)
	}
	return cfg
}

func (e *events) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.msgs, "\n")
}

func (d *Driver) pullCount() int {
	d.pulls.mu.Lock()
	defer d.pulls.mu.Unlock()
	return d.pulls.pulls
}

func (d *Driver) pullWaiters() int {
	d.pulls.mu.Lock()
	defer d.pulls.mu.Unlock()
	n := 0
	for _, c := range d.pulls.calls {
		n += len(c.waiters)
	}
	return n
}

func imagePresent(cli *client.Client, ref string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := cli.ImageInspect(ctx, ref)
	return err == nil
}

func runToExit(t *testing.T, d *Driver, cfg *drivers.TaskConfig) {
	t.Helper()
	h, err := d.Start(cfg)
	must.NoError(t, err)
	res := waitExit(t, h, time.Minute)
	must.True(t, res.Successful(), must.Sprintf("result %s", res))
}

func TestDocker_PullsFromRegistry(t *testing.T) {
	cases := []struct {
		name   string
		opts   dockertest.RegistryOptions
		bridge bool
	}{
		{name: "plain HTTP", opts: dockertest.RegistryOptions{}},
		{name: "TLS with htpasswd", opts: dockertest.RegistryOptions{TLS: true, Username: "alice", Password: "s3cret-pw"}},
		// Off loopback the engine verifies the certificate: the CA in certs.d is what lets it.
		{name: "TLS verified by the engine", opts: dockertest.RegistryOptions{TLS: true, Username: "alice", Password: "s3cret-pw"}, bridge: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, cli, root := pullDriver(t, Options{})
			if tc.bridge {
				tc.opts.Host = dockertest.BridgeHost(t, cli)
			}
			reg := dockertest.StartRegistry(t, tc.opts)
			ref := reg.Push(t, cli, dockertest.Image, uniqueRepo(t))
			t.Cleanup(func() { dockertest.RemoveImage(t, cli, ref) })
			must.False(t, imagePresent(cli, ref))

			config := map[string]any{"image": ref, "args": []any{"echo", "pulled"}}
			if a := reg.Auth(); a != nil {
				config["auth"] = map[string]any{"username": a.Username, "password": a.Password, "server_address": reg.Addr}
			}
			var ev events
			cfg := ev.hook(newTask(t, root, config))
			runToExit(t, d, cfg)
			must.StrContains(t, readFile(t, cfg.StdoutPath), "pulled")
			must.Eq(t, 1, d.pullCount())
			must.StrContains(t, ev.String(), "Downloading image "+ref)
			must.StrContains(t, ev.String(), "layers done")
			must.True(t, imagePresent(cli, ref))
			if tc.opts.Password != "" {
				must.StrNotContains(t, ev.String(), tc.opts.Password)
			}
		})
	}
}

func TestDocker_PullFailuresNameRegistryAnswer(t *testing.T) {
	d, cli, root := pullDriver(t, Options{})
	plain := dockertest.StartRegistry(t, dockertest.RegistryOptions{})
	// Off loopback: the engine does not retry a refused pull over plain HTTP there, so the
	// registry's 401 reaches the error.
	secured := dockertest.StartRegistry(t, dockertest.RegistryOptions{TLS: true, Username: "alice", Password: "right-pw", Host: dockertest.BridgeHost(t, cli)})
	securedRef := secured.Push(t, cli, dockertest.Image, uniqueRepo(t))
	// Off loopback, with its CA not given to the engine: the TLS handshake fails before any
	// image is asked for, so none is pushed.
	untrusted := dockertest.StartRegistry(t, dockertest.RegistryOptions{TLS: true, Username: "alice", Password: "right-pw",
		Host: dockertest.BridgeHost(t, cli), Untrusted: true})
	untrustedRef := untrusted.Addr + "/" + uniqueRepo(t)
	cases := []struct {
		name   string
		config map[string]any
		want   string
	}{
		{name: "tag not in registry", config: map[string]any{"image": plain.Addr + "/nomadfork/absent:v1"}, want: "not found"},
		{name: "wrong password", config: map[string]any{"image": securedRef,
			"auth": map[string]any{"username": "alice", "password": "wrong-pw-123"}}, want: "unauthorized"},
		{name: "no credentials", config: map[string]any{"image": securedRef}, want: "unauthorized"},
		{name: "wrong password, soft fail still refused", config: map[string]any{"image": securedRef, "auth_soft_fail": true,
			"auth": map[string]any{"username": "alice", "password": "wrong-pw-123"}}, want: "unauthorized"},
		{name: "certificate not trusted", config: map[string]any{"image": untrustedRef,
			"auth": map[string]any{"username": "alice", "password": "right-pw"}}, want: "certificate is not trusted"},
		{name: "unreachable registry", config: map[string]any{"image": dockertest.FreeAddr(t) + "/nomadfork/x:v1"}, want: "registry unreachable"},
		{name: "pull timeout", config: map[string]any{"image": plain.Addr + "/nomadfork/absent:v1", "image_pull_timeout": "1ns"}, want: "image_pull_timeout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := d.Start(newTask(t, root, tc.config))
			must.ErrorContains(t, err, tc.want)
			must.ErrorContains(t, err, "failed to pull image", must.Sprintf("not a pull error: %v", err))
			must.StrNotContains(t, err.Error(), "wrong-pw-123")
		})
	}
}

func TestDocker_AuthSoftFailPullsWithoutCredentials(t *testing.T) {
	cases := []struct {
		name     string
		softFail bool
		wantErr  string
	}{
		{name: "soft fail falls back", softFail: true},
		{name: "without soft fail the task fails", softFail: false, wantErr: "unauthorized"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, cli, root := pullDriver(t, Options{})
			reg := dockertest.StartRegistry(t, dockertest.RegistryOptions{})
			proxy := dockertest.StartProxy(t, reg, dockertest.ProxyOptions{RejectCredentials: true})
			repo := uniqueRepo(t)
			reg.Push(t, cli, dockertest.Image, repo)
			ref := proxy.Addr + "/" + repo
			t.Cleanup(func() { dockertest.RemoveImage(t, cli, ref) })
			var ev events
			cfg := ev.hook(newTask(t, root, map[string]any{"image": ref, "args": []any{"echo", "ok"}, "auth_soft_fail": tc.softFail,
				"auth": map[string]any{"username": "bob", "password": "stale-pw-456"}}))
			h, err := d.Start(cfg)
			if tc.wantErr != "" {
				must.ErrorContains(t, err, tc.wantErr)
				return
			}
			must.NoError(t, err)
			must.True(t, waitExit(t, h, time.Minute).Successful())
			must.StrContains(t, ev.String(), "retrying without credentials")
			must.StrNotContains(t, ev.String(), "stale-pw-456")
		})
	}
}

func TestDocker_ForcePull(t *testing.T) {
	cases := []struct {
		name      string
		forcePull bool
		tag       string
		wantPulls int
	}{
		{name: "present image is not pulled again", forcePull: false, tag: "v1", wantPulls: 1},
		{name: "force_pull pulls every start", forcePull: true, tag: "v1", wantPulls: 2},
		{name: "latest tag pulls every start", forcePull: false, tag: "latest", wantPulls: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, cli, root := pullDriver(t, Options{})
			reg := dockertest.StartRegistry(t, dockertest.RegistryOptions{})
			ref := reg.Push(t, cli, dockertest.Image, strings.TrimSuffix(uniqueRepo(t), ":v1")+":"+tc.tag)
			t.Cleanup(func() { dockertest.RemoveImage(t, cli, ref) })
			for range 2 {
				runToExit(t, d, newTask(t, root, map[string]any{"image": ref, "args": []any{"echo", "x"}, "force_pull": tc.forcePull}))
			}
			must.Eq(t, tc.wantPulls, d.pullCount())
		})
	}
}

// Two tasks wanting one image share one pull; a third whose image_pull_timeout ends gives
// up alone and the pull goes on for the others.
func TestDocker_ConcurrentPullsCoalesced(t *testing.T) {
	d, cli, root := pullDriver(t, Options{})
	reg := dockertest.StartRegistry(t, dockertest.RegistryOptions{})
	proxy := dockertest.StartProxy(t, reg, dockertest.ProxyOptions{Gate: true})
	repo := uniqueRepo(t)
	reg.Push(t, cli, dockertest.Image, repo)
	ref := proxy.Addr + "/" + repo
	t.Cleanup(func() { dockertest.RemoveImage(t, cli, ref) })

	type result struct {
		h   drivers.TaskHandle
		err error
	}
	start := func(config map[string]any) chan result {
		ch := make(chan result, 1)
		cfg := newTask(t, root, config)
		go func() {
			h, err := d.Start(cfg)
			ch <- result{h, err}
		}()
		return ch
	}
	a := start(map[string]any{"image": ref, "args": []any{"echo", "a"}})
	b := start(map[string]any{"image": ref, "args": []any{"echo", "b"}})
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool { return d.pullWaiters() == 2 }),
		wait.Timeout(time.Minute), wait.Gap(20*time.Millisecond)))
	impatient := start(map[string]any{"image": ref, "image_pull_timeout": "1s"})
	res := <-impatient
	must.ErrorContains(t, res.err, "image_pull_timeout")
	must.Eq(t, 2, d.pullWaiters())

	proxy.Release()
	for _, ch := range []chan result{a, b} {
		r := <-ch
		must.NoError(t, r.err)
		must.True(t, waitExit(t, r.h, time.Minute).Successful())
	}
	must.Eq(t, 1, d.pullCount())
}

func TestDocker_ImageGC(t *testing.T) {
	cases := []struct {
		name        string
		gc          bool
		reuse       bool
		wantRemoved bool
	}{
		{name: "removed after the delay once unused", gc: true, wantRemoved: true},
		{name: "kept when a task uses it again within the delay", gc: true, reuse: true},
		{name: "kept with gc disabled", gc: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			delay := 500 * time.Millisecond
			if tc.reuse {
				delay = 5 * time.Second
			}
			d, cli, root := pullDriver(t, Options{ImageGC: tc.gc, ImageGCDelay: delay})
			reg := dockertest.StartRegistry(t, dockertest.RegistryOptions{})
			ref := reg.Push(t, cli, dockertest.Image, uniqueRepo(t))
			t.Cleanup(func() { dockertest.RemoveImage(t, cli, ref) })

			long, err := d.Start(newTask(t, root, map[string]any{"image": ref, "args": []any{"sleep"}}))
			must.NoError(t, err)
			// A second task ends while the first still uses the image: it stays.
			runToExit(t, d, newTask(t, root, map[string]any{"image": ref, "args": []any{"echo", "x"}}))
			must.Wait(t, wait.ContinualSuccess(wait.BoolFunc(func() bool { return imagePresent(cli, ref) }),
				wait.Timeout(2*delay), wait.Gap(100*time.Millisecond)), must.Sprint("removed while referenced"))

			must.NoError(t, long.Kill(time.Second))
			waitExit(t, long, time.Minute)
			if tc.reuse {
				again, err := d.Start(newTask(t, root, map[string]any{"image": ref, "args": []any{"sleep"}}))
				must.NoError(t, err)
				t.Cleanup(func() { _ = again.Kill(time.Second); waitExit(t, again, time.Minute) })
				// Past the delay of the first task's end.
				must.Wait(t, wait.ContinualSuccess(wait.BoolFunc(func() bool { return imagePresent(cli, ref) }),
					wait.Timeout(delay+time.Second), wait.Gap(100*time.Millisecond)), must.Sprint("removed while used again"))
				return
			}
			if tc.wantRemoved {
				must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool { return !imagePresent(cli, ref) }),
					wait.Timeout(30*time.Second), wait.Gap(100*time.Millisecond)))
				return
			}
			must.Wait(t, wait.ContinualSuccess(wait.BoolFunc(func() bool { return imagePresent(cli, ref) }),
				wait.Timeout(2*time.Second), wait.Gap(100*time.Millisecond)), must.Sprint("image removed"))
		})
	}
}

func TestDocker_PluginAuth(t *testing.T) {
	cli := dockertest.Client(t)
	dockertest.BuildImage(t, cli)
	reg := dockertest.StartRegistry(t, dockertest.RegistryOptions{TLS: true, Username: "carol", Password: "plugin-pw"})
	ref := reg.Push(t, cli, dockertest.Image, uniqueRepo(t))

	// A credential helper answering for this registry only, as docker's helpers do.
	binDir := t.TempDir()
	helper := fmt.Sprintf("#!/bin/sh\nread server\nif [ \"$server\" = %q ]; then\n  echo '{\"ServerURL\":\"%s\",\"Username\":\"carol\",\"Secret\":\"plugin-pw\"}'\nelse\n  echo 'credentials not found in native keychain'; exit 1\nfi\n", reg.Addr, reg.Addr)
	must.NoError(t, os.WriteFile(filepath.Join(binDir, "docker-credential-test"), []byte(helper), 0o755))
	t.Setenv("PATH", binDir+string(os.PathListSeparator)+os.Getenv("PATH"))

	writeConfig := func(body string) string {
		p := filepath.Join(t.TempDir(), "config.json")
		must.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	basic := base64.StdEncoding.EncodeToString([]byte("carol:plugin-pw"))
	wrong := base64.StdEncoding.EncodeToString([]byte("carol:wrong-pw-789"))
	cases := []struct {
		name    string
		opts    Options
		auth    map[string]any
		wantErr string
	}{
		{name: "config.json auths", opts: Options{AuthConfig: writeConfig(fmt.Sprintf(`{"auths":{"https://%s":{"auth":%q}}}`, reg.Addr, basic))}},
		{name: "config.json credHelpers", opts: Options{AuthConfig: writeConfig(fmt.Sprintf(`{"credHelpers":{%q:"test"}}`, reg.Addr))}},
		{name: "config.json credsStore", opts: Options{AuthConfig: writeConfig(`{"credsStore":"test"}`)}},
		{name: "plugin helper", opts: Options{AuthHelper: "test"}},
		{name: "task auth wins over plugin auth", opts: Options{AuthConfig: writeConfig(fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, reg.Addr, wrong))},
			auth: map[string]any{"username": "carol", "password": "plugin-pw"}},
		{name: "wrong plugin credentials refused", opts: Options{AuthConfig: writeConfig(fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, reg.Addr, wrong))},
			wantErr: "unauthorized"},
		{name: "missing helper named", opts: Options{AuthHelper: "absent"}, wantErr: "docker-credential-absent"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Cleanup(func() { dockertest.RemoveImage(t, cli, ref) })
			tc.opts.AllocRoot = t.TempDir()
			d := New(tc.opts)
			t.Cleanup(d.Shutdown)
			config := map[string]any{"image": ref, "args": []any{"echo", "ok"}}
			if tc.auth != nil {
				config["auth"] = tc.auth
			}
			h, err := d.Start(newTask(t, tc.opts.AllocRoot, config))
			if tc.wantErr != "" {
				must.ErrorContains(t, err, tc.wantErr)
				must.StrNotContains(t, err.Error(), "wrong-pw-789")
				return
			}
			must.NoError(t, err)
			must.True(t, waitExit(t, h, time.Minute).Successful())
		})
	}
}

func TestDocker_ImageNames(t *testing.T) {
	cases := []struct {
		name       string
		ref        string
		wantLatest bool
		wantKey    string
	}{
		{name: "no tag", ref: "redis", wantLatest: true, wantKey: "redis:latest"},
		{name: "latest", ref: "docker.io/library/redis:latest", wantLatest: true, wantKey: "redis:latest"},
		{name: "tag", ref: "redis:7", wantLatest: false, wantKey: "redis:7"},
		{name: "registry with port", ref: "127.0.0.1:5000/team/web", wantLatest: true, wantKey: "127.0.0.1:5000/team/web:latest"},
		{name: "digest", ref: "redis@sha256:" + strings.Repeat("a", 64), wantLatest: false, wantKey: "redis@sha256:" + strings.Repeat("a", 64)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.wantLatest, latestTag(tc.ref))
			must.Eq(t, tc.wantKey, imageKey(tc.ref))
		})
	}
}

// A pull that makes no progress is cancelled after pull_activity_timeout even though the
// task's image_pull_timeout is longer, and the error says which limit ended it.
func TestDocker_PullActivityTimeout(t *testing.T) {
	d, cli, root := pullDriver(t, Options{PullActivityTimeout: time.Second})
	reg := dockertest.StartRegistry(t, dockertest.RegistryOptions{})
	proxy := dockertest.StartProxy(t, reg, dockertest.ProxyOptions{Gate: true})
	repo := uniqueRepo(t)
	reg.Push(t, cli, dockertest.Image, repo)
	ref := proxy.Addr + "/" + repo
	t.Cleanup(func() { dockertest.RemoveImage(t, cli, ref) })

	_, err := d.Start(newTask(t, root, map[string]any{"image": ref, "image_pull_timeout": "10m"}))
	must.ErrorContains(t, err, "no progress within pull_activity_timeout 1s")
	must.False(t, imagePresent(cli, ref))
}

// A pull every waiter gave up on is cancelled and forgotten: the next task starts a pull of
// its own instead of joining the cancelled one. Shutdown cancels a pull under way and refuses
// new ones.
func TestDocker_AbandonedPullAndShutdown(t *testing.T) {
	d, cli, root := pullDriver(t, Options{})
	reg := dockertest.StartRegistry(t, dockertest.RegistryOptions{})
	proxy := dockertest.StartProxy(t, reg, dockertest.ProxyOptions{Gate: true})
	repo := uniqueRepo(t)
	reg.Push(t, cli, dockertest.Image, repo)
	ref := proxy.Addr + "/" + repo
	t.Cleanup(func() { dockertest.RemoveImage(t, cli, ref) })

	_, err := d.Start(newTask(t, root, map[string]any{"image": ref, "image_pull_timeout": "1s"}))
	must.ErrorContains(t, err, "image_pull_timeout")
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		d.pulls.mu.Lock()
		defer d.pulls.mu.Unlock()
		return len(d.pulls.calls) == 0
	}), wait.Timeout(time.Minute), wait.Gap(20*time.Millisecond)))

	// Still held at the gate: Shutdown ends it.
	errCh := make(chan error, 1)
	go func() {
		_, err := d.Start(newTask(t, root, map[string]any{"image": ref}))
		errCh <- err
	}()
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool { return d.pullWaiters() == 1 }),
		wait.Timeout(time.Minute), wait.Gap(20*time.Millisecond)))
	must.Eq(t, 2, d.pullCount())
	d.Shutdown()
	must.Error(t, <-errCh)
	_, err = d.Start(newTask(t, root, map[string]any{"image": ref}))
	must.ErrorContains(t, err, "shutting down")
	must.False(t, imagePresent(cli, ref))
}
