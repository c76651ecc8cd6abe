//go:build e2e

package e2e

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/drivers/docker/dockertest"
	"github.com/shoenig/test/must"
)

// The bridge and subnet of these tests: their own, never the 10.x networks of the cluster lab.
const (
	e2eBridge = "nfcnie0"
	e2eSubnet = "172.26.102.0/24"
)

// bridgeServer answers each connection with the address it was reached at and the
// interfaces the task sees.
const bridgeServer = `
import os, socket
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("0.0.0.0", int(os.environ["NOMAD_PORT_http"])))
srv.listen(8)
open(os.environ["NOMAD_TASK_DIR"] + "/pid", "w").write(str(os.getpid()))
while True:
    c, _ = srv.accept()
    names = ",".join(sorted(n for _, n in socket.if_nameindex()))
    c.sendall(("%s %s" % (c.getsockname()[0], names)).encode())
    c.close()
`

func requireBridge(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("bridge networking needs root")
	}
	for _, p := range []string{"/usr/lib/cni/bridge", "/usr/lib/cni/portmap", "/usr/lib/cni/firewall"} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("the CNI plugins are not installed (containernetworking-plugins): %v", err)
		}
	}
	for _, b := range []string{"python3", "iptables-save", "ip"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s is needed", b)
		}
	}
}

// netState is what a leak would show: the namespaces `ip netns` lists, iptables rules naming
// CNI, and the ports of the bridge.
type netState struct {
	netns, cniRules, bridgePorts string
}

func readNetState(t *testing.T) netState {
	t.Helper()
	run := func(name string, args ...string) string {
		out, err := exec.Command(name, args...).Output()
		if err != nil && name != "ip" {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		return string(out)
	}
	var rules []string
	for line := range strings.SplitSeq(run("iptables-save"), "\n") {
		if strings.Contains(line, "CNI") && !strings.HasPrefix(line, "#") {
			rules = append(rules, line)
		}
	}
	return netState{netns: run("ip", "netns", "list"), cniRules: strings.Join(rules, "\n"),
		bridgePorts: strings.TrimSpace(run("ip", "-o", "link", "show", "master", e2eBridge))}
}

func bridgeJob(id string) *api.Job {
	job := api.NewServiceJob(id, id, "global", 50)
	job.Datacenters = []string{"dc1"}
	task := api.NewTask("srv", "raw_exec")
	task.Config = map[string]any{"command": "python3", "args": []string{"-c", bridgeServer}}
	tg := api.NewTaskGroup("g", 1).AddTask(task)
	tg.Networks = []*api.NetworkResource{{Mode: "bridge", DynamicPorts: []api.Port{{Label: "http", To: 8080}}}}
	job.AddTaskGroup(tg)
	return job
}

func askBridge(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	b, err := io.ReadAll(c)
	return string(b), err
}

// TestBridgeNetwork_PortMapKill9Stop runs a job in bridge mode with a dynamic port mapped to
// 8080 inside: the task, in a namespace of its own, is reached through the host port; a kill
// -9 of the agent leaves it answering, the restarted agent takes it back without setting up
// a second network, and `job stop` leaves nothing: namespace, iptables rules, veth.
func TestBridgeNetwork_PortMapKill9Stop(t *testing.T) {
	requireBridge(t)
	before := readNetState(t)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", e2eBridge).Run() })
	dataDir := t.TempDir()
	config, url := writeConfig(t, dataDir, fmt.Sprintf(`
client {
  enabled               = true
  bridge_network_name   = %q
  bridge_network_subnet = %q
}
plugin "raw_exec" {
  config {
    enabled = true
  }
}
`, e2eBridge, e2eSubnet))
	agent := startAgent(t, config, url)
	c := agent.client()
	_, _, err := c.Jobs().Register(bridgeJob("bridged"), nil)
	must.NoError(t, err)

	var alloc *api.Allocation
	waitUntil(t, 60*time.Second, "the allocation to run", func() bool {
		stubs, _, err := c.Jobs().Allocations("bridged", false, nil)
		if err != nil || len(stubs) != 1 || stubs[0].ClientStatus != "running" {
			return false
		}
		alloc, _, err = c.Allocations().Info(stubs[0].ID, nil)
		return err == nil && alloc.NetworkStatus != nil && alloc.NetworkStatus.Address != ""
	})
	st := alloc.NetworkStatus
	_, subnet, _ := net.ParseCIDR(e2eSubnet)
	must.True(t, subnet.Contains(net.ParseIP(st.Address)), must.Sprintf("address %q in %s", st.Address, e2eSubnet))
	must.Eq(t, "eth0", st.InterfaceName)
	ports := alloc.AllocatedResources.Shared.Ports
	must.SliceLen(t, 1, ports)
	must.Eq(t, 8080, ports[0].To)
	hostIP := ports[0].HostIP
	if hostIP == "" {
		hostIP = "127.0.0.1"
	}
	hostAddr := net.JoinHostPort(hostIP, fmt.Sprint(ports[0].Value))
	want := st.Address + " eth0,lo"
	waitUntil(t, 30*time.Second, "the task to answer through the host port", func() bool {
		got, err := askBridge(hostAddr)
		return err == nil && got == want
	})
	pidRaw, err := os.ReadFile(dataDir + "/alloc/" + alloc.ID + "/srv/local/pid")
	must.NoError(t, err)
	var pid int
	_, err = fmt.Sscan(string(pidRaw), &pid)
	must.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	running := readNetState(t)
	must.StrContains(t, running.netns, alloc.ID)
	must.StrContains(t, running.cniRules, st.Address)

	// kill -9: the task and its network stay; the restarted agent finds both.
	agent.kill9()
	got, err := askBridge(hostAddr)
	must.NoError(t, err)
	must.Eq(t, want, got)
	agent = startAgent(t, config, url)
	c = agent.client()
	waitUntil(t, 60*time.Second, "the restarted agent to report the task", func() bool {
		a, _, err := c.Allocations().Info(alloc.ID, nil)
		return err == nil && a.ClientStatus == "running" && strings.Contains(agent.logs.String(), "re-attached to task")
	})
	got, err = askBridge(hostAddr)
	must.NoError(t, err)
	must.Eq(t, want, got)
	must.Eq(t, running, readNetState(t), must.Sprint("the restarted agent set up nothing more"))

	out, code := cli(t, url, "", "job", "stop", "bridged")
	must.Eq(t, 0, code, must.Sprint(out))
	waitUntil(t, 60*time.Second, "the allocation to stop", func() bool {
		a, _, err := c.Allocations().Info(alloc.ID, nil)
		return err == nil && a.ClientStatus == "complete"
	})
	waitUntil(t, 30*time.Second, "the network to be torn down", func() bool {
		now := readNetState(t)
		return !strings.Contains(now.netns, alloc.ID)
	})
	after := readNetState(t)
	must.Eq(t, before.netns, after.netns, must.Sprint("no namespace left"))
	must.StrNotContains(t, after.cniRules, st.Address)
	must.StrNotContains(t, after.cniRules, alloc.ID)
	must.Eq(t, "", after.bridgePorts, must.Sprint("no veth left on the bridge"))
	_, err = askBridge(hostAddr)
	must.Error(t, err)
}

// TestBridgeNetwork_Docker: a docker task in bridge mode joins the allocation's namespace
// through a pause container whose infra_image the agent pulls from a registry (none is on the
// node); the task answers on its host port and sees the allocation's address; `job stop`
// removes the pause container and leaves no namespace, rule or veth.
func TestBridgeNetwork_Docker(t *testing.T) {
	requireBridge(t)
	if !dockerWorks(t) {
		t.Skip("no Docker Engine")
	}
	dcli := dockertest.Client(t)
	dockertest.BuildPauseImage(t, dcli)
	reg := dockertest.StartRegistry(t, dockertest.RegistryOptions{})
	pauseRef := reg.Push(t, dcli, dockertest.PauseImage, "nomadfork/pause:e2e")
	t.Cleanup(func() { dockertest.RemoveImage(t, dcli, pauseRef) })
	before := readNetState(t)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", e2eBridge).Run() })

	config, url := writeConfig(t, t.TempDir(), fmt.Sprintf(`
client {
  enabled               = true
  bridge_network_name   = %q
  bridge_network_subnet = %q
}
plugin "docker" {
  config {
    infra_image = %q
  }
}
`, e2eBridge, e2eSubnet, pauseRef))
	agent := startAgent(t, config, url)
	c := agent.client()
	job := api.NewServiceJob("dbridged", "dbridged", "global", 50)
	job.Datacenters = []string{"dc1"}
	task := api.NewTask("web", "docker")
	task.Config = map[string]any{"image": dockertest.Image, "args": []string{"httpd", "-p", "8080", "-h", "/etc"}}
	tg := api.NewTaskGroup("g", 1).AddTask(task)
	tg.Networks = []*api.NetworkResource{{Mode: "bridge", DynamicPorts: []api.Port{{Label: "http", To: 8080}},
		DNS: &api.DNSConfig{Servers: []string{"192.0.2.53"}}}}
	job.AddTaskGroup(tg)
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	t.Cleanup(func() { _, _, _ = c.Jobs().Deregister("dbridged", true, nil) })

	var alloc *api.Allocation
	waitUntil(t, 2*time.Minute, "the allocation to run", func() bool {
		stubs, _, err := c.Jobs().Allocations("dbridged", false, nil)
		if err != nil || len(stubs) != 1 || stubs[0].ClientStatus != "running" {
			return false
		}
		alloc, _, err = c.Allocations().Info(stubs[0].ID, nil)
		return err == nil && alloc.NetworkStatus != nil && alloc.NetworkStatus.Address != ""
	})
	addr := hostAddr(t, alloc, "http")
	must.Eq(t, "nameserver 192.0.2.53\n", httpBody(t, "http://"+addr+"/resolv.conf"))
	// At the allocation's own address, on the port inside.
	must.Eq(t, "nameserver 192.0.2.53\n", httpBody(t, "http://"+net.JoinHostPort(alloc.NetworkStatus.Address, "8080")+"/resolv.conf"))
	running := readNetState(t)
	must.StrContains(t, running.netns, alloc.ID)
	out, err := exec.Command("docker", "inspect", "-f", "{{.State.Running}}", "nomad_init_"+alloc.ID).CombinedOutput()
	must.NoError(t, err, must.Sprint(string(out)))
	must.Eq(t, "true", strings.TrimSpace(string(out)))

	out2, code := cli(t, url, "", "job", "stop", "dbridged")
	must.Eq(t, 0, code, must.Sprint(out2))
	waitUntil(t, time.Minute, "the network and pause container to go", func() bool {
		now := readNetState(t)
		err := exec.Command("docker", "inspect", "nomad_init_"+alloc.ID).Run()
		return !strings.Contains(now.netns, alloc.ID) && err != nil
	})
	after := readNetState(t)
	must.Eq(t, before.netns, after.netns)
	must.StrNotContains(t, after.cniRules, alloc.NetworkStatus.Address)
	must.StrNotContains(t, after.cniRules, alloc.ID)
	must.Eq(t, "", after.bridgePorts)
}
