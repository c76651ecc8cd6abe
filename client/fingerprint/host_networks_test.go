package fingerprint

import (
	"net/netip"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// withInterfaces is machine() with eth0 (the default address), eth1 on a second network
// (IPv6 and link-local too), a dummy interface that is down, and the loopback.
func withInterfaces() Sources {
	src := machine()
	pfx := netip.MustParsePrefix
	src.Interfaces = func() ([]Interface, error) {
		return []Interface{
			{Name: "lo", Up: true, Loopback: true, Addrs: []netip.Prefix{pfx("127.0.0.1/8"), pfx("::1/128")}},
			{Name: "eth0", MAC: "02:00:00:00:00:01", Up: true, Addrs: []netip.Prefix{pfx("10.0.0.5/24")}},
			{Name: "eth1", MAC: "02:00:00:00:00:02", Up: true, Addrs: []netip.Prefix{
				pfx("fe80::1/64"), pfx("2001:db8::7/64"), pfx("192.168.7.2/24")}},
			{Name: "down0", Up: false, Addrs: []netip.Prefix{pfx("192.168.9.9/24")}},
		}, nil
	}
	return src
}

func TestFingerprint_HostNetworks(t *testing.T) {
	hns := []HostNetwork{
		{Name: "public", CIDR: "192.168.0.0/16", ReservedPorts: "22,80-90"},
		{Name: "eth1", Interface: "eth1"},
		{Name: "both", CIDR: "10.0.0.0/8", Interface: "eth1"},
		{Name: "nowhere", CIDR: "172.16.0.0/12"},
	}
	r, err := Fingerprint(Config{HostNetworks: hns}, withInterfaces())
	must.NoError(t, err)
	must.Eq(t, []*structs.NodeNetworkResource{
		{Mode: "host", Device: "eth0", MacAddress: "02:00:00:00:00:01", Addresses: []structs.NodeNetworkAddress{
			{Family: "ipv4", Alias: "default", Address: "10.0.0.5"},
		}},
		{Mode: "host", Device: "eth1", MacAddress: "02:00:00:00:00:02", Addresses: []structs.NodeNetworkAddress{
			// IPv4 first; the link-local address is left out of an interface-only network.
			{Family: "ipv4", Alias: "public", Address: "192.168.7.2", ReservedPorts: "22,80-90"},
			{Family: "ipv4", Alias: "eth1", Address: "192.168.7.2"},
			{Family: "ipv6", Alias: "eth1", Address: "2001:db8::7"},
		}},
	}, r.Resources.NodeNetworks)
	must.Eq(t, map[string]*api.HostNetworkInfo{
		"public":  {Name: "public", CIDR: "192.168.0.0/16", ReservedPorts: "22,80-90"},
		"eth1":    {Name: "eth1", Interface: "eth1"},
		"both":    {Name: "both", CIDR: "10.0.0.0/8", Interface: "eth1"},
		"nowhere": {Name: "nowhere", CIDR: "172.16.0.0/12"},
	}, r.HostNetworks)
	must.Eq(t, []string{
		`host_network "both" matches no address of this machine`,
		`host_network "nowhere" matches no address of this machine`,
	}, r.Warnings)

	node := &structs.Node{NodeResources: r.Resources}
	must.Eq(t, "192.168.7.2", node.HostNetworkAddresses("public")[0].Address)
	must.Eq(t, "10.0.0.5", node.HostNetworkAddresses("")[0].Address)
	must.SliceEmpty(t, node.HostNetworkAddresses("nowhere"))
}

// TestFingerprint_HostNetworkNamedDefault: a block named "default" replaces the node's own
// address as the network of ports that name none.
func TestFingerprint_HostNetworkNamedDefault(t *testing.T) {
	r, err := Fingerprint(Config{HostNetworks: []HostNetwork{{Name: "default", Interface: "eth1", CIDR: "192.168.0.0/16"}}}, withInterfaces())
	must.NoError(t, err)
	node := &structs.Node{NodeResources: r.Resources}
	addrs := node.HostNetworkAddresses(structs.DefaultHostNetwork)
	must.Len(t, 1, addrs)
	must.Eq(t, "192.168.7.2", addrs[0].Address)
}

// TestFingerprint_NoInterfaceList: without an interface list the default network is still
// the node's address, so ports keep being placed on it.
func TestFingerprint_NoInterfaceList(t *testing.T) {
	r, err := Fingerprint(Config{}, machine())
	must.NoError(t, err)
	must.Eq(t, []*structs.NodeNetworkResource{{Mode: "host", Device: "eth0", Addresses: []structs.NodeNetworkAddress{
		{Family: "ipv4", Alias: "default", Address: "10.0.0.5"}}}}, r.Resources.NodeNetworks)
}

func TestFingerprint_BadHostNetwork(t *testing.T) {
	cases := []struct {
		name string
		hn   []HostNetwork
		want string
	}{
		{name: "neither cidr nor interface", hn: []HostNetwork{{Name: "x"}}, want: `host_network "x": cidr or interface`},
		{name: "bad cidr", hn: []HostNetwork{{Name: "x", CIDR: "10.0.0.0/99"}}, want: `host_network "x" cidr`},
		{name: "bad reserved ports", hn: []HostNetwork{{Name: "x", Interface: "eth1", ReservedPorts: "ssh"}}, want: `host_network "x" reserved_ports`},
		{name: "twice", hn: []HostNetwork{{Name: "x", Interface: "a"}, {Name: "x", Interface: "b"}}, want: "defined twice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Fingerprint(Config{HostNetworks: tc.hn}, withInterfaces())
			must.ErrorContains(t, err, tc.want)
		})
	}
}
