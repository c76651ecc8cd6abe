package agent

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// hostNetAddr is the address of the tests' second interface: in 198.18.0.0/15, the
// benchmarking range, so it is neither the machine's own network nor the cluster lab's.
const (
	hostNetCIDR = "198.18.77.0/24"
	hostNetAddr = "198.18.77.1"
)

// addTestInterface gives the machine a second interface with hostNetAddr (a veth pair: the
// kernel of the CI machine has no dummy interfaces), removed at cleanup.
func addTestInterface(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("adding an interface needs root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("ip (iproute2) is needed")
	}
	name := fmt.Sprintf("nfhn%d", os.Getpid()%100000)
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
	_ = exec.Command("ip", "link", "del", name).Run() // a leftover of a killed run
	run("link", "add", name, "type", "veth", "peer", "name", name+"p")
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", name).Run() })
	run("addr", "add", hostNetAddr+"/24", "dev", name)
	run("link", "set", name, "up")
	run("link", "set", name+"p", "up")
	return name
}

// echoServer answers each connection with the address it listens on and the task's view of
// its port, then exits after one answer.
const echoServer = `
import os, socket
srv = socket.socket()
srv.bind((os.environ["NOMAD_IP_http"], int(os.environ["NOMAD_PORT_http"])))
srv.listen(8)
while True:
    c, _ = srv.accept()
    c.sendall(("%s:%d %s %s" % (srv.getsockname() + (os.environ["NOMAD_ADDR_http"], os.environ["NOMAD_HOST_IP_http"]))).encode())
    c.close()
`

// TestHostNetworks_ThroughAgent: a client with host_network "public" on its second
// interface reports it; a raw_exec task whose port asks for "public" is given that address,
// binds it and answers there; a port of a host network no node has is not placed, and the
// evaluation says why.
func TestHostNetworks_ThroughAgent(t *testing.T) {
	iface := addTestInterface(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is needed for the task's server")
	}
	ta := NewTestClientAgent(t, func(c *Config) {
		c.Client.HostNetworks = []*HostNetworkConfig{{Name: "public", CIDR: hostNetCIDR, Interface: iface, ReservedPorts: "20000-20004"}}
	})
	c := ta.Client("")

	res := doHTTP(t, ta, "GET", "/v1/node/"+ta.Agent.Client().NodeID(), nil, nil)
	must.Eq(t, 200, res.status)
	var node struct {
		HostNetworks  map[string]*api.HostNetworkInfo
		NodeResources structs.NodeResources
	}
	must.NoError(t, json.Unmarshal([]byte(res.body), &node))
	must.Eq(t, map[string]*api.HostNetworkInfo{"public": {Name: "public", CIDR: hostNetCIDR, Interface: iface, ReservedPorts: "20000-20004"}}, node.HostNetworks)
	var public []string
	for _, nn := range node.NodeResources.NodeNetworks {
		for _, a := range nn.Addresses {
			if a.Alias == "public" {
				public = append(public, nn.Device+" "+a.Address+" "+a.ReservedPorts)
			}
		}
	}
	must.Eq(t, []string{iface + " " + hostNetAddr + " 20000-20004"}, public)

	job := testJob("hostnet")
	task := job.TaskGroups[0].Tasks[0]
	task.Config = map[string]any{"command": "python3", "args": []string{"-c", echoServer}}
	job.TaskGroups[0].Networks = []*api.NetworkResource{{DynamicPorts: []api.Port{{Label: "http", HostNetwork: "public"}}}}
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	allocs := allocsIn(t, c, "hostnet", map[string]int{"running": 1})
	alloc, _, err := c.Allocations().Info(allocs[0].ID, nil)
	must.NoError(t, err)
	ports := alloc.AllocatedResources.Shared.Ports
	must.Len(t, 1, ports)
	must.Eq(t, hostNetAddr, ports[0].HostIP)
	must.Eq(t, 20005, ports[0].Value, must.Sprint("the network's reserved ports are skipped"))

	addr := net.JoinHostPort(hostNetAddr, fmt.Sprint(ports[0].Value))
	var answer string
	eventually(t, 20*time.Second, "the task to answer on "+addr, func() (bool, string) {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false, err.Error()
		}
		defer conn.Close()
		raw, err := io.ReadAll(conn)
		answer = string(raw)
		return err == nil && answer != "", fmt.Sprint(err)
	})
	must.Eq(t, fmt.Sprintf("%s %s %s", addr, addr, hostNetAddr), answer)

	missing := testJob("nowhere")
	missing.TaskGroups[0].Networks = []*api.NetworkResource{{DynamicPorts: []api.Port{{Label: "http", HostNetwork: "nowhere"}}}}
	_, _, err = c.Jobs().Register(missing, nil)
	must.NoError(t, err)
	var why string
	eventually(t, 20*time.Second, "the evaluation to explain the missing network", func() (bool, string) {
		evals, _, err := c.Jobs().Evaluations("nowhere", nil)
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evals {
			if m := e.FailedTGAllocs["web"]; m != nil {
				for k := range m.ConstraintFiltered {
					why = k
				}
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d evaluations, none failed", len(evals))
	})
	must.Eq(t, `missing host network "nowhere" for port "http"`, why)
	must.False(t, strings.Contains(why, "default"))
}
