package docker

import (
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/registry"
	"github.com/nomadfork/nomad/client/allocdir"
	"github.com/nomadfork/nomad/client/drivers"
)

// taskConfig is a task's `config` block for this driver, checked.
type taskConfig struct {
	Image       string
	Load        string
	Command     string
	Args        []string
	Entrypoint  []string
	Ports       []string
	Volumes     []string
	Mounts      []mountConfig
	NetworkMode string
	Labels      map[string]string
	WorkDir     string

	// Auth is the task's `auth` block: credentials for the image's registry, which win over
	// the plugin's. Never logged or put in an error.
	Auth         *registry.AuthConfig
	AuthSoftFail bool
	ForcePull    bool
	PullTimeout  time.Duration
}

type mountConfig struct {
	Type     string
	Target   string
	Source   string
	ReadOnly bool
}

// configKeys are the keys this driver honours; any other is refused, so that a key of
// upstream's driver we do not implement fails the task instead of being silently dropped.
var configKeys = map[string]bool{
	"image": true, "load": true, "command": true, "args": true, "entrypoint": true,
	"ports": true, "volumes": true, "mount": true, "network_mode": true, "labels": true,
	"work_dir": true, "auth": true, "auth_soft_fail": true, "force_pull": true, "image_pull_timeout": true,
}

// parseConfig reads and checks a task's config block.
func parseConfig(raw map[string]any) (*taskConfig, error) {
	if k, ok := drivers.UnknownKey(raw, configKeys); ok {
		return nil, fmt.Errorf("docker: unknown config key %q (this driver knows %s)", k, strings.Join(knownKeys(), ", "))
	}
	c := &taskConfig{}
	var err error
	for _, f := range []struct {
		key string
		dst *string
	}{{"image", &c.Image}, {"load", &c.Load}, {"command", &c.Command}, {"network_mode", &c.NetworkMode}, {"work_dir", &c.WorkDir}} {
		if *f.dst, err = drivers.ConfigString(raw, f.key); err != nil {
			return nil, fmt.Errorf("docker: %w", err)
		}
	}
	if c.Image == "" {
		return nil, fmt.Errorf(`docker: config "image" is required`)
	}
	for _, f := range []struct {
		key string
		dst *[]string
	}{{"args", &c.Args}, {"entrypoint", &c.Entrypoint}, {"ports", &c.Ports}, {"volumes", &c.Volumes}} {
		if *f.dst, err = drivers.ConfigStrings(raw, f.key); err != nil {
			return nil, fmt.Errorf("docker: %w", err)
		}
	}
	if c.Labels, err = stringMap(raw["labels"], "labels"); err != nil {
		return nil, err
	}
	if err := parsePullConfig(raw, c); err != nil {
		return nil, err
	}
	blocks, err := blockList(raw["mount"], "mount")
	if err != nil {
		return nil, err
	}
	for i, b := range blocks {
		m, err := parseMount(b)
		if err != nil {
			return nil, fmt.Errorf("docker: config \"mount\"[%d]: %w", i, err)
		}
		c.Mounts = append(c.Mounts, m)
	}
	switch c.NetworkMode {
	case "", "bridge", "host", "none":
	default:
		if !strings.HasPrefix(c.NetworkMode, "container:") {
			// A user-defined network of the engine: the engine checks that it exists.
			if strings.ContainsAny(c.NetworkMode, " /") {
				return nil, fmt.Errorf("docker: config \"network_mode\" %q is not a network name", c.NetworkMode)
			}
		}
	}
	return c, nil
}

func knownKeys() []string {
	out := make([]string, 0, len(configKeys))
	for k := range configKeys {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var mountKeys = map[string]bool{"type": true, "target": true, "source": true, "readonly": true}

func parseMount(b map[string]any) (mountConfig, error) {
	var m mountConfig
	for k := range b {
		if !mountKeys[k] {
			return m, fmt.Errorf("unknown key %q (a mount has type, target, source, readonly)", k)
		}
	}
	var err error
	if m.Type, err = drivers.ConfigString(b, "type"); err != nil {
		return m, err
	}
	if m.Target, err = drivers.ConfigString(b, "target"); err != nil {
		return m, err
	}
	if m.Source, err = drivers.ConfigString(b, "source"); err != nil {
		return m, err
	}
	if v, ok := b["readonly"]; ok {
		if m.ReadOnly, ok = v.(bool); !ok {
			return m, fmt.Errorf(`"readonly" must be a bool, not %T`, v)
		}
	}
	if m.Type == "" {
		m.Type = "volume"
	}
	switch m.Type {
	case "bind", "volume", "tmpfs":
	default:
		return m, fmt.Errorf("type %q is not one of bind, volume, tmpfs", m.Type)
	}
	if !path.IsAbs(m.Target) {
		return m, fmt.Errorf("target %q must be an absolute path in the container", m.Target)
	}
	if m.Type != "tmpfs" && m.Source == "" {
		return m, fmt.Errorf("a %s mount needs a source", m.Type)
	}
	return m, nil
}

// stringMap reads a map of strings given as an HCL attribute (a map) or block (a list of
// maps), as the job's JSON or msgpack form leaves it.
func stringMap(raw any, key string) (map[string]string, error) {
	if raw == nil {
		return nil, nil
	}
	var maps []map[string]any
	switch v := raw.(type) {
	case map[string]any:
		maps = []map[string]any{v}
	case map[string]string:
		return v, nil
	default:
		var err error
		if maps, err = blockList(raw, key); err != nil {
			return nil, err
		}
	}
	out := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("docker: config %q[%q] must be a string, not %T", key, k, v)
			}
			out[k] = s
		}
	}
	return out, nil
}

// blockList reads repeated blocks, which decode to a list of maps.
func blockList(raw any, key string) ([]map[string]any, error) {
	switch v := raw.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return []map[string]any{v}, nil
	case []map[string]any:
		return v, nil
	case []any:
		out := make([]map[string]any, 0, len(v))
		for i, item := range v {
			m, ok := item.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("docker: config %q[%d] must be a block, not %T", key, i, item)
			}
			out = append(out, m)
		}
		return out, nil
	}
	return nil, fmt.Errorf("docker: config %q must be a block, not %T", key, raw)
}

// hostPath resolves the host side of a volume or bind mount. A relative path is under the
// task's directory and may not leave the allocation's directory; an absolute one is allowed
// only when the agent enables volumes (it exposes any host path to the task).
func (d *Driver) hostPath(cfg *drivers.TaskConfig, src string) (string, error) {
	if filepath.IsAbs(src) {
		if !d.opts.VolumesEnabled {
			return "", fmt.Errorf("host path %q is absolute: only relative paths (under the task directory) are allowed unless the docker plugin enables volumes", src)
		}
		for _, dir := range d.opts.ProtectedDirs {
			if dir != "" && allocdir.Overlaps(src, dir) {
				return "", fmt.Errorf("host path %q contains or lies inside the agent's directory %q", src, dir)
			}
		}
		return filepath.Clean(src), nil
	}
	root, err := filepath.Abs(filepath.Dir(cfg.AllocDir))
	if err != nil {
		return "", err
	}
	taskDir, err := filepath.Abs(cfg.TaskDir)
	if err != nil {
		return "", err
	}
	p := filepath.Join(taskDir, src)
	if _, err := allocdir.Rel(root, p); err != nil {
		return "", fmt.Errorf("host path %q leaves the allocation directory", src)
	}
	// The engine follows links when it mounts: a link the task left in its directory must not
	// lead it out of the allocation's.
	if resolved, err := filepath.EvalSymlinks(p); err == nil {
		realRoot, err := filepath.EvalSymlinks(root)
		if err != nil {
			return "", err
		}
		if _, err := allocdir.Rel(realRoot, resolved); err != nil {
			return "", fmt.Errorf("host path %q leads out of the allocation directory through a link", src)
		}
		return resolved, nil
	}
	return p, nil
}

// binds are the allocation's directories as upstream mounts them, then the task's volumes.
func (d *Driver) binds(cfg *drivers.TaskConfig, c *taskConfig) ([]string, []mount.Mount, error) {
	// The engine wants absolute host paths; the agent's may be relative to where it started.
	allocDir, err := filepath.Abs(cfg.AllocDir)
	if err != nil {
		return nil, nil, err
	}
	taskDir, err := filepath.Abs(cfg.TaskDir)
	if err != nil {
		return nil, nil, err
	}
	binds := []string{
		allocDir + ":" + containerAllocDir,
		filepath.Join(taskDir, "local") + ":" + containerTaskDir,
		filepath.Join(taskDir, "secrets") + ":" + containerSecretsDir,
	}
	for i, v := range c.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || !path.IsAbs(parts[1]) {
			return nil, nil, fmt.Errorf("docker: config \"volumes\"[%d] %q is not host_path:container_path[:ro|rw]", i, v)
		}
		if len(parts) == 3 && parts[2] != "ro" && parts[2] != "rw" {
			return nil, nil, fmt.Errorf("docker: config \"volumes\"[%d] %q: mode %q is not ro or rw", i, v, parts[2])
		}
		host, err := d.hostPath(cfg, parts[0])
		if err != nil {
			return nil, nil, fmt.Errorf("docker: config \"volumes\"[%d]: %w", i, err)
		}
		parts[0] = host
		binds = append(binds, strings.Join(parts, ":"))
	}
	var mounts []mount.Mount
	for i, m := range c.Mounts {
		dm := mount.Mount{Type: mount.Type(m.Type), Target: m.Target, Source: m.Source, ReadOnly: m.ReadOnly}
		switch m.Type {
		case "bind":
			host, err := d.hostPath(cfg, m.Source)
			if err != nil {
				return nil, nil, fmt.Errorf("docker: config \"mount\"[%d]: %w", i, err)
			}
			dm.Source = host
		case "volume":
			// A named volume of the engine may be one an operator bound to any host path,
			// or another job's data: as upstream, only an agent that enables volumes allows it.
			if !d.opts.VolumesEnabled {
				return nil, nil, fmt.Errorf("docker: config \"mount\"[%d]: volume mounts need the docker plugin to enable volumes", i)
			}
		}
		mounts = append(mounts, dm)
	}
	// Host volumes are the operator's own host_volume blocks, so they need no plugin
	// option, unlike the job's free-form volumes and mounts above.
	for _, m := range cfg.Mounts {
		mounts = append(mounts, mount.Mount{Type: mount.TypeBind, Source: m.HostPath, Target: m.TaskPath, ReadOnly: m.ReadOnly})
	}
	return binds, mounts, nil
}

// PluginOptions reads the agent's `plugin "docker" { config { ... } }` block: `volumes {
// enabled }`, `auth { config, helper }`, `gc { image, image_delay }` and
// `pull_activity_timeout` are honoured. Every
// other key is named in the warnings the agent logs at start (a setting of upstream's driver
// this one lacks is never silently dropped), and a malformed block is an error.
func PluginOptions(raw map[string]any) (o Options, warnings []string, err error) {
	o.ImageGC, o.ImageGCDelay = true, defaultImageGCDelay
	keys := slices.Sorted(maps.Keys(raw))
	for _, k := range keys {
		switch k {
		case "volumes", "auth", "gc":
		case "infra_image":
			s, ok := raw[k].(string)
			if !ok || s == "" {
				return o, nil, fmt.Errorf("plugin \"docker\": infra_image must be a non-empty string")
			}
			o.InfraImage = s
			continue
		case "pull_activity_timeout":
			s, ok := raw[k].(string)
			if !ok {
				return o, nil, fmt.Errorf("plugin \"docker\": pull_activity_timeout must be a string, not %T", raw[k])
			}
			if o.PullActivityTimeout, err = time.ParseDuration(s); err != nil || o.PullActivityTimeout <= 0 {
				return o, nil, fmt.Errorf("plugin \"docker\": pull_activity_timeout %q is not a positive duration", s)
			}
			continue
		default:
			warnings = append(warnings, fmt.Sprintf("plugin \"docker\": config key %q is not supported by this driver and is ignored", k))
			continue
		}
		blocks, err := blockList(raw[k], k)
		if err != nil {
			return o, nil, fmt.Errorf("plugin \"docker\": %w", err)
		}
		for _, b := range blocks {
			for bk, bv := range b {
				w, err := o.pluginKey(k, bk, bv)
				if err != nil {
					return o, nil, fmt.Errorf("plugin \"docker\": %s: %w", k, err)
				}
				if w != "" {
					warnings = append(warnings, fmt.Sprintf("plugin \"docker\": %s: %s", k, w))
				}
			}
		}
	}
	sort.Strings(warnings)
	return o, warnings, nil
}

// defaultImageGCDelay is upstream's gc.image_delay default.
const defaultImageGCDelay = 3 * time.Minute

// pluginKey sets one key of a plugin block, returning a warning for a key of upstream's that
// this driver ignores.
func (o *Options) pluginKey(block, key string, v any) (warning string, err error) {
	str := func() (string, error) {
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("%q must be a string, not %T", key, v)
		}
		return s, nil
	}
	boolean := func() (bool, error) {
		b, ok := v.(bool)
		if !ok {
			return false, fmt.Errorf("%q must be a bool, not %T", key, v)
		}
		return b, nil
	}
	switch block + "." + key {
	case "volumes.enabled":
		o.VolumesEnabled, err = boolean()
	case "auth.config":
		o.AuthConfig, err = str()
	case "auth.helper":
		o.AuthHelper, err = str()
		if err == nil && strings.ContainsAny(o.AuthHelper, "/ ") {
			err = fmt.Errorf("helper %q must be a name (the binary is docker-credential-<name> on PATH)", o.AuthHelper)
		}
	case "gc.image":
		o.ImageGC, err = boolean()
	case "gc.image_delay":
		var s string
		if s, err = str(); err == nil {
			if o.ImageGCDelay, err = time.ParseDuration(s); err != nil || o.ImageGCDelay < 0 {
				err = fmt.Errorf("image_delay %q is not a duration", s)
			}
		}
	case "gc.container", "gc.dangling_containers":
		return fmt.Sprintf("key %q is not supported by this driver and is ignored (containers are always removed when their task ends)", key), nil
	default:
		return "", fmt.Errorf("unknown key %q", key)
	}
	return "", err
}

var authKeys = map[string]bool{"username": true, "password": true, "email": true, "server_address": true}

// parsePullConfig reads the keys that decide how the task's image is pulled.
func parsePullConfig(raw map[string]any, c *taskConfig) error {
	for _, f := range []struct {
		key string
		dst *bool
	}{{"auth_soft_fail", &c.AuthSoftFail}, {"force_pull", &c.ForcePull}} {
		if v, ok := raw[f.key]; ok && v != nil {
			b, ok := v.(bool)
			if !ok {
				return fmt.Errorf("docker: config %q must be a bool, not %T", f.key, v)
			}
			*f.dst = b
		}
	}
	c.PullTimeout = defaultPullTimeout
	s, err := drivers.ConfigString(raw, "image_pull_timeout")
	if err != nil {
		return fmt.Errorf("docker: %w", err)
	}
	if s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return fmt.Errorf("docker: config \"image_pull_timeout\" %q is not a positive duration", s)
		}
		c.PullTimeout = d
	}
	blocks, err := blockList(raw["auth"], "auth")
	if err != nil {
		return err
	}
	if len(blocks) > 1 {
		return fmt.Errorf(`docker: config "auth" may be given once`)
	}
	for _, b := range blocks {
		a := &registry.AuthConfig{}
		for k, v := range b {
			if !authKeys[k] {
				return fmt.Errorf("docker: config \"auth\": unknown key %q (auth has username, password, email, server_address)", k)
			}
			s, ok := v.(string)
			if !ok {
				// Not the value: it may be a password.
				return fmt.Errorf("docker: config \"auth\": %q must be a string, not %T", k, v)
			}
			switch k {
			case "username":
				a.Username = s
			case "password":
				a.Password = s
			case "email":
				a.Email = s
			case "server_address":
				a.ServerAddress = s
			}
		}
		c.Auth = a
	}
	return nil
}
