package docker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	"github.com/docker/go-connections/nat"
	"github.com/hashicorp/go-hclog"
	"github.com/nomadfork/nomad/client/allocdir"
	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/structs"
)

// Where upstream mounts an allocation's directories in its containers.
const (
	containerAllocDir   = "/alloc"
	containerTaskDir    = "/local"
	containerSecretsDir = "/secrets"
)

// Labels on every container of ours. The first four are upstream's names, so tools that
// look for them keep working; labelAllocRoot tells the containers of this agent from those
// of another agent sharing the engine.
const (
	labelAllocID   = "com.hashicorp.nomad.alloc_id"
	labelJobName   = "com.hashicorp.nomad.job_name"
	labelGroupName = "com.hashicorp.nomad.task_group_name"
	labelTaskName  = "com.hashicorp.nomad.task_name"
	labelAllocRoot = "com.nomadfork.alloc_root"
)

// apiTimeout bounds one call to the engine that should answer at once.
const apiTimeout = 30 * time.Second

func init() { drivers.RegisterBuiltin(&Driver{}) }

// Options configure the driver from the agent's `plugin "docker"` block.
type Options struct {
	// AllocRoot is the agent's allocation directory; containers are labelled with it.
	AllocRoot string
	// VolumesEnabled lets tasks mount absolute host paths (`volumes { enabled = true }`).
	VolumesEnabled bool
	// ProtectedDirs are the agent's own directories (data_dir, client state, allocations):
	// no absolute host path a task mounts may contain or lie inside one, even with volumes
	// enabled, since the allocation secrets and client state there would be read by the task.
	ProtectedDirs []string
	// AuthConfig is a docker config.json whose auths, credHelpers and credsStore give
	// credentials for a registry; AuthHelper names a credential helper
	// (docker-credential-<name> on PATH) asked for any registry. A task's own auth block wins.
	AuthConfig string
	AuthHelper string
	// ImageGC removes an image the driver pulled ImageGCDelay after the last task using it
	// stopped (`gc { image, image_delay }`).
	ImageGC      bool
	ImageGCDelay time.Duration
	// PullActivityTimeout cancels a pull that reports no progress for that long
	// (`pull_activity_timeout`, upstream's default 2m when 0).
	PullActivityTimeout time.Duration
	// InfraImage is the image of the pause container that holds a bridge-mode allocation's
	// network namespace for its docker tasks (`infra_image`, DefaultInfraImage when "").
	InfraImage string
	Logger     hclog.Logger
}

// Driver runs tasks as containers of the local Docker Engine.
type Driver struct {
	opts Options
	cli  *client.Client
	err  error

	// ctx ends at Shutdown; pulls and image removals run on it, owned by wg.
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	shutdown sync.Once

	pulls  pullTracker
	images imageRefs
	// progressEvery is how often pull progress becomes a task event (tests shorten it).
	progressEvery time.Duration
}

// New connects to the engine named by the DOCKER_* environment (the local socket when
// unset). The containers a previous run of the agent left behind are removed by the client
// once it knows which of them it re-attaches to (RemoveDangling).
func New(opts Options) *Driver {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	d := &Driver{opts: opts}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	d.pulls.calls = map[string]*pullCall{}
	d.images = imageRefs{refs: map[string]int{}, pulled: map[string]bool{}, timers: map[string]*gcTimer{}}
	d.cli, d.err = client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	return d
}

// Shutdown implements drivers.Shutdowner: pulls under way are cancelled and images waiting
// for their GC delay are kept (the next agent does not know it pulled them).
func (d *Driver) Shutdown() {
	d.shutdown.Do(func() {
		if d.cancel == nil {
			return // not made by New: nothing was started
		}
		d.images.close()
		d.pulls.mu.Lock()
		d.cancel()
		d.pulls.mu.Unlock()
		d.wg.Wait()
	})
}

// Name implements drivers.Driver.
func (*Driver) Name() string { return "docker" }

// MountsVolumes implements drivers.VolumeMounter: host volumes become bind mounts.
func (*Driver) MountsVolumes() {}

// FSIsolation implements drivers.ExecDriver: a task sees its image's filesystem.
func (*Driver) FSIsolation() drivers.FSIsolation { return drivers.FSIsolationImage }

// Fingerprint implements drivers.Driver: healthy while the engine answers.
func (d *Driver) Fingerprint() *structs.DriverInfo {
	info := &structs.DriverInfo{UpdateTime: time.Now(), Attributes: map[string]string{}}
	if d.err != nil {
		info.HealthDescription = "Failed to create docker client: " + d.err.Error()
		return info
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	v, err := d.cli.ServerVersion(ctx)
	if err != nil {
		info.HealthDescription = "Failed to connect to docker daemon: " + err.Error()
		return info
	}
	info.Detected, info.Healthy, info.HealthDescription = true, true, "Healthy"
	info.Attributes["driver.docker"] = "1"
	info.Attributes["driver.docker.version"] = v.Version
	info.Attributes["driver.docker.api_version"] = v.APIVersion
	return info
}

// Start implements drivers.Driver.
func (d *Driver) Start(cfg *drivers.TaskConfig) (drivers.TaskHandle, error) {
	if d.err != nil {
		return nil, fmt.Errorf("docker: no client: %w", d.err)
	}
	if d.ctx.Err() != nil {
		return nil, errors.New("docker: the driver is shutting down")
	}
	c, err := parseConfig(cfg.Config)
	if err != nil {
		return nil, err
	}
	// The pull is bounded by image_pull_timeout on its own; the rest by apiTimeout.
	if err := d.ensureImage(d.ctx, cfg, c); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	ccfg, hcfg, err := d.containerConfig(cfg, c)
	if err != nil {
		return nil, err
	}
	// Held from before the container exists until it is removed: the image GC must not
	// remove the image in between.
	imgKey := imageKey(c.Image)
	d.acquireImage(imgKey)
	started := false
	defer func() {
		if !started {
			d.releaseImage(imgKey)
		}
	}()
	// Open the log files first: a task whose logs cannot be written does not start.
	stdout, stderr, err := drivers.OpenTaskLogs(cfg)
	if err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	closeLogs := func() { _ = stdout.Close(); _ = stderr.Close() }

	name := containerName(cfg)
	if cfg.NetNS != "" {
		// Bridge mode: the task shares the pause container's namespace, which the client
		// attached to the bridge; its ports are mapped by CNI, not published by the engine.
		pause, err := d.sandboxID(ctx, cfg.AllocID)
		if err != nil {
			closeLogs()
			return nil, err
		}
		hcfg.NetworkMode = container.NetworkMode("container:" + pause)
		hcfg.PortBindings, ccfg.ExposedPorts = nil, nil
		if cfg.ResolvConf != "" {
			// The group's dns block, as the allocation's resolv.conf.
			hcfg.Binds = append(hcfg.Binds, cfg.ResolvConf+":/etc/resolv.conf:ro")
		}
	}
	// A container of an earlier attempt of this task has the name already.
	_ = d.cli.ContainerRemove(ctx, name, container.RemoveOptions{Force: true})
	created, err := d.cli.ContainerCreate(ctx, ccfg, hcfg, nil, nil, name)
	if err != nil {
		closeLogs()
		return nil, fmt.Errorf("docker: creating container: %w", err)
	}
	remove := func() {
		rctx, rcancel := context.WithTimeout(context.Background(), apiTimeout)
		defer rcancel()
		_ = d.cli.ContainerRemove(rctx, created.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
		d.releaseImage(imgKey)
	}
	// Attached before the start, so that no output is missed: following the engine's log
	// instead loses a last line without a newline when the container exits.
	att, err := d.cli.ContainerAttach(ctx, created.ID, container.AttachOptions{Stream: true, Stdout: true, Stderr: true})
	if err != nil {
		closeLogs()
		remove()
		started = true // remove released the image
		return nil, fmt.Errorf("docker: attaching to container: %w", err)
	}
	if err := d.cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		att.Close()
		closeLogs()
		remove()
		started = true // remove released the image
		return nil, fmt.Errorf("docker: starting container: %w", err)
	}
	h := &handle{d: d, id: created.ID, killSignal: cfg.KillSignal, waitCh: make(chan *drivers.ExitResult, 1), done: make(chan struct{})}
	if insp, err := d.cli.ContainerInspect(ctx, created.ID); err == nil && insp.State != nil {
		h.pid = insp.State.Pid
	}
	started = true
	go h.run(att, stdout, stderr, remove)
	return h, nil
}

func containerName(cfg *drivers.TaskConfig) string {
	return cfg.TaskName + "-" + cfg.AllocID
}

// ensureImage loads the task's tarball when it has one, then pulls the image unless it is
// on the node already. As upstream, force_pull and a "latest" (or missing) tag pull at every
// start: such a name promises the registry's current image.
func (d *Driver) ensureImage(ctx context.Context, cfg *drivers.TaskConfig, c *taskConfig) error {
	if c.Load != "" {
		lctx, cancel := context.WithTimeout(ctx, c.PullTimeout)
		defer cancel()
		return d.loadImage(lctx, cfg, c)
	}
	if !c.ForcePull && !latestTag(c.Image) {
		ictx, cancel := context.WithTimeout(ctx, apiTimeout)
		_, err := d.cli.ImageInspect(ictx, c.Image)
		cancel()
		if err == nil {
			return nil
		}
		if !client.IsErrNotFound(err) && !strings.Contains(err.Error(), "No such image") {
			return fmt.Errorf("docker: inspecting image %q: %w", c.Image, err)
		}
	}
	auth, err := d.registryAuth(c)
	if err != nil {
		return err
	}
	if err := d.pull(ctx, cfg, c.Image, auth, c.AuthSoftFail, c.PullTimeout); err != nil {
		return err
	}
	d.pulledImage(imageKey(c.Image))
	return nil
}

// loadImage loads the task's tarball into the engine and checks the image is then there.
func (d *Driver) loadImage(ctx context.Context, cfg *drivers.TaskConfig, c *taskConfig) error {
	p, err := allocdir.Join(cfg.TaskDir, strings.Split(filepath.ToSlash(filepath.Clean(c.Load)), "/")...)
	if err != nil {
		return fmt.Errorf("docker: config \"load\" %q: %w", c.Load, err)
	}
	f, err := allocdir.OpenFile(cfg.TaskDir, p, os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("docker: loading image from %q: %w", c.Load, err)
	}
	defer f.Close()
	resp, err := d.cli.ImageLoad(ctx, f, client.ImageLoadWithQuiet(true))
	if err != nil {
		return fmt.Errorf("docker: loading image from %q: %w", c.Load, err)
	}
	msg, _ := readAllLimited(resp.Body, 64<<10)
	_ = resp.Body.Close()
	if strings.Contains(msg, `"error"`) {
		return fmt.Errorf("docker: loading image from %q: %s", c.Load, strings.TrimSpace(msg))
	}
	if _, err := d.cli.ImageInspect(ctx, c.Image); err != nil {
		return fmt.Errorf("docker: image %q is not in the tarball loaded from %q: %w", c.Image, c.Load, err)
	}
	return nil
}

// containerConfig builds the container from the task.
func (d *Driver) containerConfig(cfg *drivers.TaskConfig, c *taskConfig) (*container.Config, *container.HostConfig, error) {
	env := make(map[string]string, len(cfg.Env)+3)
	for k, v := range cfg.Env {
		env[k] = v
	}
	// Inside the container the directories are where they are mounted.
	env["NOMAD_ALLOC_DIR"] = containerAllocDir
	env["NOMAD_TASK_DIR"] = containerTaskDir
	env["NOMAD_SECRETS_DIR"] = containerSecretsDir
	keys := slices.Sorted(maps.Keys(env))
	envList := make([]string, 0, len(keys))
	for _, k := range keys {
		envList = append(envList, k+"="+env[k])
	}

	labels := map[string]string{}
	for k, v := range c.Labels {
		labels[k] = v
	}
	labels[labelAllocID] = cfg.AllocID
	labels[labelJobName] = cfg.JobName
	labels[labelGroupName] = cfg.GroupName
	labels[labelTaskName] = cfg.TaskName
	labels[labelAllocRoot] = d.opts.AllocRoot

	ccfg := &container.Config{
		Image:      c.Image,
		Env:        envList,
		Labels:     labels,
		WorkingDir: c.WorkDir,
		// The task's `user` (a name or uid[:gid] the image knows); the image's own when unset.
		User: cfg.User,
	}
	if c.Command != "" {
		ccfg.Cmd = append([]string{c.Command}, c.Args...)
	} else if len(c.Args) > 0 {
		ccfg.Cmd = c.Args
	}
	if len(c.Entrypoint) > 0 {
		ccfg.Entrypoint = c.Entrypoint
	}

	binds, mounts, err := d.binds(cfg, c)
	if err != nil {
		return nil, nil, err
	}
	hcfg := &container.HostConfig{
		Binds:       binds,
		Mounts:      mounts,
		NetworkMode: container.NetworkMode(c.NetworkMode),
		// The driver follows the json-file log into the task's log files.
		LogConfig: container.LogConfig{Type: "json-file", Config: map[string]string{"max-size": "10m", "max-file": "2"}},
	}
	r := cfg.Resources
	if r.MemoryMB > 0 {
		hcfg.Memory = int64(r.MemoryMB) << 20
		if r.MemoryMaxMB > r.MemoryMB {
			hcfg.Memory = int64(r.MemoryMaxMB) << 20
			hcfg.MemoryReservation = int64(r.MemoryMB) << 20
		}
		// No swap beyond the limit: the limit is the task's memory.
		hcfg.MemorySwap = hcfg.Memory
	}
	if r.CPU > 0 {
		// Shares are relative; the engine's minimum is 2.
		hcfg.CPUShares = int64(max(r.CPU, 2))
	}
	if err := portBindings(cfg, c, ccfg, hcfg); err != nil {
		return nil, nil, err
	}
	return ccfg, hcfg, nil
}

// portBindings publishes the ports the task names in `ports` on their host values.
func portBindings(cfg *drivers.TaskConfig, c *taskConfig, ccfg *container.Config, hcfg *container.HostConfig) error {
	if len(c.Ports) == 0 {
		return nil
	}
	if hcfg.NetworkMode.IsHost() {
		return fmt.Errorf(`docker: config "ports" cannot be used with network_mode "host": the task uses the host's ports directly`)
	}
	ccfg.ExposedPorts = nat.PortSet{}
	hcfg.PortBindings = nat.PortMap{}
	for _, label := range c.Ports {
		var pm *drivers.PortMapping
		for i := range cfg.Ports {
			if cfg.Ports[i].Label == label {
				pm = &cfg.Ports[i]
			}
		}
		if pm == nil {
			return fmt.Errorf("docker: config \"ports\": the group's network has no port %q", label)
		}
		if pm.Value == 0 {
			return fmt.Errorf("docker: config \"ports\": port %q has no host port in the allocation", label)
		}
		to := pm.To
		if to <= 0 {
			to = pm.Value
		}
		for _, proto := range []string{"tcp", "udp"} {
			p := nat.Port(strconv.Itoa(to) + "/" + proto)
			ccfg.ExposedPorts[p] = struct{}{}
			hcfg.PortBindings[p] = append(hcfg.PortBindings[p], nat.PortBinding{HostIP: pm.HostIP, HostPort: strconv.Itoa(pm.Value)})
		}
	}
	return nil
}

// RemoveDangling implements drivers.DanglingRemover: it removes the containers of this agent
// (labelled with its allocation directory) but those in keep, the ones the client re-attaches
// to, and those of any agent whose allocation directory is gone. The client calls it when it
// starts, before it starts any task: a container of ours not kept then is left from a run
// that ended without stopping it.
func (d *Driver) RemoveDangling(ctx context.Context, keep map[string]bool) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	if d.opts.AllocRoot == "" {
		// Without a root the driver cannot tell its containers from another agent's.
		return 0, nil
	}
	list, err := d.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", labelAllocRoot))})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, ctr := range list {
		if keep[ctr.ID] {
			continue
		}
		root, allocID := ctr.Labels[labelAllocRoot], ctr.Labels[labelAllocID]
		dangling := root == d.opts.AllocRoot
		if !dangling && root != "" && allocID != "" && allocdir.CheckElem(allocID) == nil {
			_, statErr := os.Stat(filepath.Join(root, allocID))
			dangling = errors.Is(statErr, os.ErrNotExist)
		}
		if !dangling {
			continue
		}
		if err := d.cli.ContainerRemove(ctx, ctr.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}); err == nil {
			n++
		}
	}
	return n, nil
}
