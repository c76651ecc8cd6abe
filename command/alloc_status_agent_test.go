package command

import (
	"regexp"
	"testing"
	"time"

	"github.com/nomadfork/nomad/command/agent/agenttest"
	"github.com/shoenig/test/must"
)

const portsJobHCL = `
job "ports" {
  datacenters = ["dc1"]
  group "web" {
    network {
      port "http" {}
      port "admin" { static = 22999 }
    }
    task "server" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["600"]
      }
      resources {
        cpu    = 120
        memory = 64
      }
    }
  }
}
`

// TestAllocStatus_AddressesAndStats runs a job with a dynamic and a static port through an
// agent with a raw_exec client: alloc status shows the allocation's addresses and the task's
// allocated resources, and -stats adds what the running task uses.
func TestAllocStatus_AddressesAndStats(t *testing.T) {
	ta := agenttest.NewClientAgent(t, nil)
	c := ta.Client("")
	waitUntil(t, 30*time.Second, "the agent's node to be ready", func() bool {
		nodes, _, err := c.Nodes().List(nil)
		return err == nil && len(nodes) == 1 && nodes[0].Status == "ready"
	})
	code, out, errOut := runCLIWithin(t, 60*time.Second, ta.URL(), "job", "run", "-detach", writeFile(t, "ports.nomad.hcl", portsJobHCL))
	must.Zero(t, code, must.Sprint(out, errOut))
	waitUntil(t, 60*time.Second, "the allocation to run", func() bool { return jobSettled(c, "ports") })
	allocs, _, err := c.Jobs().Allocations("ports", false, nil)
	must.NoError(t, err)
	must.SliceLen(t, 1, allocs)
	prefix := allocs[0].ID[:6]

	code, out, errOut = runCLI(t, ta.URL(), "", "alloc", "status", prefix)
	must.Zero(t, code, must.Sprint(errOut))
	must.StrContains(t, out, "Allocation Addresses:")
	must.RegexMatch(t, regexp.MustCompile(`\*admin\s+no\s+\S*:22999`), out)
	must.RegexMatch(t, regexp.MustCompile(`\*http\s+yes\s+\S*:\d+`), out)
	must.StrContains(t, out, "Task Resources:")
	must.RegexMatch(t, regexp.MustCompile(`120 MHz\s+64 MiB`), out)
	must.StrNotContains(t, out, "Resource Usage")

	waitUntil(t, 30*time.Second, "alloc status -stats to show usage", func() bool {
		code, out, _ = runCLI(t, ta.URL(), "", "alloc", "status", "-stats", prefix)
		return code == 0 && regexp.MustCompile(`\S+/120 MHz\s+\S+ \S+/64 MiB`).MatchString(out)
	})
	must.StrContains(t, out, "Resource Usage")
	must.StrContains(t, out, "RSS")

	code, out, _ = runCLI(t, ta.URL(), "", "alloc", "status", "-short", prefix)
	must.Zero(t, code)
	must.StrNotContains(t, out, "Allocation Addresses:")
}

// TestNodeStatus_Details runs node status against an agent whose client runs a job: the
// node's uptime, events, what its allocations hold and its host's use are shown, and
// -verbose lists the nomad.version attribute the client fills.
func TestNodeStatus_Details(t *testing.T) {
	ta := agenttest.NewClientAgent(t, nil)
	c := ta.Client("")
	waitUntil(t, 30*time.Second, "the agent's node to be ready", func() bool {
		nodes, _, err := c.Nodes().List(nil)
		return err == nil && len(nodes) == 1 && nodes[0].Status == "ready"
	})
	code, out, errOut := runCLIWithin(t, 60*time.Second, ta.URL(), "job", "run", "-detach", writeFile(t, "ports.nomad.hcl", portsJobHCL))
	must.Zero(t, code, must.Sprint(out, errOut))
	waitUntil(t, 60*time.Second, "the allocation to run", func() bool { return jobSettled(c, "ports") })
	nodes, _, err := c.Nodes().List(nil)
	must.NoError(t, err)
	prefix := nodes[0].ID[:6]

	code, out, errOut = runCLI(t, ta.URL(), "", "node", "status", prefix)
	must.Zero(t, code, must.Sprint(errOut))
	must.RegexMatch(t, regexp.MustCompile(`Uptime\s+= \S+`), out)
	must.RegexMatch(t, regexp.MustCompile(`Node Events\nTime\s+Subsystem\s+Message\n\S+\s+\S+\s+\S+`), out)
	must.RegexMatch(t, regexp.MustCompile(`Allocated Resources\nCPU\s+Memory\s+Disk\n120/\d+ MHz\s+64 MiB/\S+ \S+\s+300 MiB/`), out)
	must.RegexMatch(t, regexp.MustCompile(`Host Resource Utilization\nCPU\s+Memory\s+Disk\n\d+/\d+ MHz`), out)

	code, out, errOut = runCLI(t, ta.URL(), "", "node", "status", "-verbose", prefix)
	must.Zero(t, code, must.Sprint(errOut))
	must.RegexMatch(t, regexp.MustCompile(`nomad\.version\s+= \d+\.\d+\.\d+`), out)
}
