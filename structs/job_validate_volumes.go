package structs

import (
	"fmt"
	"path"
	"strings"

	"github.com/hashicorp/nomad/api"
)

// checkGroupVolumes checks a group's volume blocks. Only host volumes can be mounted; a CSI
// request is left to its warning (it fits no node).
func checkGroupVolumes(tg *api.TaskGroup) []string {
	var out []string
	for key, v := range tg.Volumes {
		if v == nil {
			out = append(out, fmt.Sprintf("volume %q: must not be null", key))
			continue
		}
		if (v.Type == "" || v.Type == "host") && v.Source == "" {
			out = append(out, fmt.Sprintf("volume %q: source is required for a host volume", key))
		}
	}
	return out
}

// checkVolumeMount checks one task volume_mount against the group's volumes: a mount of a
// volume the group does not declare would fail on every node, so it is refused here.
func checkVolumeMount(tg *api.TaskGroup, vm *api.VolumeMount) []string {
	if vm == nil {
		return []string{"must not be null"}
	}
	var out []string
	name := stringValue(vm.Volume)
	switch {
	case name == "":
		out = append(out, "volume is required")
	case tg.Volumes[name] == nil:
		out = append(out, fmt.Sprintf("volume %q is not declared by the group's volume blocks", name))
	}
	if msg := checkMountDestination(stringValue(vm.Destination)); msg != "" {
		out = append(out, "destination "+msg)
	}
	return out
}

// checkMountDestination refuses a destination that is empty or climbs with "..": drivers
// place it under the task's root, and a ".." segment is how a path would leave it.
func checkMountDestination(dest string) string {
	if strings.TrimSpace(dest) == "" {
		return "is required"
	}
	if strings.ContainsRune(dest, 0) {
		return "must not contain a NUL byte"
	}
	for _, seg := range strings.Split(dest, "/") {
		if seg == ".." {
			return fmt.Sprintf("%q must not contain a \"..\" segment", dest)
		}
	}
	if path.Clean("/"+dest) == "/" {
		return fmt.Sprintf("%q must not be the task's root", dest)
	}
	return ""
}
