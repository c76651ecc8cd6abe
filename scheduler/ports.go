package scheduler

import (
	"fmt"
	"strconv"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// portKey is a host port on one address of the node. An empty ip holds the port on every
// address: the client's reserved block, and allocations placed before ports had addresses.
type portKey struct {
	ip   string
	port int
}

// portUse is what ports a node's allocations and reservations hold, address by address, so
// that two host networks of one node may each give out the same port.
type portUse struct {
	held map[portKey]int
	// anyIP counts the holds of each port number over every address.
	anyIP map[int]int
	// inRange counts, per address, the distinct ports held within the dynamic range.
	inRange map[string]int
	// inRangeAll is the sum of inRange.
	inRangeAll int
	lo, hi     int
	// addrs caches the node's addresses by host network name: a node's usage lives for one
	// plan, during which the node does not change.
	node  *structs.Node
	addrs map[string][]string
}

func (pu *portUse) init(n *structs.Node) {
	pu.held, pu.anyIP, pu.inRange = map[portKey]int{}, map[int]int{}, map[string]int{}
	pu.node = n
	pu.lo, pu.hi = n.NodeResources.PortRange()
	if n.ReservedResources != nil {
		reserved, _ := structs.ParsePortSpec(n.ReservedResources.Networks.ReservedHostPorts)
		for _, p := range reserved {
			pu.take(portKey{"", p}, 1)
		}
	}
	if n.NodeResources == nil {
		return
	}
	// A host network's reserved_ports are held on its addresses only. An address that two
	// host networks share holds both networks' reservations.
	for _, nn := range n.NodeResources.NodeNetworks {
		if nn == nil {
			continue
		}
		for _, a := range nn.Addresses {
			reserved, _ := structs.ParsePortSpec(a.ReservedPorts)
			for _, p := range reserved {
				pu.take(portKey{a.Address, p}, 1)
			}
		}
	}
}

func (pu *portUse) take(k portKey, sign int) {
	before := pu.held[k]
	pu.held[k] += sign
	if pu.held[k] <= 0 {
		delete(pu.held, k)
	}
	pu.anyIP[k.port] += sign
	if pu.anyIP[k.port] <= 0 {
		delete(pu.anyIP, k.port)
	}
	if k.port >= pu.lo && k.port <= pu.hi {
		if before <= 0 && pu.held[k] > 0 {
			pu.inRange[k.ip]++
			pu.inRangeAll++
		} else if before > 0 && pu.held[k] == 0 {
			pu.inRange[k.ip]--
			pu.inRangeAll--
		}
	}
}

// taken reports whether port is held on ip; on the empty address, held on any address.
func (pu *portUse) taken(ip string, port int) bool {
	if ip == "" {
		return pu.anyIP[port] > 0
	}
	return pu.held[portKey{ip, port}] > 0 || pu.held[portKey{"", port}] > 0
}

// surelyFree is a lower bound of the ports of the dynamic range free on ip, counted without
// scanning: each held port is subtracted once, even when it is held under two keys.
func (pu *portUse) surelyFree(ip string) int {
	free := pu.hi - pu.lo + 1
	if ip == "" {
		return free - pu.inRangeAll
	}
	return free - pu.inRange[ip] - pu.inRange[""]
}

// assignedPort is one port of the group given an address (and, when picked, a number).
type assignedPort struct {
	port   api.Port
	ip     string
	static bool
}

// addrsOf is hostNetworkAddrs of the node, cached.
func (pu *portUse) addrsOf(name string) []string {
	if a, ok := pu.addrs[name]; ok {
		return a
	}
	if pu.addrs == nil {
		pu.addrs = map[string][]string{}
	}
	a := hostNetworkAddrs(pu.node, name)
	pu.addrs[name] = a
	return a
}

// hostNetworkAddrs are the addresses a port of the named host network may take. A node that
// reported no address at all still takes ports of the default network, on no address, as
// it did before host networks: the client binds them on its own address.
func hostNetworkAddrs(n *structs.Node, name string) []string {
	var out []string
	for _, a := range n.HostNetworkAddresses(name) {
		out = append(out, a.Address)
	}
	if len(out) == 0 && (name == "" || name == structs.DefaultHostNetwork) {
		out = []string{""}
	}
	return out
}

// missingHostNetwork names the first port whose host network the node lacks, in upstream's
// words, "" when the node has every one.
func missingHostNetwork(n *structs.Node, k *ask) string {
	for _, ports := range [][]api.Port{k.static, k.dynamic} {
		for _, p := range ports {
			if len(hostNetworkAddrs(n, p.HostNetwork)) == 0 {
				return fmt.Sprintf("missing host network %q for port %q", p.HostNetwork, p.Label)
			}
		}
	}
	return ""
}

// portHolds is what one allocation's ports hold so far while they are assigned: a handful,
// so slices searched in order, reused across candidates, rather than maps built for each.
type portHolds struct {
	pu      *portUse
	pending []portKey
	counts  []portCount
}

// portCount is, for one address, the ports held within the dynamic range and those counted
// without a number (skip): an unnumbered port would take the lowest free number, so a scan
// after it on the same address skips that many free numbers.
type portCount struct {
	ip            string
	inRange, skip int
}

// countOf is the index of ip's count, added when missing.
func (h *portHolds) countOf(ip string) int {
	for i := range h.counts {
		if h.counts[i].ip == ip {
			return i
		}
	}
	h.counts = append(h.counts, portCount{ip: ip})
	return len(h.counts) - 1
}

func (h *portHolds) isPending(ip string, port int) bool {
	for _, p := range h.pending {
		if p.port == port && p.ip == ip {
			return true
		}
	}
	return false
}

func (h *portHolds) hold(ip string, port int) {
	c := &h.counts[h.countOf(ip)]
	if port == 0 {
		c.inRange++
		c.skip++
		return
	}
	h.pending = append(h.pending, portKey{ip, port})
	if port >= h.pu.lo && port <= h.pu.hi {
		c.inRange++
	}
}

// assignPorts gives every port of the group an address of its host network on node: a
// static port the first address where its number is free, a dynamic port the lowest free
// number of the first address that has one. Lowest-first keeps a plan the same for the same
// state. With pick false it only checks that there is room (and returns no ports), leaving
// dynamic ports unnumbered when the free count alone shows there is. The reason is
// upstream's dimension.
func (g *group) assignPorts(pu *portUse, pick bool) ([]assignedPort, string) {
	k := g.ask
	h := &g.holds
	h.pu, h.pending, h.counts = pu, h.pending[:0], h.counts[:0]
	var out []assignedPort
	emit := func(a assignedPort) {
		if pick {
			out = append(out, a)
		}
	}
	for _, p := range k.static {
		ips := pu.addrsOf(p.HostNetwork)
		if len(ips) == 0 {
			return nil, fmt.Sprintf("missing host network %q for port %q", p.HostNetwork, p.Label)
		}
		chosen, found := "", false
		for _, ip := range ips {
			if p.IgnoreCollision || !pu.taken(ip, p.Value) && !h.isPending(ip, p.Value) {
				chosen, found = ip, true
				break
			}
		}
		if !found {
			return nil, "network: reserved port collision " + p.Label + "=" + strconv.Itoa(p.Value)
		}
		h.hold(chosen, p.Value)
		emit(assignedPort{port: p, ip: chosen, static: true})
	}
	for _, p := range k.dynamic {
		ips := pu.addrsOf(p.HostNetwork)
		if len(ips) == 0 {
			return nil, fmt.Sprintf("missing host network %q for port %q", p.HostNetwork, p.Label)
		}
		found := false
		for _, ip := range ips {
			if !pick && pu.surelyFree(ip)-h.counts[h.countOf(ip)].inRange > 0 {
				h.hold(ip, 0)
				found = true
				break
			}
			skip := h.counts[h.countOf(ip)].skip
			for v := pu.lo; v <= pu.hi; v++ {
				if pu.taken(ip, v) || h.isPending(ip, v) {
					continue
				}
				if skip > 0 {
					skip--
					continue
				}
				h.hold(ip, v)
				q := p
				q.Value = v
				emit(assignedPort{port: q, ip: ip})
				found = true
				break
			}
			if found {
				break
			}
		}
		if !found {
			return nil, "network: dynamic port selection failed"
		}
	}
	return out, ""
}
