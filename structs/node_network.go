package structs

import (
	"github.com/hashicorp/nomad/api"
)

// DefaultHostNetwork is the host network of a port that names none: the addresses of the
// client's network_interface.
const DefaultHostNetwork = "default"

// NodeResources is what a node offers: the official client's NodeResources and the node's
// addresses by host network (NodeNetworks), which that type lacks. The embedded fields are
// promoted, so JSON and msgpack carry the same flat object upstream's Node.NodeResources is.
type NodeResources struct {
	api.NodeResources
	NodeNetworks []*NodeNetworkResource `json:",omitempty"`
}

// NodeNetworkResource is one interface of the node and its addresses.
type NodeNetworkResource struct {
	Mode       string
	Device     string
	MacAddress string
	Speed      int
	Addresses  []NodeNetworkAddress
}

// NodeNetworkAddress is one address of an interface under one host network name (Alias): an
// address that several host networks match is listed once per name, each with that network's
// reserved ports.
type NodeNetworkAddress struct {
	Family        string
	Alias         string
	Address       string
	ReservedPorts string
	Gateway       string
}

// HostNetworkAddresses lists the node's addresses of the named host network, in the order
// the client reported them, with the ports that network reserves. A node that reported no
// NodeNetworks (registered before they existed) has its first network's address as the
// default host network and no other.
func (n *Node) HostNetworkAddresses(name string) []NodeNetworkAddress {
	if name == "" {
		name = DefaultHostNetwork
	}
	r := n.NodeResources
	if r == nil {
		return nil
	}
	var out []NodeNetworkAddress
	for _, nn := range r.NodeNetworks {
		if nn == nil {
			continue
		}
		for _, a := range nn.Addresses {
			if a.Alias == name {
				out = append(out, a)
			}
		}
	}
	if len(r.NodeNetworks) == 0 && name == DefaultHostNetwork {
		for _, nw := range r.Networks {
			if nw != nil && nw.IP != "" && (nw.Mode == "" || nw.Mode == "host") {
				return []NodeNetworkAddress{{Alias: DefaultHostNetwork, Address: nw.IP}}
			}
		}
	}
	return out
}

// PortRange is the range the node hands dynamic ports from.
func (r *NodeResources) PortRange() (lo, hi int) {
	if r == nil {
		return DynamicPortRange(nil)
	}
	return DynamicPortRange(&r.NodeResources)
}
