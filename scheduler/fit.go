package scheduler

import (
	"strconv"

	"github.com/nomadfork/nomad/structs"
)

// NodeFits reports why the allocations placed do not fit on node next to the allocations
// existing there, "" when they do. The plan applier asks it against the latest state, after
// a worker planned on an older snapshot: what the worker's snapshot did not hold (another
// worker's placements) may have taken the room since. existing that are terminal are not
// counted; placed are counted as given, with the ports the scheduler gave them. It uses the
// same counting as placement (capacity less reservations, a dimension the node did not
// report is not enforced), so a plan computed on the latest state always fits.
func NodeFits(n *structs.Node, existing, placed []*structs.Allocation) string {
	if n == nil {
		return "node not found"
	}
	c := nodeCapacity(n)
	u := newUsage(n)
	for _, a := range existing {
		if a == nil || a.TerminalStatus() || u.ids[a.ID] {
			continue
		}
		u.ids[a.ID] = true
		u.add(allocAmount(a), 1)
	}
	for _, a := range placed {
		if a == nil {
			continue
		}
		am := allocAmount(a)
		ignored := collisionTolerant(a)
		for _, p := range am.ports {
			if u.ports.taken(p.ip, p.port) && !ignored[p.port] {
				return "network: reserved port collision " + strconv.Itoa(p.port)
			}
		}
		u.add(am, 1)
	}
	switch {
	case c.cores > 0 && u.cores > c.cores:
		return "cores"
	case exceeds(c.cpu, u.cpu, 0):
		return "cpu"
	case exceeds(c.mem, u.mem, 0):
		return "memory"
	case exceeds(c.disk, u.disk, 0):
		return "disk"
	}
	return ""
}

// collisionTolerant are the static ports of a placed allocation that asked to ignore
// collisions.
func collisionTolerant(a *structs.Allocation) map[int]bool {
	out := map[int]bool{}
	if a.AllocatedResources == nil {
		return out
	}
	for _, n := range a.AllocatedResources.Shared.Networks {
		if n == nil {
			continue
		}
		for _, p := range n.ReservedPorts {
			if p.IgnoreCollision {
				out[p.Value] = true
			}
		}
	}
	return out
}
