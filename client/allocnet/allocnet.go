// Package allocnet gives an allocation of a group with `network { mode = "bridge" }` a network
// namespace of its own, attached through CNI (the containernetworking/cni library and the
// reference plugins) to a bridge on the node, with the group's ports mapped from the host by
// the portmap plugin, as upstream's default bridge network does.
//
// Every namespace is bind-mounted under NetNSDir (so it outlives the process that made it and
// a restarted agent finds it), and is recorded in StateDir before any plugin runs: a record
// is what the agent tears down (CNI DEL, then the namespace) when the allocation ends, and
// what Reconcile walks after the agent was killed, so that nothing set up is ever forgotten.
package allocnet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/containernetworking/cni/libcni"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	"golang.org/x/sys/unix"
)

// Defaults, upstream's.
const (
	DefaultBridgeName = "nomad"
	DefaultSubnet     = "172.26.64.0/20"
	DefaultNetNSDir   = "/var/run/netns"
	// IfName is the interface the allocation sees inside its namespace.
	IfName = "eth0"
	// networkName names the CNI network (and so the plugins' cache and IPAM store).
	networkName = "nomad"
)

// DefaultPluginDirs are searched after the configured cni_path: upstream's default and the
// directory Debian's containernetworking-plugins installs to.
var DefaultPluginDirs = []string{"/opt/cni/bin", "/usr/lib/cni"}

// RequiredPlugins are the plugins the bridge network runs.
var RequiredPlugins = []string{"loopback", "bridge", "host-local", "firewall", "portmap"}

// Config says where the plugins and the records are and what the bridge is.
type Config struct {
	// PluginDirs are searched in order for each plugin.
	PluginDirs []string
	// StateDir holds the records of the namespaces set up, and libcni's cache.
	StateDir string
	// NetNSDir is where namespaces are bind-mounted ("" for DefaultNetNSDir).
	NetNSDir string
	// BridgeName and Subnet are bridge_network_name and bridge_network_subnet.
	BridgeName string
	Subnet     string
}

// Port is one mapping of a host port to a port in the allocation's namespace.
type Port struct {
	Label    string
	HostPort int
	// ContainerPort is the port's `to`, or HostPort when it has none.
	ContainerPort int
	HostIP        string `json:",omitempty"`
}

// Status is what an allocation's network is.
type Status struct {
	NetNS         string
	InterfaceName string
	Address       string
}

// record is what is stored per allocation: enough to run CNI DEL again exactly.
type record struct {
	AllocID  string
	NetNS    string
	ConfList json.RawMessage
	Ports    []Port
	Status   *Status `json:",omitempty"`
}

// Manager sets up and tears down allocations' networks.
type Manager struct {
	cfg Config
	cni *libcni.CNIConfig
	mu  sync.Mutex
}

// New returns a Manager; it creates nothing until an allocation asks.
func New(cfg Config) *Manager {
	if cfg.NetNSDir == "" {
		cfg.NetNSDir = DefaultNetNSDir
	}
	if cfg.BridgeName == "" {
		cfg.BridgeName = DefaultBridgeName
	}
	if cfg.Subnet == "" {
		cfg.Subnet = DefaultSubnet
	}
	return &Manager{cfg: cfg, cni: libcni.NewCNIConfigWithCacheDir(cfg.PluginDirs, filepath.Join(cfg.StateDir, "cache"), nil)}
}

// Available says why the node cannot run bridge networks, nil when it can: it must run as
// root and find every plugin.
func (m *Manager) Available() error {
	if os.Geteuid() != 0 {
		return errors.New("bridge networking needs the agent to run as root")
	}
	for _, p := range RequiredPlugins {
		if _, err := m.findPlugin(p); err != nil {
			return err
		}
	}
	if _, _, err := net.ParseCIDR(m.cfg.Subnet); err != nil {
		return fmt.Errorf("bridge_network_subnet %q: %v", m.cfg.Subnet, err)
	}
	return nil
}

func (m *Manager) findPlugin(name string) (string, error) {
	for _, d := range m.cfg.PluginDirs {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("CNI plugin %q not found in %s", name, strings.Join(m.cfg.PluginDirs, ", "))
}

// confList is upstream's default bridge network: loopback, a bridge with host-local IPAM and
// masquerading, the firewall plugin's forwarding rules, and portmap for the group's ports.
func (m *Manager) confList() []byte {
	conf := map[string]any{
		"cniVersion": "1.0.0",
		"name":       networkName + "-" + m.cfg.BridgeName,
		"plugins": []any{
			map[string]any{"type": "loopback"},
			map[string]any{
				"type": "bridge", "bridge": m.cfg.BridgeName, "ipMasq": true, "isGateway": true,
				"forceAddress": true, "hairpinMode": true,
				"ipam": map[string]any{
					"type":   "host-local",
					"ranges": []any{[]any{map[string]any{"subnet": m.cfg.Subnet}}},
					"routes": []any{map[string]any{"dst": "0.0.0.0/0"}},
				},
			},
			map[string]any{"type": "firewall", "backend": "iptables", "iptablesAdminChainName": "NOMAD-ADMIN"},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}, "snat": true},
		},
	}
	raw, _ := json.Marshal(conf)
	return raw
}

func (m *Manager) recordPath(allocID string) string {
	return filepath.Join(m.cfg.StateDir, allocID+".json")
}

// validID keeps an allocation ID from naming a path outside the directories.
func validID(id string) error {
	if id == "" || strings.ContainsAny(id, "/\\") || id == "." || id == ".." {
		return fmt.Errorf("invalid allocation ID %q", id)
	}
	return nil
}

func (m *Manager) readRecord(allocID string) (*record, error) {
	raw, err := os.ReadFile(m.recordPath(allocID))
	if err != nil {
		return nil, err
	}
	var r record
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("reading %s: %w", m.recordPath(allocID), err)
	}
	return &r, nil
}

func (m *Manager) writeRecord(r *record) error {
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(m.cfg.StateDir, 0o700); err != nil {
		return err
	}
	tmp := m.recordPath(r.AllocID) + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, m.recordPath(r.AllocID))
}

func (r *record) runtimeConf() *libcni.RuntimeConf {
	var maps []map[string]any
	for _, p := range r.Ports {
		for _, proto := range []string{"tcp", "udp"} {
			e := map[string]any{"hostPort": p.HostPort, "containerPort": p.ContainerPort, "protocol": proto}
			if p.HostIP != "" {
				e["hostIP"] = p.HostIP
			}
			maps = append(maps, e)
		}
	}
	rc := &libcni.RuntimeConf{ContainerID: r.AllocID, NetNS: r.NetNS, IfName: IfName}
	if len(maps) > 0 {
		rc.CapabilityArgs = map[string]any{"portMappings": maps}
	}
	return rc
}

// Setup gives the allocation its namespace and attaches it, or returns what an earlier
// Setup (perhaps of an earlier run of the agent) made. On failure nothing is left behind.
func (m *Manager) Setup(ctx context.Context, allocID string, ports []Port) (*Status, error) {
	return m.SetupFrom(ctx, allocID, "", ports)
}

// SetupFrom is Setup of an existing namespace, source (a sandbox's /proc/<pid>/ns/net),
// bind-mounted where Setup would create one; "" creates one.
func (m *Manager) SetupFrom(ctx context.Context, allocID, source string, ports []Port) (*Status, error) {
	if err := validID(allocID); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, err := m.readRecord(allocID); err == nil && r.Status != nil && nsMounted(r.NetNS) {
		return r.Status, nil
	} else if err == nil {
		// A setup that did not finish (the agent died in it): start again from nothing.
		m.teardown(ctx, r)
	}
	r := &record{AllocID: allocID, NetNS: filepath.Join(m.cfg.NetNSDir, allocID), ConfList: m.confList(), Ports: ports}
	// Recorded before anything exists, so that a crash at any later point leaves a record
	// that Reconcile tears down.
	if err := m.writeRecord(r); err != nil {
		return nil, fmt.Errorf("recording the allocation's network: %w", err)
	}
	st, err := m.setup(ctx, r, source)
	if err != nil {
		if terr := m.teardown(ctx, r); terr != nil {
			err = fmt.Errorf("%w (and cleaning up: %v)", err, terr)
		}
		return nil, err
	}
	r.Status = st
	if err := m.writeRecord(r); err != nil {
		_ = m.teardown(ctx, r)
		return nil, fmt.Errorf("recording the allocation's network: %w", err)
	}
	return st, nil
}

func (m *Manager) setup(ctx context.Context, r *record, source string) (*Status, error) {
	if err := createNetNS(r.NetNS, source); err != nil {
		return nil, fmt.Errorf("creating the network namespace: %w", err)
	}
	list, err := libcni.ConfListFromBytes(r.ConfList)
	if err != nil {
		return nil, err
	}
	res, err := m.cni.AddNetworkList(ctx, list, r.runtimeConf())
	if err != nil {
		return nil, fmt.Errorf("CNI: %w", err)
	}
	res100, err := types100.NewResultFromResult(res)
	if err != nil {
		return nil, fmt.Errorf("CNI result: %w", err)
	}
	st := &Status{NetNS: r.NetNS, InterfaceName: IfName}
	for _, ip := range res100.IPs {
		if ip.Address.IP.To4() == nil {
			continue
		}
		if ip.Interface != nil && *ip.Interface >= 0 && *ip.Interface < len(res100.Interfaces) {
			if iface := res100.Interfaces[*ip.Interface]; iface.Sandbox == "" {
				continue // the bridge's own address
			}
		}
		st.Address = ip.Address.IP.String()
		break
	}
	if st.Address == "" {
		return nil, errors.New("CNI gave the allocation no IPv4 address")
	}
	return st, nil
}

// Lookup returns the status of an allocation's network set up earlier, nil when it has none.
func (m *Manager) Lookup(allocID string) *Status {
	if validID(allocID) != nil {
		return nil
	}
	r, err := m.readRecord(allocID)
	if err != nil || r.Status == nil || !nsMounted(r.NetNS) {
		return nil
	}
	return r.Status
}

// Teardown detaches the allocation's namespace (CNI DEL: veth, address lease, iptables
// rules) and removes it. Without a record there is nothing to do.
func (m *Manager) Teardown(ctx context.Context, allocID string) error {
	if err := validID(allocID); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := m.readRecord(allocID)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return m.teardown(ctx, r)
}

// teardown runs CNI DEL and then removes the namespace; the record goes last, only once
// both succeeded, so that a failure is retried by the next Teardown or Reconcile.
func (m *Manager) teardown(ctx context.Context, r *record) error {
	list, err := libcni.ConfListFromBytes(r.ConfList)
	if err != nil {
		return err
	}
	// The namespace stays until DEL succeeded: the bridge plugin finds the addresses whose
	// masquerading it removes in it when the ADD did not finish (libcni caches no result).
	if err := m.cni.DelNetworkList(ctx, list, r.runtimeConf()); err != nil {
		return fmt.Errorf("CNI DEL: %w", err)
	}
	if err := removeNetNS(r.NetNS); err != nil {
		return fmt.Errorf("removing the network namespace: %w", err)
	}
	if err := os.Remove(m.recordPath(r.AllocID)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Recorded lists the allocations that have a record, sorted.
func (m *Manager) Recorded() []string {
	ents, _ := os.ReadDir(m.cfg.StateDir)
	var out []string
	for _, e := range ents {
		if name, ok := strings.CutSuffix(e.Name(), ".json"); ok && !e.IsDir() && validID(name) == nil {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Reconcile tears down the network of every recorded allocation keep does not name (one the
// agent no longer runs: it ended or was removed while the agent was down). It returns the
// allocations torn down.
func (m *Manager) Reconcile(ctx context.Context, keep func(allocID string) bool) ([]string, error) {
	var done []string
	var errs []error
	for _, id := range m.Recorded() {
		if keep(id) {
			continue
		}
		if err := m.Teardown(ctx, id); err != nil {
			errs = append(errs, fmt.Errorf("allocation %s: %w", id, err))
			continue
		}
		done = append(done, id)
	}
	return done, errors.Join(errs...)
}

// createNetNS makes a new network namespace and bind-mounts it at path, or bind-mounts
// source there when it names one. A new one is made on a thread of its own that is never
// handed back to the runtime (its goroutine ends locked, so the thread exits), as the
// thread's network namespace is changed for good.
func createNetNS(path, source string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return err
	}
	_ = f.Close()
	if source != "" {
		if err := unix.Mount(source, path, "none", unix.MS_BIND, ""); err != nil {
			_ = os.Remove(path)
			return fmt.Errorf("bind mount of %s: %w", source, err)
		}
		return nil
	}
	errCh := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// Never unlocked: the thread dies with the goroutine.
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			errCh <- fmt.Errorf("unshare: %w", err)
			return
		}
		src := fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), unix.Gettid())
		if err := unix.Mount(src, path, "none", unix.MS_BIND, ""); err != nil {
			errCh <- fmt.Errorf("bind mount: %w", err)
			return
		}
		errCh <- nil
	}()
	if err := <-errCh; err != nil {
		_ = os.Remove(path)
		return err
	}
	return nil
}

// nsMounted says whether path is a network namespace (a bind-mounted nsfs file).
func nsMounted(path string) bool {
	var st unix.Statfs_t
	return unix.Statfs(path, &st) == nil && st.Type == unix.NSFS_MAGIC
}

// removeNetNS unmounts and removes the namespace's file; one already gone is not an error.
func removeNetNS(path string) error {
	if nsMounted(path) {
		if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
			return err
		}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Join moves the calling thread into the namespace at path. The caller must have locked
// its goroutine to the thread, and keep it locked: the thread no longer is like the others.
func Join(path string) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening the network namespace: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("joining the network namespace: %w", err)
	}
	return nil
}
