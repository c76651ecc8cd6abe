package execdriver

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/nomadfork/nomad/client/drivers"
)

// DefaultChrootEnv is upstream's default `chroot_env`: the host paths (keys) that appear at
// the same place (values) in every task's chroot. Ours are read-only bind mounts, never
// copies; a source the host lacks (/lib32 on most machines) is left out.
var DefaultChrootEnv = map[string]string{
	"/bin":            "/bin",
	"/etc":            "/etc",
	"/lib":            "/lib",
	"/lib32":          "/lib32",
	"/lib64":          "/lib64",
	"/run/resolvconf": "/run/resolvconf",
	"/sbin":           "/sbin",
	"/usr":            "/usr",
}

// reservedTargets are the chroot's own directories: a chroot_env entry may not cover them.
var reservedTargets = []string{"/alloc", "/local", "/secrets", "/tmp", "/proc", "/dev", "/sys"}

// CheckChrootEnv refuses entries that are not absolute paths or that would hide the
// directories the driver mounts itself.
func CheckChrootEnv(env map[string]string) error {
	for src, dst := range env {
		if !path.IsAbs(src) || !path.IsAbs(dst) {
			return fmt.Errorf("chroot_env %q = %q: both paths must be absolute", src, dst)
		}
		clean := path.Clean(dst)
		if clean == "/" {
			return fmt.Errorf("chroot_env %q = %q: the chroot's root cannot be replaced", src, dst)
		}
		for _, r := range reservedTargets {
			if clean == r || strings.HasPrefix(clean, r+"/") || strings.HasPrefix(r, clean+"/") {
				return fmt.Errorf("chroot_env %q = %q: %s belongs to the task", src, dst, r)
			}
		}
	}
	return nil
}

// taskConfig is a task's `config` block for this driver, checked.
type taskConfig struct {
	Command string
	Args    []string
	// PidsLimit caps the processes and threads of the task (upstream's pids_limit); 0 is
	// no limit.
	PidsLimit int
	// CapAdd and CapDrop change the capabilities a root task keeps (caps.go).
	CapAdd, CapDrop []string
}

// configKeys are the keys this driver honours. Upstream's pid_mode and ipc_mode are not
// implemented: a job using them fails instead of running with a setting silently dropped.
var configKeys = map[string]bool{"command": true, "args": true, "pids_limit": true, "cap_add": true, "cap_drop": true}

func parseConfig(raw map[string]any) (*taskConfig, error) {
	if k, ok := drivers.UnknownKey(raw, configKeys); ok {
		return nil, fmt.Errorf("exec: unknown config key %q (this driver knows args, cap_add, cap_drop, command, pids_limit)", k)
	}
	c := &taskConfig{}
	var err error
	if c.Command, err = drivers.ConfigString(raw, "command"); err != nil {
		return nil, fmt.Errorf("exec: %w", err)
	}
	if c.Command == "" {
		return nil, fmt.Errorf(`exec: config "command" is required`)
	}
	if c.Args, err = drivers.ConfigStrings(raw, "args"); err != nil {
		return nil, fmt.Errorf("exec: %w", err)
	}
	if c.PidsLimit, err = drivers.ConfigInt(raw, "pids_limit"); err != nil {
		return nil, fmt.Errorf("exec: %w", err)
	}
	if c.CapAdd, err = drivers.ConfigStrings(raw, "cap_add"); err != nil {
		return nil, fmt.Errorf("exec: %w", err)
	}
	if c.CapDrop, err = drivers.ConfigStrings(raw, "cap_drop"); err != nil {
		return nil, fmt.Errorf("exec: %w", err)
	}
	if c.PidsLimit < 0 {
		return nil, fmt.Errorf(`exec: config "pids_limit" must be 0 (no limit) or more, not %d`, c.PidsLimit)
	}
	return c, nil
}

// PluginOptions reads the agent's `plugin "exec" { config { … } }`. Of upstream's keys it
// honours allow_caps; the others are warned about and ignored.
func PluginOptions(raw map[string]any) (o Options, warnings []string, err error) {
	keys := slices.Sorted(maps.Keys(raw))
	for _, k := range keys {
		if k != "allow_caps" {
			warnings = append(warnings, fmt.Sprintf("plugin \"exec\": config key %q is not supported by this driver and is ignored", k))
			continue
		}
		caps, err := drivers.ConfigStrings(raw, k)
		if err != nil {
			return o, nil, fmt.Errorf("plugin \"exec\": %w", err)
		}
		if _, err := parseCaps("plugin \"exec\": allow_caps", caps); err != nil {
			return o, nil, err
		}
		// Set even when empty: an empty list allows no capability at all.
		o.AllowCaps = append([]string{}, caps...)
	}
	return o, warnings, nil
}
