package agent

import (
	"runtime"
	"testing"

	"github.com/shoenig/test/must"
)

// TestScheduling_NodeResourcesThroughAPI: the official client decodes the node's resources,
// reservations and fingerprinted attributes as upstream's.
func TestScheduling_NodeResourcesThroughAPI(t *testing.T) {
	ta := NewTestClientAgent(t, func(c *Config) {
		c.Client.CPUTotalCompute = 4000
		c.Client.MemoryTotalMB = 2048
		c.Client.MinDynamicPort, c.Client.MaxDynamicPort = 21000, 21100
		c.Client.Reserved = &ReservedConfig{CPU: 100, MemoryMB: 256, DiskMB: 10, ReservedPorts: "22,8080"}
		c.Client.Meta = map[string]string{"rack": "r1"}
		c.Client.NodeClass = "fast"
	})
	c := ta.Client("")
	node, _, err := c.Nodes().Info(ta.Agent.Client().NodeID(), nil)
	must.NoError(t, err)
	must.Eq(t, int64(4000), node.NodeResources.Cpu.CpuShares)
	must.Eq(t, int64(2048), node.NodeResources.Memory.MemoryMB)
	must.Positive(t, node.NodeResources.Disk.DiskMB)
	must.Eq(t, 21000, node.NodeResources.MinDynamicPort)
	must.Eq(t, 21100, node.NodeResources.MaxDynamicPort)
	must.Eq(t, uint64(100), node.ReservedResources.Cpu.CpuShares)
	must.Eq(t, uint64(256), node.ReservedResources.Memory.MemoryMB)
	must.Eq(t, uint64(10), node.ReservedResources.Disk.DiskMB)
	must.Eq(t, "22,8080", node.ReservedResources.Networks.ReservedHostPorts)
	must.Eq(t, runtime.GOOS, node.Attributes["kernel.name"])
	must.Eq(t, runtime.GOARCH, node.Attributes["cpu.arch"])
	must.Eq(t, "1", node.Attributes["driver.raw_exec"])
	must.Eq(t, "r1", node.Meta["rack"])
	must.Eq(t, "fast", node.NodeClass)
	if runtime.GOOS == "linux" {
		must.NotEq(t, "", node.Attributes["kernel.version"])
		must.NotEq(t, "", node.Attributes["cpu.numcores"])
	}
}
