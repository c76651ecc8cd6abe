package client

import (
	"fmt"
	"path"
	"strings"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/drivers"
)

// taskMounts resolves a task's volume_mounts against its group's volumes and this node's
// host_volume blocks. The server validated the job, but the node's volumes are known only
// here: a mount that cannot be honoured fails the task rather than starting it without its
// data.
func taskMounts(tg *api.TaskGroup, task *api.Task, hostVolumes map[string]*api.HostVolumeInfo) ([]drivers.Mount, error) {
	var out []drivers.Mount
	for i, vm := range task.VolumeMounts {
		if vm == nil {
			continue
		}
		name := deref(vm.Volume)
		req := tg.Volumes[name]
		if req == nil {
			return nil, fmt.Errorf("volume_mount %d: volume %q is not declared by the group", i+1, name)
		}
		if req.Type != "" && req.Type != "host" {
			return nil, fmt.Errorf("volume_mount %d: volume %q is of type %q: only host volumes can be mounted", i+1, name, req.Type)
		}
		hv := hostVolumes[req.Source]
		if hv == nil {
			return nil, fmt.Errorf("volume_mount %d: this node has no host_volume %q", i+1, req.Source)
		}
		dest, err := mountDestination(deref(vm.Destination))
		if err != nil {
			return nil, fmt.Errorf("volume_mount %d: destination %w", i+1, err)
		}
		out = append(out, drivers.Mount{
			Volume:   name,
			HostPath: hv.Path,
			TaskPath: dest,
			ReadOnly: req.ReadOnly || hv.ReadOnly || (vm.ReadOnly != nil && *vm.ReadOnly),
		})
	}
	return out, nil
}

// mountDestination makes a destination absolute inside the task. A ".." segment is refused
// outright, not cleaned away: the job meant a path that leaves where it asked to be.
func mountDestination(dest string) (string, error) {
	if strings.TrimSpace(dest) == "" {
		return "", fmt.Errorf("is required")
	}
	for _, seg := range strings.Split(dest, "/") {
		if seg == ".." {
			return "", fmt.Errorf("%q must not contain a \"..\" segment", dest)
		}
	}
	clean := path.Clean("/" + dest)
	if clean == "/" {
		return "", fmt.Errorf("%q would cover the task's whole root", dest)
	}
	return clean, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
