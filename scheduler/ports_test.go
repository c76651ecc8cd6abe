package scheduler

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// netNode is resNode with its default address 10.0.0.id and, when public is set, a host
// network "public" on 192.168.0.id that reserves reserved.
func netNode(id, last string, public bool, reserved string) *structs.Node {
	n := resNode(id, 40000, 40000)
	n.NodeResources.Networks = []*api.NetworkResource{{Mode: "host", Device: "eth0", IP: "10.0.0." + last}}
	n.NodeResources.NodeNetworks = []*structs.NodeNetworkResource{{Mode: "host", Device: "eth0",
		Addresses: []structs.NodeNetworkAddress{{Family: "ipv4", Alias: "default", Address: "10.0.0." + last}}}}
	if public {
		n.NodeResources.NodeNetworks = append(n.NodeResources.NodeNetworks, &structs.NodeNetworkResource{Mode: "host", Device: "eth1",
			Addresses: []structs.NodeNetworkAddress{{Family: "ipv4", Alias: "public", Address: "192.168.0." + last, ReservedPorts: reserved}}})
	}
	return n
}

func portsOf(a *structs.Allocation) map[string]api.PortMapping {
	out := map[string]api.PortMapping{}
	for _, p := range a.AllocatedResources.Shared.Ports {
		out[p.Label] = p
	}
	return out
}

// TestHostNetworks_PlacesOnlyWhereTheNetworkIs: a port of host network "public" goes only to
// the node that has it, on that network's address; a port that names none keeps the node's
// own address.
func TestHostNetworks_PlacesOnlyWhereTheNetworkIs(t *testing.T) {
	job := withPorts(sized(2, 100, 100), nil, []api.Port{{Label: "http", HostNetwork: "public"}, {Label: "admin"}})
	nodes := []*structs.Node{netNode("n1", "1", false, ""), netNode("n2", "2", true, "")}
	p := Compute(Input{Job: job, Nodes: nodes})
	must.Eq(t, map[string]int{"n2": 2}, placedOn(p))
	for _, a := range p.Place {
		ports := portsOf(a)
		must.Eq(t, "192.168.0.2", ports["http"].HostIP)
		must.Eq(t, "10.0.0.2", ports["admin"].HostIP)
	}
	// Each address hands out its own lowest free port: both networks start at the bottom.
	must.Eq(t, 20000, portsOf(p.Place[0])["http"].Value)
	must.Eq(t, 20000, portsOf(p.Place[0])["admin"].Value)
	must.Eq(t, 20001, portsOf(p.Place[1])["http"].Value)
}

// TestHostNetworks_Missing: no node has the network; the plan says which network for which
// port, in upstream's words.
func TestHostNetworks_Missing(t *testing.T) {
	job := withPorts(sized(1, 100, 100), []api.Port{{Label: "http", Value: 8080, HostNetwork: "public"}}, nil)
	p := Compute(Input{Job: job, Nodes: []*structs.Node{netNode("n1", "1", false, ""), netNode("n2", "2", false, "")}})
	must.Len(t, 0, p.Place)
	must.Eq(t, map[string]int{`missing host network "public" for port "http"`: 2}, p.Failed["web"].ConstraintFiltered)
	must.Eq(t, 2, p.Failed["web"].NodesFiltered)
}

// TestHostNetworks_StaticPortsPerAddress: the same static port is free once on each address
// of the node, and taken on one address it is still free on the other.
func TestHostNetworks_StaticPortsPerAddress(t *testing.T) {
	n := netNode("n1", "1", true, "")
	onDefault := &structs.Allocation{ID: "x", NodeID: "n1", DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusRunning,
		AllocatedResources: &api.AllocatedResources{Shared: api.AllocatedSharedResources{Ports: []api.PortMapping{{Label: "web", Value: 8080, HostIP: "10.0.0.1"}}}}}
	job := withPorts(sized(2, 100, 100), []api.Port{{Label: "http", Value: 8080, HostNetwork: "public"}}, nil)
	p := Compute(Input{Job: job, Nodes: []*structs.Node{n}, NodeAllocs: map[string][]*structs.Allocation{"n1": {onDefault}}})
	must.Len(t, 1, p.Place, must.Sprint("8080 is free on the public address once"))
	must.Eq(t, api.PortMapping{Label: "http", Value: 8080, HostIP: "192.168.0.1"}, portsOf(p.Place[0])["http"])
	must.Eq(t, map[string]int{"network: reserved port collision http=8080": 1}, p.Failed["web"].DimensionExhausted)

	// The applier's check counts ports the same way.
	must.Eq(t, "", NodeFits(n, []*structs.Allocation{onDefault}, p.Place))
	must.StrContains(t, NodeFits(n, []*structs.Allocation{onDefault}, []*structs.Allocation{p.Place[0], p.Place[0].Copy()}), "collision")
}

// TestHostNetworks_ReservedPorts: a host network's reserved_ports are kept back on its
// addresses, not on the node's others.
func TestHostNetworks_ReservedPorts(t *testing.T) {
	t.Run("static", func(t *testing.T) {
		n := netNode("n1", "1", true, "22,80-90")
		public := withPorts(sized(1, 100, 100), []api.Port{{Label: "http", Value: 85, HostNetwork: "public"}}, nil)
		p := Compute(Input{Job: public, Nodes: []*structs.Node{n}})
		must.Len(t, 0, p.Place)
		must.Eq(t, map[string]int{"network: reserved port collision http=85": 1}, p.Failed["web"].DimensionExhausted)

		onDefault := withPorts(sized(1, 100, 100), []api.Port{{Label: "http", Value: 85}}, nil)
		p = Compute(Input{Job: onDefault, Nodes: []*structs.Node{n}})
		must.Len(t, 1, p.Place)
		must.Eq(t, "10.0.0.1", portsOf(p.Place[0])["http"].HostIP)
	})
	t.Run("dynamic", func(t *testing.T) {
		n := netNode("n1", "1", true, "30000,30002")
		n.NodeResources.MinDynamicPort, n.NodeResources.MaxDynamicPort = 30000, 30003
		job := withPorts(sized(3, 100, 100), nil, []api.Port{{Label: "http", HostNetwork: "public"}})
		p := Compute(Input{Job: job, Nodes: []*structs.Node{n}})
		must.Len(t, 2, p.Place, must.Sprint("2 of the 4 ports are reserved on the public address"))
		got := map[int]bool{}
		for _, a := range p.Place {
			got[portsOf(a)["http"].Value] = true
		}
		must.Eq(t, map[int]bool{30001: true, 30003: true}, got)
		must.Eq(t, map[string]int{"network: dynamic port selection failed": 1}, p.Failed["web"].DimensionExhausted)
	})
}

// TestHostNetworks_OldNode: a node registered before host networks (an address, no
// NodeNetworks) still takes ports of the default network, on its address, and none of a
// named network.
func TestHostNetworks_OldNode(t *testing.T) {
	n := resNode("n1", 4000, 4000)
	n.NodeResources.Networks = []*api.NetworkResource{{Mode: "host", IP: "10.1.1.1"}}
	p := Compute(Input{Job: withPorts(sized(1, 100, 100), nil, []api.Port{{Label: "http"}}), Nodes: []*structs.Node{n}})
	must.Len(t, 1, p.Place)
	must.Eq(t, "10.1.1.1", portsOf(p.Place[0])["http"].HostIP)
	p = Compute(Input{Job: withPorts(sized(1, 100, 100), nil, []api.Port{{Label: "http", HostNetwork: "public"}}), Nodes: []*structs.Node{n}})
	must.Len(t, 0, p.Place)
}
