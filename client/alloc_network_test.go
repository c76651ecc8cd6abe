package client

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/allocnet"
	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/client/drivers/execdriver"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// bridgeEnv is a bridge and subnet of a test's own (never the e2e cluster lab's 10.x
// networks), namespaces in a directory of its own, and the client directories, which outlive
// one client so that a second is the same agent restarted.
type bridgeEnv struct {
	t                          *testing.T
	bridge, subnet             string
	netnsDir, stateDir, allocs string
}

func newBridgeEnv(t *testing.T, bridge, subnet string) *bridgeEnv {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("bridge networking needs root")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("the test's task server needs python3")
	}
	e := &bridgeEnv{t: t, bridge: bridge, subnet: subnet, netnsDir: t.TempDir(), stateDir: t.TempDir(), allocs: t.TempDir()}
	if err := e.manager().Available(); err != nil {
		t.Skipf("bridge networking unavailable: %v", err)
	}
	// Registered first, so run last: after the clients' shutdowns, whatever a failed test
	// left is torn down.
	t.Cleanup(func() {
		m := e.manager()
		for _, id := range m.Recorded() {
			_ = m.Teardown(context.Background(), id)
		}
		_ = exec.Command("ip", "link", "del", bridge).Run()
	})
	return e
}

func (e *bridgeEnv) config(extra ...drivers.Driver) *Config {
	return &Config{Name: "test", AllocDir: e.allocs, StateDir: e.stateDir,
		Drivers:      append([]drivers.Driver{drivers.RawExec{}}, extra...),
		MaxQueryTime: time.Second, RetryInterval: 20 * time.Millisecond,
		NetNSDir: e.netnsDir, BridgeName: e.bridge, BridgeSubnet: e.subnet,
		Logger: hclog.NewNullLogger()}
}

func (e *bridgeEnv) manager() *allocnet.Manager { return newNetManager(e.config()) }

func (e *bridgeEnv) start(extra []drivers.Driver, allocs ...*structs.Allocation) (*Client, *fakeServers) {
	e.t.Helper()
	s := newFakeServers()
	s.setAllocs(allocs...)
	c, err := New(e.config(extra...), s)
	must.NoError(e.t, err)
	e.t.Cleanup(c.Shutdown)
	return c, s
}

// serverScript answers each connection with the address it was reached at, the interfaces
// the task sees, its NOMAD_ALLOC_IP_http and the nameservers of its /etc/resolv.conf.
const serverScript = `
import os, socket
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("0.0.0.0", int(os.environ["NOMAD_PORT_http"])))
srv.listen(8)
while True:
    c, _ = srv.accept()
    names = ",".join(sorted(n for _, n in socket.if_nameindex()))
    ns = ",".join(l.split()[1] for l in open("/etc/resolv.conf") if l.startswith("nameserver "))
    c.sendall(("%s %s %s %s" % (c.getsockname()[0], names, os.environ.get("NOMAD_ALLOC_IP_http", ""), ns)).encode())
    c.close()
`

// bridgeAlloc is a service allocation in bridge mode whose task serves on 8080, mapped from
// hostPort.
func bridgeAlloc(id, driver string, hostPort int) *structs.Allocation {
	task := &api.Task{Name: "t", Driver: driver, Config: map[string]any{"command": "python3", "args": []any{"-c", serverScript}}}
	a := testAlloc(id, structs.JobTypeService, task)
	tg := a.Job.TaskGroups[0]
	tg.Networks = []*api.NetworkResource{{Mode: "bridge", ReservedPorts: []api.Port{{Label: "http", Value: hostPort, To: 8080}}}}
	a.AllocatedResources = &api.AllocatedResources{Shared: api.AllocatedSharedResources{
		Ports: []api.PortMapping{{Label: "http", Value: hostPort, To: 8080}}}}
	return a
}

func hostFreePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func askTask(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	b, err := io.ReadAll(c)
	return string(b), err
}

// waitAnswer waits until the task answers through the host port.
func waitAnswer(t *testing.T, hostPort int) string {
	t.Helper()
	var got string
	waitFor(t, "the task to answer through the host port", func() bool {
		var err error
		got, err = askTask(fmt.Sprintf("127.0.0.1:%d", hostPort))
		return err == nil && got != ""
	})
	return got
}

func iptablesCount(t *testing.T, s string) int {
	out, err := exec.Command("iptables-save").CombinedOutput()
	must.NoError(t, err, must.Sprint(string(out)))
	return strings.Count(string(out), s)
}

// checkTornDown: nothing of the allocation's network is left: namespace, record, veth on the
// bridge, iptables rules.
func (e *bridgeEnv) checkTornDown(id, addr string) {
	t := e.t
	t.Helper()
	waitFor(t, "the network to be torn down", func() bool {
		_, err := os.Stat(filepath.Join(e.netnsDir, id))
		return os.IsNotExist(err)
	})
	must.SliceEmpty(t, e.manager().Recorded())
	must.Eq(t, 0, iptablesCount(t, addr))
	must.Eq(t, 0, iptablesCount(t, id))
	out, _ := exec.Command("ip", "-o", "link", "show", "master", e.bridge).CombinedOutput()
	must.Eq(t, "", strings.TrimSpace(string(out)))
}

// testBridgeMode runs a task in bridge mode; dns, when set, is the group's dns block, whose
// servers the task must see.
func testBridgeMode(t *testing.T, driver string, bridge, subnet string, dns *api.DNSConfig, extra ...drivers.Driver) {
	e := newBridgeEnv(t, bridge, subnet)
	hostPort := hostFreePort(t)
	a := bridgeAlloc("b1e0a7c2-0000-4000-8000-000000000001", driver, hostPort)
	a.Job.TaskGroups[0].Networks[0].DNS = dns
	c, s := e.start(extra, a)
	<-c.Registered()
	s.mu.Lock()
	node := s.nodes[0]
	s.mu.Unlock()
	must.True(t, hasBridgeNetwork(node), must.Sprint("the node fingerprints its bridge network"))

	waitFor(t, "running", reportedStatus(s, a.ID, structs.AllocClientStatusRunning))
	killGroup(t, c.TaskPID(a.ID, "t"))
	st := s.lastReport(a.ID).NetworkStatus
	must.NotNil(t, st)
	must.Eq(t, "eth0", st.InterfaceName)
	_, cidr, _ := net.ParseCIDR(subnet)
	must.True(t, cidr.Contains(net.ParseIP(st.Address)), must.Sprintf("address %q in %s", st.Address, subnet))

	// Reached from the host's port, the task sees its own address, only lo and eth0, and
	// its address in NOMAD_ALLOC_IP_http.
	answer := waitAnswer(t, hostPort)
	must.StrHasPrefix(t, st.Address+" eth0,lo "+st.Address+" ", answer)
	if dns != nil {
		must.Eq(t, dns, st.DNS)
		must.StrHasSuffix(t, " "+strings.Join(dns.Servers, ","), answer)
	}
	// And at its own address on the bridge, on the port inside.
	got, err := askTask(net.JoinHostPort(st.Address, "8080"))
	must.NoError(t, err)
	must.StrHasPrefix(t, st.Address+" ", got)

	stopped := *a
	stopped.DesiredStatus, stopped.AllocModifyIndex = structs.AllocDesiredStatusStop, 2
	s.setAllocs(&stopped)
	waitFor(t, "complete", reportedStatus(s, a.ID, structs.AllocClientStatusComplete))
	e.checkTornDown(a.ID, st.Address)
	_, err = askTask(fmt.Sprintf("127.0.0.1:%d", hostPort))
	must.Error(t, err)
}

func hasBridgeNetwork(n *structs.Node) bool {
	if n == nil || n.NodeResources == nil {
		return false
	}
	for _, nw := range n.NodeResources.Networks {
		if nw != nil && nw.Mode == "bridge" {
			return true
		}
	}
	return false
}

func TestClient_BridgeMode_RawExec(t *testing.T) {
	testBridgeMode(t, "raw_exec", "nfcnic0", "172.26.99.0/24", nil)
}

func TestClient_BridgeMode_Exec(t *testing.T) {
	requireExecDriver(t)
	testBridgeMode(t, "exec", "nfcnic1", "172.26.100.0/24",
		&api.DNSConfig{Servers: []string{"192.0.2.53", "192.0.2.54"}, Searches: []string{"svc.example"}},
		execdriver.New(execdriver.Options{}))
}

// TestClient_BridgeMode_Restart: an agent that goes away leaving its task running keeps the
// allocation's network (the task still answers); the next run finds it again, and a network
// whose allocation ended while no agent ran is torn down at start.
func TestClient_BridgeMode_Restart(t *testing.T) {
	e := newBridgeEnv(t, "nfcnic2", "172.26.101.0/24")
	p1, p2 := hostFreePort(t), hostFreePort(t)
	a1 := bridgeAlloc("b1e0a7c2-0000-4000-8000-000000000011", "raw_exec", p1)
	a2 := bridgeAlloc("b1e0a7c2-0000-4000-8000-000000000012", "raw_exec", p2)
	c1, s1 := e.start(nil, a1, a2)
	waitFor(t, "a1 running", reportedStatus(s1, a1.ID, structs.AllocClientStatusRunning))
	waitFor(t, "a2 running", reportedStatus(s1, a2.ID, structs.AllocClientStatusRunning))
	addr1, addr2 := s1.lastReport(a1.ID).NetworkStatus.Address, s1.lastReport(a2.ID).NetworkStatus.Address
	waitAnswer(t, p1)
	waitAnswer(t, p2)
	pid2 := c1.TaskPID(a2.ID, "t")
	killGroup(t, c1.TaskPID(a1.ID, "t"))
	killGroup(t, pid2)
	c1.Shutdown()
	must.StrHasPrefix(t, addr1+" ", waitAnswer(t, p1))

	// While no agent runs, a2's task ends and the client state forgets a2 (as when the
	// agent died before it stored it): only its network record is left.
	must.NoError(t, exec.Command("kill", "-9", fmt.Sprint(pid2)).Run())
	waitFor(t, "a2's task to end", func() bool { return processGone(pid2) })
	st, _, err := openClientState(e.stateDir, hclog.NewNullLogger())
	must.NoError(t, err)
	must.NoError(t, st.deleteAlloc(a2.ID))
	must.NoError(t, st.close())

	c2, s2 := e.start(nil, a1)
	waitFor(t, "a1 reported again", reportedStatus(s2, a1.ID, structs.AllocClientStatusRunning))
	must.Eq(t, addr1, s2.lastReport(a1.ID).NetworkStatus.Address)
	must.StrHasPrefix(t, addr1+" ", waitAnswer(t, p1))
	must.Eq(t, []string{a1.ID}, e.manager().Recorded())
	must.Eq(t, 0, iptablesCount(t, addr2))
	_, err = os.Stat(filepath.Join(e.netnsDir, a2.ID))
	must.True(t, os.IsNotExist(err))

	stopped := *a1
	stopped.DesiredStatus, stopped.AllocModifyIndex = structs.AllocDesiredStatusStop, 2
	s2.setAllocs(&stopped)
	waitFor(t, "a1 complete", reportedStatus(s2, a1.ID, structs.AllocClientStatusComplete))
	e.checkTornDown(a1.ID, addr1)
	_ = c2
}

func TestClient_BadBridgeConfigRefused(t *testing.T) {
	for _, cfg := range []*Config{
		{AllocDir: t.TempDir(), BridgeSubnet: "172.26.64.0"},
		{AllocDir: t.TempDir(), BridgeName: "a-name-longer-than-15"},
		{AllocDir: t.TempDir(), BridgeName: "br/0"},
	} {
		_, err := New(cfg, newFakeServers())
		must.ErrorContains(t, err, "bridge_network_")
	}
}
