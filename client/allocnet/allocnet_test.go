package allocnet

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// testManager needs root and the plugins; it uses a bridge and subnet of its own (never the
// 10.x networks of the e2e cluster lab) and a namespace directory of its own.
func testManager(t *testing.T, bridge, subnet string) *Manager {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	m := New(Config{PluginDirs: DefaultPluginDirs, StateDir: t.TempDir(), NetNSDir: filepath.Join(t.TempDir(), "netns"),
		BridgeName: bridge, Subnet: subnet})
	if err := m.Available(); err != nil {
		t.Skipf("bridge networking unavailable: %v", err)
	}
	t.Cleanup(func() {
		for _, id := range m.Recorded() {
			_ = m.Teardown(context.Background(), id)
		}
		_ = exec.Command("ip", "link", "del", bridge).Run()
	})
	return m
}

// listenIn listens on port in the namespace at path, answering every connection with msg.
func listenIn(t *testing.T, path string, port int, msg string) {
	t.Helper()
	lnCh := make(chan net.Listener, 1)
	errCh := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread is in another namespace
		if err := Join(path); err != nil {
			errCh <- err
			return
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("0.0.0.0:%d", port))
		if err != nil {
			errCh <- err
			return
		}
		lnCh <- ln
	}()
	var ln net.Listener
	select {
	case err := <-errCh:
		t.Fatal(err)
	case ln = <-lnCh:
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = io.WriteString(c, msg)
			_ = c.Close()
		}
	}()
}

func dialRead(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	b, err := io.ReadAll(c)
	return string(b), err
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// iptablesMentions counts the iptables rules (both tables' saves) naming s.
func iptablesMentions(t *testing.T, s string) int {
	out, err := exec.Command("iptables-save").CombinedOutput()
	must.NoError(t, err, must.Sprint(string(out)))
	return strings.Count(string(out), s)
}

func TestSetup_PortMappedFromHostAndTeardownCleansUp(t *testing.T) {
	m := testManager(t, "nfcnit0", "172.26.96.0/24")
	ctx := context.Background()
	hostPort := freePort(t)
	id := "3f1c2a8e-0000-4000-8000-00000000a001"
	st, err := m.Setup(ctx, id, []Port{{Label: "http", HostPort: hostPort, ContainerPort: 8080}})
	must.NoError(t, err)
	must.Eq(t, IfName, st.InterfaceName)
	ip := net.ParseIP(st.Address)
	must.NotNil(t, ip)
	_, subnet, _ := net.ParseCIDR("172.26.96.0/24")
	must.True(t, subnet.Contains(ip), must.Sprintf("address %s outside the subnet", ip))
	must.True(t, nsMounted(st.NetNS))
	must.Eq(t, st, m.Lookup(id))

	listenIn(t, st.NetNS, 8080, "hello from the namespace")
	// Directly at the allocation's address, and through the mapped host port.
	got, err := dialRead(net.JoinHostPort(st.Address, "8080"))
	must.NoError(t, err)
	must.Eq(t, "hello from the namespace", got)
	got, err = dialRead(fmt.Sprintf("127.0.0.1:%d", hostPort))
	must.NoError(t, err)
	must.Eq(t, "hello from the namespace", got)
	must.Positive(t, iptablesMentions(t, st.Address))

	// A second Setup (a restarted agent's) returns what exists.
	again, err := m.Setup(ctx, id, nil)
	must.NoError(t, err)
	must.Eq(t, st, again)

	must.NoError(t, m.Teardown(ctx, id))
	must.False(t, nsMounted(st.NetNS))
	_, err = os.Stat(st.NetNS)
	must.True(t, os.IsNotExist(err))
	must.Eq(t, 0, iptablesMentions(t, st.Address))
	must.Eq(t, 0, iptablesMentions(t, id))
	must.Nil(t, m.Lookup(id))
	must.SliceEmpty(t, m.Recorded())
	_, err = dialRead(fmt.Sprintf("127.0.0.1:%d", hostPort))
	must.Error(t, err)
	// The bridge has no port left: the veth went with the namespace.
	out, _ := exec.Command("ip", "-o", "link", "show", "master", "nfcnit0").CombinedOutput()
	must.Eq(t, "", strings.TrimSpace(string(out)))
	// Tearing down twice is harmless.
	must.NoError(t, m.Teardown(ctx, id))
}

func TestReconcile_TearsDownOnlyWhatIsNotKept(t *testing.T) {
	m := testManager(t, "nfcnit1", "172.26.97.0/24")
	ctx := context.Background()
	keepID, goneID := "3f1c2a8e-0000-4000-8000-00000000b001", "3f1c2a8e-0000-4000-8000-00000000b002"
	kept, err := m.Setup(ctx, keepID, []Port{{HostPort: freePort(t), ContainerPort: 80}})
	must.NoError(t, err)
	gone, err := m.Setup(ctx, goneID, []Port{{HostPort: freePort(t), ContainerPort: 80}})
	must.NoError(t, err)
	must.NotEq(t, kept.Address, gone.Address)

	// A fresh manager, as a restarted agent makes, finds both from the records.
	m2 := New(m.cfg)
	done, err := m2.Reconcile(ctx, func(id string) bool { return id == keepID })
	must.NoError(t, err)
	must.Eq(t, []string{goneID}, done)
	must.False(t, nsMounted(gone.NetNS))
	must.Eq(t, 0, iptablesMentions(t, gone.Address))
	must.True(t, nsMounted(kept.NetNS))
	must.Positive(t, iptablesMentions(t, kept.Address))
	must.Eq(t, []string{keepID}, m2.Recorded())
}

// A DEL that fails (a plugin gone) keeps the namespace and the record, so that a later
// teardown, with the plugins back, removes everything.
func TestTeardown_FailedDelIsRetried(t *testing.T) {
	m := testManager(t, "nfcnit2", "172.26.98.0/24")
	ctx := context.Background()
	id := "3f1c2a8e-0000-4000-8000-00000000c001"
	st, err := m.Setup(ctx, id, []Port{{HostPort: freePort(t), ContainerPort: 80}})
	must.NoError(t, err)
	dir := t.TempDir()
	for _, p := range []string{"loopback", "bridge", "host-local", "firewall"} {
		must.NoError(t, os.Symlink(filepath.Join("/usr/lib/cni", p), filepath.Join(dir, p)))
	}
	cfg := m.cfg
	cfg.PluginDirs = []string{dir}
	must.ErrorContains(t, New(cfg).Teardown(ctx, id), "portmap")
	must.True(t, nsMounted(st.NetNS))
	must.Eq(t, []string{id}, m.Recorded())
	must.NoError(t, m.Teardown(ctx, id))
	must.False(t, nsMounted(st.NetNS))
	must.Eq(t, 0, iptablesMentions(t, st.Address))
	must.Eq(t, 0, iptablesMentions(t, id))
	must.SliceEmpty(t, m.Recorded())
}
