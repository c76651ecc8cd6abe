package client

import (
	"testing"
	"time"

	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/client/fingerprint"
	"github.com/shoenig/test/must"
)

// TestClient_RegistersFingerprint: what fingerprinting found and the client block's
// overrides are on the node the client registers.
func TestClient_RegistersFingerprint(t *testing.T) {
	servers := newFakeServers()
	src := fingerprint.Sources{GOOS: "linux", GOARCH: "arm64", NumCPU: 2,
		Hostname: func() (string, error) { return "box9", nil }}
	c, err := New(&Config{
		AllocDir: t.TempDir(), Drivers: []drivers.Driver{drivers.RawExec{}}, Sources: &src, Version: "1.2.3",
		Resources:    fingerprint.Config{CPUTotalCompute: 3000, MemoryTotalMB: 1024, ReservedMemMB: 128, ReservedPorts: "22"},
		MaxQueryTime: time.Second, RetryInterval: 20 * time.Millisecond,
	}, servers)
	must.NoError(t, err)
	t.Cleanup(c.Shutdown)
	<-c.Registered()
	servers.mu.Lock()
	node := servers.nodes[0]
	servers.mu.Unlock()
	must.Eq(t, "box9", node.Name)
	must.Eq(t, "box9", node.Attributes["unique.hostname"])
	must.Eq(t, "arm64", node.Attributes["cpu.arch"])
	must.Eq(t, "1.2.3", node.Attributes["nomad.version"])
	must.Eq(t, "1", node.Attributes["driver.raw_exec"])
	must.Eq(t, int64(3000), node.NodeResources.Cpu.CpuShares)
	must.Eq(t, int64(1024), node.NodeResources.Memory.MemoryMB)
	must.Eq(t, uint64(128), node.ReservedResources.Memory.MemoryMB)
	must.Eq(t, "22", node.ReservedResources.Networks.ReservedHostPorts)
}

// TestClient_BadReservedPortsRefused: a port spec the scheduler could not read stops the
// client at start, naming the key, instead of registering a node nothing fits on.
func TestClient_BadReservedPortsRefused(t *testing.T) {
	_, err := New(&Config{AllocDir: t.TempDir(), Resources: fingerprint.Config{ReservedPorts: "1-99999"}}, newFakeServers())
	must.ErrorContains(t, err, "reserved_ports")
}
