package fingerprint

import (
	"fmt"
	"net"
	"net/netip"
	"sort"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// HostNetwork is one client host_network block: the addresses of the node that are in CIDR
// and on Interface (either may be empty, not both) are offered to ports that name it, with
// ReservedPorts kept back on them.
type HostNetwork struct {
	Name          string
	CIDR          string
	Interface     string
	ReservedPorts string
}

// Interface is one network interface of the machine as the fingerprint sees it.
type Interface struct {
	Name     string
	MAC      string
	Up       bool
	Loopback bool
	Addrs    []netip.Prefix
}

// checkHostNetworks refuses a block that could match nothing meaningful or cannot be read;
// the error names the block and the field, as the agent prints it.
func checkHostNetworks(hns []HostNetwork) error {
	seen := map[string]bool{}
	for _, hn := range hns {
		switch {
		case hn.Name == "":
			return fmt.Errorf("client host_network: a name is required")
		case seen[hn.Name]:
			return fmt.Errorf("client host_network %q: defined twice", hn.Name)
		case hn.CIDR == "" && hn.Interface == "":
			return fmt.Errorf("client host_network %q: cidr or interface is required", hn.Name)
		}
		seen[hn.Name] = true
		if hn.CIDR != "" {
			if _, err := netip.ParsePrefix(hn.CIDR); err != nil {
				return fmt.Errorf("client host_network %q cidr: %w", hn.Name, err)
			}
		}
		if _, err := structs.ParsePortSpec(hn.ReservedPorts); err != nil {
			return fmt.Errorf("client host_network %q reserved_ports: %w", hn.Name, err)
		}
	}
	return nil
}

// nodeNetworks lists the machine's interfaces with each address under every host network
// that matches it. The default host network is the node's own address (defaultIP, on
// defaultDev) unless a host_network block is named "default", which then replaces it.
// Within an interface IPv4 addresses come first, so a port on a dual-stack host network is
// given its IPv4 address, as the default network is.
func nodeNetworks(ifaces []Interface, hns []HostNetwork, defaultDev, defaultIP string) ([]*structs.NodeNetworkResource, []string) {
	prefixes := map[string]netip.Prefix{}
	ownDefault := false
	for _, hn := range hns {
		if hn.CIDR != "" {
			prefixes[hn.Name], _ = netip.ParsePrefix(hn.CIDR)
		}
		ownDefault = ownDefault || hn.Name == structs.DefaultHostNetwork
	}
	matched := map[string]bool{}
	var out []*structs.NodeNetworkResource
	for _, ifc := range ifaces {
		if !ifc.Up {
			continue
		}
		addrs := append([]netip.Prefix(nil), ifc.Addrs...)
		sort.SliceStable(addrs, func(i, j int) bool { return addrs[i].Addr().Is4() && !addrs[j].Addr().Is4() })
		nn := &structs.NodeNetworkResource{Mode: "host", Device: ifc.Name, MacAddress: ifc.MAC}
		for _, p := range addrs {
			ip := p.Addr().Unmap()
			family := "ipv4"
			if !ip.Is4() {
				family = "ipv6"
			}
			if !ownDefault && ifc.Name == defaultDev && ip.String() == defaultIP {
				nn.Addresses = append(nn.Addresses, structs.NodeNetworkAddress{Family: family, Alias: structs.DefaultHostNetwork, Address: ip.String()})
			}
			for _, hn := range hns {
				if hn.Interface != "" && hn.Interface != ifc.Name {
					continue
				}
				if pfx, ok := prefixes[hn.Name]; ok {
					if !pfx.Contains(ip) {
						continue
					}
				} else if ip.IsLinkLocalUnicast() {
					// Named by interface alone: a link-local address cannot be bound
					// without its zone, so it is offered only when a cidr asks for it.
					continue
				}
				matched[hn.Name] = true
				nn.Addresses = append(nn.Addresses, structs.NodeNetworkAddress{Family: family, Alias: hn.Name, Address: ip.String(), ReservedPorts: hn.ReservedPorts})
			}
		}
		if len(nn.Addresses) > 0 {
			out = append(out, nn)
		}
	}
	var unmatched []string
	for _, hn := range hns {
		if !matched[hn.Name] {
			unmatched = append(unmatched, hn.Name)
		}
	}
	return out, unmatched
}

// hostNetworkInfo is the node's HostNetworks: the blocks as configured, matched or not.
func hostNetworkInfo(hns []HostNetwork) map[string]*api.HostNetworkInfo {
	if len(hns) == 0 {
		return nil
	}
	out := make(map[string]*api.HostNetworkInfo, len(hns))
	for _, hn := range hns {
		out[hn.Name] = &api.HostNetworkInfo{Name: hn.Name, CIDR: hn.CIDR, Interface: hn.Interface, ReservedPorts: hn.ReservedPorts}
	}
	return out
}

// hostInterfaces reads the machine's interfaces and their addresses.
func hostInterfaces() ([]Interface, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	out := make([]Interface, 0, len(ifaces))
	for _, ifc := range ifaces {
		in := Interface{Name: ifc.Name, MAC: ifc.HardwareAddr.String(),
			Up: ifc.Flags&net.FlagUp != 0, Loopback: ifc.Flags&net.FlagLoopback != 0}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ip, ok := netip.AddrFromSlice(ipn.IP)
			if !ok {
				continue
			}
			ones, _ := ipn.Mask.Size()
			if ip.Is4In6() {
				ip = ip.Unmap()
			}
			in.Addrs = append(in.Addrs, netip.PrefixFrom(ip, ones))
		}
		out = append(out, in)
	}
	return out, nil
}
