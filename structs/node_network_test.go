package structs

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// A node written to the log before NodeResources had NodeNetworks (the official client's
// type, flat) reads back with its resources, and a node with NodeNetworks keeps them through
// the log codec and JSON, where they sit flat in NodeResources as in upstream's Node.
func TestNodeResources_EncodingCompatible(t *testing.T) {
	type oldNode struct {
		ID            string
		NodeResources *api.NodeResources
	}
	var buf bytes.Buffer
	old := oldNode{ID: "n1", NodeResources: &api.NodeResources{
		Cpu: api.NodeCpuResources{CpuShares: 4000}, MinDynamicPort: 21000,
		Networks: []*api.NetworkResource{{Mode: "host", IP: "10.0.0.5"}}}}
	must.NoError(t, codec.NewEncoder(&buf, MsgpackHandle).Encode(old))
	var n Node
	must.NoError(t, codec.NewDecoder(&buf, MsgpackHandle).Decode(&n))
	must.Eq(t, int64(4000), n.NodeResources.Cpu.CpuShares)
	must.Eq(t, 21000, n.NodeResources.MinDynamicPort)
	must.Eq(t, []NodeNetworkAddress{{Alias: DefaultHostNetwork, Address: "10.0.0.5"}}, n.HostNetworkAddresses(""))

	n.NodeResources.NodeNetworks = []*NodeNetworkResource{{Mode: "host", Device: "eth1",
		Addresses: []NodeNetworkAddress{{Family: "ipv4", Alias: "public", Address: "192.168.7.2", ReservedPorts: "22"}}}}
	buf.Reset()
	must.NoError(t, codec.NewEncoder(&buf, MsgpackHandle).Encode(&n))
	var back Node
	must.NoError(t, codec.NewDecoder(&buf, MsgpackHandle).Decode(&back))
	must.Eq(t, n.NodeResources, back.NodeResources)

	raw, err := json.Marshal(n.NodeResources)
	must.NoError(t, err)
	var flat map[string]any
	must.NoError(t, json.Unmarshal(raw, &flat))
	must.MapContainsKeys(t, flat, []string{"Cpu", "MinDynamicPort", "Networks", "NodeNetworks"})
	must.MapNotContainsKey(t, flat, "NodeResources")
}
