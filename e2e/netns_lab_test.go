//go:build e2e && e2ecluster

package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

// netLab is a set of test hosts on one machine: each host is a network namespace with its own
// address on 10.231.7.0/24, all joined by a bridge that lives in a namespace of its own (the
// switch). The root namespace gets one leg into the switch (10.231.7.254) so the test reaches
// the hosts. Cutting a host's link takes its leg on the switch down. Everything is removed when
// the test ends; nothing is routed beyond the bridge.
type netLab struct {
	t      *testing.T
	prefix string
	sw     string
	hosts  []*labHost
}

// labHost is one test host.
type labHost struct {
	lab  *netLab
	name string
	ns   string
	ip   string
	// swLeg is the host's veth end on the switch: down means the host is cut off.
	swLeg string
}

const labSubnet = "10.231.7"

// ipCmd runs `ip args...`, failing the test on error.
func ipCmd(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command("ip", args...).CombinedOutput()
	must.NoError(t, err, must.Sprintf("ip %s: %s", strings.Join(args, " "), out))
}

// newLab builds the switch and the root namespace's leg. It needs root and iproute2; CI runs as
// root, and .ci/run installs iproute2.
func newLab(t *testing.T) *netLab {
	t.Helper()
	must.Eq(t, 0, os.Geteuid(), must.Sprint("the network lab needs root (ip netns)"))
	_, err := exec.LookPath("ip")
	must.NoError(t, err, must.Sprint("the network lab needs iproute2 (apt-get install iproute2)"))
	var b [3]byte
	_, _ = rand.Read(b[:])
	l := &netLab{t: t, prefix: "nf" + hex.EncodeToString(b[:])}
	l.sw = l.prefix + "-sw"
	ipCmd(t, "netns", "add", l.sw)
	t.Cleanup(func() {
		for _, h := range l.hosts {
			_ = exec.Command("ip", "netns", "del", h.ns).Run()
		}
		_ = exec.Command("ip", "netns", "del", l.sw).Run()
		// The root leg goes with its peer; this is for a run that died half way.
		_ = exec.Command("ip", "link", "del", l.prefix+"r").Run()
	})
	ipCmd(t, "-n", l.sw, "link", "add", "br0", "type", "bridge")
	ipCmd(t, "-n", l.sw, "link", "set", "br0", "up")
	ipCmd(t, "-n", l.sw, "link", "set", "lo", "up")
	// The root namespace's leg.
	ipCmd(t, "link", "add", l.prefix+"r", "type", "veth", "peer", "name", l.prefix+"rs")
	ipCmd(t, "link", "set", l.prefix+"rs", "netns", l.sw)
	ipCmd(t, "-n", l.sw, "link", "set", l.prefix+"rs", "master", "br0")
	ipCmd(t, "-n", l.sw, "link", "set", l.prefix+"rs", "up")
	ipCmd(t, "addr", "add", labSubnet+".254/24", "dev", l.prefix+"r")
	ipCmd(t, "link", "set", l.prefix+"r", "up")
	return l
}

// host adds a host named name at labSubnet.<last>.
func (l *netLab) host(name string, last int) *labHost {
	l.t.Helper()
	h := &labHost{lab: l, name: name, ns: l.prefix + "-" + name, ip: fmt.Sprintf("%s.%d", labSubnet, last)}
	h.swLeg = fmt.Sprintf("%s%ds", l.prefix, last)
	inner := fmt.Sprintf("%s%dh", l.prefix, last)
	ipCmd(l.t, "netns", "add", h.ns)
	l.hosts = append(l.hosts, h)
	ipCmd(l.t, "link", "add", inner, "type", "veth", "peer", "name", h.swLeg)
	ipCmd(l.t, "link", "set", inner, "netns", h.ns)
	ipCmd(l.t, "link", "set", h.swLeg, "netns", l.sw)
	ipCmd(l.t, "-n", l.sw, "link", "set", h.swLeg, "master", "br0")
	ipCmd(l.t, "-n", l.sw, "link", "set", h.swLeg, "up")
	ipCmd(l.t, "-n", h.ns, "link", "set", "lo", "up")
	ipCmd(l.t, "-n", h.ns, "link", "set", inner, "name", "eth0")
	ipCmd(l.t, "-n", h.ns, "addr", "add", h.ip+"/24", "dev", "eth0")
	ipCmd(l.t, "-n", h.ns, "link", "set", "eth0", "up")
	return h
}

// cut takes the host off the network; heal puts it back.
func (h *labHost) cut()  { ipCmd(h.lab.t, "-n", h.lab.sw, "link", "set", h.swLeg, "down") }
func (h *labHost) heal() { ipCmd(h.lab.t, "-n", h.lab.sw, "link", "set", h.swLeg, "up") }

// start runs `nomad agent` with config inside the host's namespace. `ip netns exec` execs the
// binary in place, so the process is the agent itself and kill9 kills it.
func (h *labHost) start(config, httpURL string) *agentProc {
	t := h.lab.t
	t.Helper()
	path := filepath.Join(t.TempDir(), h.name+".hcl")
	must.NoError(t, os.WriteFile(path, []byte(config), 0o600))
	a := &agentProc{t: t, config: path, httpURL: httpURL, logs: &bytes.Buffer{}}
	a.cmd = exec.Command("ip", "netns", "exec", h.ns, binary(t), "agent", "-config", path)
	a.cmd.Stdout, a.cmd.Stderr = a.logs, a.logs
	must.NoError(t, a.cmd.Start())
	t.Cleanup(func() {
		if a.cmd.ProcessState == nil {
			_ = a.cmd.Process.Kill()
			_ = a.cmd.Wait()
		}
		if t.Failed() {
			t.Logf("%s output (last 4 KiB):\n%s", h.name, tail(a.logs.String(), 4096))
		}
	})
	return a
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
