package scheduler

import (
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// state is what the groups of one plan share: the nodes, what each node's allocations use
// (this plan's placements and stops included), and the caches of compiled constraints.
type state struct {
	in    Input
	plan  *Plan
	nodes []*structs.Node
	byID  map[string]*structs.Node
	load  map[string]int
	// jobOnNode counts the job's allocations that will be running on each node.
	jobOnNode map[string]int
	stopped   map[string]bool
	usage     map[string]*usage
	match     *matcher
}

func newState(in Input, p *Plan) *state {
	st := &state{in: in, plan: p, nodes: sortedNodes(in.Nodes), byID: map[string]*structs.Node{},
		load: map[string]int{}, jobOnNode: map[string]int{}, stopped: map[string]bool{},
		usage: map[string]*usage{}, match: newMatcher()}
	for _, n := range st.nodes {
		st.byID[n.ID] = n
	}
	if in.NodeLoad != nil {
		for id, n := range in.NodeLoad {
			st.load[id] = n
		}
	} else {
		for id, allocs := range in.NodeAllocs {
			for _, a := range allocs {
				if a != nil && !a.TerminalStatus() {
					st.load[id]++
				}
			}
		}
	}
	return st
}

// stop plans a stop and gives back what the allocation used on its node, so that what
// replaces it may take its place.
func (st *state) stop(a *structs.Allocation, reason string) {
	st.plan.Stop = append(st.plan.Stop, Stop{Alloc: a, Reason: reason})
	st.stopped[a.ID] = true
	if !a.ClientTerminalStatus() && st.jobOnNode[a.NodeID] > 0 {
		st.jobOnNode[a.NodeID]--
	}
	if u := st.usage[a.NodeID]; u != nil && u.ids[a.ID] {
		delete(u.ids, a.ID)
		u.add(allocAmount(a), -1)
	}
}

// usage is what a node's allocations use.
type usage struct {
	cpu, mem, disk int64
	cores          int
	ports          portUse
	ids            map[string]bool
}

func newUsage(n *structs.Node) *usage {
	u := &usage{ids: map[string]bool{}}
	u.ports.init(n)
	return u
}

func (u *usage) add(a amount, sign int) {
	u.cpu += int64(sign) * a.cpu
	u.mem += int64(sign) * a.mem
	u.disk += int64(sign) * a.disk
	u.cores += sign * a.cores
	for _, p := range a.ports {
		u.ports.take(p, sign)
	}
}

// usageOf builds the node's usage on first use, from its allocations that are neither
// terminal nor stopped by this plan.
func (st *state) usageOf(n *structs.Node) *usage {
	if u := st.usage[n.ID]; u != nil {
		return u
	}
	u := newUsage(n)
	for _, a := range st.in.NodeAllocs[n.ID] {
		if a == nil || a.TerminalStatus() || st.stopped[a.ID] || u.ids[a.ID] {
			continue
		}
		u.ids[a.ID] = true
		u.add(allocAmount(a), 1)
	}
	st.usage[n.ID] = u
	return u
}

// amount is what one allocation uses on its node.
type amount struct {
	cpu, mem, disk int64
	cores          int
	ports          []portKey
}

// allocAmount reads what an allocation uses: what the scheduler recorded when it placed it,
// or, for one placed before resources were counted, what its group asks.
func allocAmount(a *structs.Allocation) amount {
	var out amount
	if ar := a.AllocatedResources; ar != nil {
		for _, t := range ar.Tasks {
			if t == nil {
				continue
			}
			out.cpu += t.Cpu.CpuShares
			out.cores += len(t.Cpu.ReservedCores)
			out.mem += t.Memory.MemoryMB
			out.ports = append(out.ports, networkPorts(t.Networks)...)
		}
		out.disk = ar.Shared.DiskMB
		for _, p := range ar.Shared.Ports {
			out.ports = append(out.ports, portKey{p.HostIP, p.Value})
		}
		return out
	}
	if a.Job == nil {
		return out
	}
	tg := a.Job.LookupTaskGroup(a.TaskGroup)
	if tg == nil {
		return out
	}
	k := newAsk(tg)
	out.cpu, out.mem, out.disk, out.cores = k.cpu, k.mem, k.disk, k.cores
	for _, p := range k.static {
		// Placed before addresses were recorded: the port is held on every address.
		out.ports = append(out.ports, portKey{"", p.Value})
	}
	return out
}

func networkPorts(nets []*api.NetworkResource) []portKey {
	var out []portKey
	for _, n := range nets {
		if n == nil {
			continue
		}
		for _, p := range n.ReservedPorts {
			out = append(out, portKey{n.IP, p.Value})
		}
		for _, p := range n.DynamicPorts {
			out = append(out, portKey{n.IP, p.Value})
		}
	}
	return out
}

// ask is what one allocation of a group needs.
type ask struct {
	tasks          []taskAsk
	cpu, mem, disk int64
	cores          int
	// static are the ports asked for by number, dynamic those the node picks.
	static, dynamic []api.Port
	mode            string
}

type taskAsk struct {
	name     string
	cpu, mem int64
	memMax   int64
	cores    int
}

func nonNeg(p *int, def int) int64 {
	if p == nil {
		return int64(def)
	}
	return int64(max(*p, 0))
}

// newAsk sums a group's tasks. Tasks without resources get upstream's defaults (100 MHz,
// 300 MB), as its client library fills them in; memory_max is recorded but, as upstream
// without memory oversubscription, only memory is counted against the node.
func newAsk(tg *api.TaskGroup) *ask {
	k := &ask{disk: structs.DefaultDiskMB}
	if tg.EphemeralDisk != nil && tg.EphemeralDisk.SizeMB != nil {
		k.disk = nonNeg(tg.EphemeralDisk.SizeMB, 0)
	}
	var nets []*api.NetworkResource
	nets = append(nets, tg.Networks...)
	for _, t := range tg.Tasks {
		if t == nil {
			continue
		}
		ta := taskAsk{name: t.Name, cpu: structs.DefaultTaskCPU, mem: structs.DefaultTaskMemory}
		if r := t.Resources; r != nil {
			ta.cpu = nonNeg(r.CPU, structs.DefaultTaskCPU)
			ta.mem = nonNeg(r.MemoryMB, structs.DefaultTaskMemory)
			ta.memMax = nonNeg(r.MemoryMaxMB, 0)
			ta.cores = int(nonNeg(r.Cores, 0))
			if ta.cores > 0 && r.CPU == nil {
				ta.cpu = 0 // the cores' share of the node is counted instead
			}
			nets = append(nets, r.Networks...)
		}
		k.tasks = append(k.tasks, ta)
		k.cpu += ta.cpu
		k.mem += ta.mem
		k.cores += ta.cores
	}
	for _, n := range nets {
		if n == nil {
			continue
		}
		if k.mode == "" {
			k.mode = n.Mode
		}
		k.static = append(k.static, n.ReservedPorts...)
		k.dynamic = append(k.dynamic, n.DynamicPorts...)
	}
	return k
}

// capacity is what a node offers allocations: what it has less what is reserved. A
// dimension the node did not report (0) is not enforced, so a node registered without
// resources (an older client, a test) is not refused everything.
type capacity struct {
	cpu, mem, disk int64
	cores          int
	mhzPerCore     int64
}

func nodeCapacity(n *structs.Node) capacity {
	var c capacity
	r := n.NodeResources
	if r == nil {
		return c
	}
	c.cpu, c.mem, c.disk, c.cores = r.Cpu.CpuShares, r.Memory.MemoryMB, r.Disk.DiskMB, int(r.Cpu.TotalCpuCores)
	if c.cores > 0 {
		c.mhzPerCore = c.cpu / int64(c.cores)
	}
	if res := n.ReservedResources; res != nil {
		c.cpu = reserve(c.cpu, res.Cpu.CpuShares)
		c.mem = reserve(c.mem, res.Memory.MemoryMB)
		c.disk = reserve(c.disk, res.Disk.DiskMB)
	}
	return c
}

// reserve takes the reservation off a known capacity, leaving at least 1 so that a node that
// reserved everything stays known, and full.
func reserve(total int64, reserved uint64) int64 {
	if total <= 0 {
		return total
	}
	if reserved >= uint64(total) {
		return -1
	}
	return total - int64(reserved)
}

// exceeds reports whether used+need is over a known capacity.
func exceeds(capacity, used, need int64) bool {
	if capacity == 0 {
		return false
	}
	return capacity < 0 || used+need > capacity
}

// fit reports the dimension the node lacks for one more allocation of the group, "" when it
// fits; dimension names are upstream's, as the CLI prints them.
func (g *group) fit(c capacity, u *usage) string {
	k := g.ask
	cpu := k.cpu + int64(k.cores)*c.mhzPerCore
	switch {
	case k.cores > 0 && c.cores > 0 && u.cores+k.cores > c.cores:
		return "cores"
	case exceeds(c.cpu, u.cpu, cpu):
		return "cpu"
	case exceeds(c.mem, u.mem, k.mem):
		return "memory"
	case exceeds(c.disk, u.disk, k.disk):
		return "disk"
	}
	if len(k.static) > 0 || len(k.dynamic) > 0 {
		if _, reason := g.assignPorts(&u.ports, false); reason != "" {
			return reason
		}
	}
	return ""
}

// allocate picks the ports' addresses and numbers (assignPorts) and builds what the
// allocation is given on node.
func (g *group) allocate(n *structs.Node, u *usage) (*api.AllocatedResources, amount) {
	k := g.ask
	c := nodeCapacity(n)
	ar := &api.AllocatedResources{Tasks: map[string]*api.AllocatedTaskResources{}}
	am := amount{disk: k.disk}
	ar.Shared.DiskMB = k.disk
	for _, t := range k.tasks {
		cpu := t.cpu + int64(t.cores)*c.mhzPerCore
		tr := &api.AllocatedTaskResources{
			Cpu:    api.AllocatedCpuResources{CpuShares: cpu},
			Memory: api.AllocatedMemoryResources{MemoryMB: t.mem, MemoryMaxMB: t.memMax},
		}
		for i := range t.cores {
			tr.Cpu.ReservedCores = append(tr.Cpu.ReservedCores, uint16(u.cores+int(am.cores)+i))
		}
		am.cores += t.cores
		am.cpu += cpu
		am.mem += t.mem
		ar.Tasks[t.name] = tr
	}
	if len(k.static) == 0 && len(k.dynamic) == 0 {
		return ar, am
	}
	// fit found room for every port; what cannot be placed here (never expected) is left out
	// rather than given a port someone else holds.
	assigned, _ := g.assignPorts(&u.ports, true)
	ip := ""
	if addrs := n.HostNetworkAddresses(structs.DefaultHostNetwork); len(addrs) > 0 {
		ip = addrs[0].Address
	}
	net := &api.NetworkResource{Mode: k.mode, IP: ip}
	var ports []api.PortMapping
	for _, a := range assigned {
		ports = append(ports, api.PortMapping{Label: a.port.Label, Value: a.port.Value, To: a.port.To, HostIP: a.ip})
		if a.static {
			net.ReservedPorts = append(net.ReservedPorts, a.port)
		} else {
			net.DynamicPorts = append(net.DynamicPorts, a.port)
		}
		am.ports = append(am.ports, portKey{a.ip, a.port.Value})
	}
	ar.Shared.Ports = ports
	ar.Shared.Networks = []*api.NetworkResource{net}
	return ar, am
}
