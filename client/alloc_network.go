package client

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/allocdir"
	"github.com/nomadfork/nomad/client/allocnet"
	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/structs"
)

// NetworkModeBridge is the group network mode that gives an allocation a network namespace
// of its own on the node's bridge (client/allocnet).
const NetworkModeBridge = "bridge"

// newNetManager builds the bridge network manager from the client block. Its records live in
// the state directory, so that a restarted agent tears down what its previous run set up;
// without one (a dev agent), beside the allocations.
func newNetManager(cfg *Config) *allocnet.Manager {
	var dirs []string
	for d := range strings.SplitSeq(cfg.CNIPath, ":") {
		if d = strings.TrimSpace(d); d != "" {
			dirs = append(dirs, d)
		}
	}
	dirs = append(dirs, allocnet.DefaultPluginDirs...)
	stateDir := filepath.Join(cfg.AllocDir, ".allocnet")
	if cfg.StateDir != "" {
		stateDir = filepath.Join(cfg.StateDir, "allocnet")
	}
	return allocnet.New(allocnet.Config{PluginDirs: dirs, StateDir: stateDir, NetNSDir: cfg.NetNSDir,
		BridgeName: cfg.BridgeName, Subnet: cfg.BridgeSubnet})
}

// fingerprintBridge adds the bridge network to the node's resources when the node can run
// it (root, every plugin found), which is what the scheduler asks of a group in bridge mode.
func (c *Client) fingerprintBridge(n *structs.Node) {
	if err := c.net.Available(); err != nil {
		c.logger.Info("bridge networking unavailable on this node", "reason", err)
		return
	}
	if n.NodeResources == nil {
		n.NodeResources = &structs.NodeResources{}
	}
	name := c.config.BridgeName
	if name == "" {
		name = allocnet.DefaultBridgeName
	}
	n.NodeResources.Networks = append(n.NodeResources.Networks, &api.NetworkResource{Mode: NetworkModeBridge, Device: name})
	n.Attributes["plugins.cni.bridge"] = "1"
}

// reconcileNetworks tears down the networks a previous run of the agent set up for
// allocations it does not run again (they ended, or the agent was killed before it tore
// them down); the restored allocations' runners keep theirs and tear them down when they end.
func (c *Client) reconcileNetworks(restored []*restoredAlloc) {
	keep := map[string]bool{}
	for _, ra := range restored {
		keep[ra.alloc.ID] = true
	}
	ctx, cancel := context.WithTimeout(c.ctx, time.Minute)
	defer cancel()
	done, err := c.net.Reconcile(ctx, func(id string) bool { return keep[id] })
	if len(done) > 0 {
		c.logger.Info("tore down networks a previous run left behind", "allocs", done)
	}
	if err != nil {
		c.logger.Error("tearing down networks a previous run left behind failed", "error", err)
	}
	for name, d := range c.drivers {
		sb, ok := d.(drivers.NetworkSandboxer)
		if !ok {
			continue
		}
		n, err := sb.RemoveSandboxes(ctx, func(id string) bool { return keep[id] })
		switch {
		case err != nil:
			c.logger.Debug("network sandbox cleanup skipped", "driver", name, "error", err)
		case n > 0:
			c.logger.Info("removed network sandboxes a previous run left behind", "driver", name, "count", n)
		}
	}
}

// groupNetworkMode is the mode of the group's network, "" (host) when it has none.
func groupNetworkMode(tg *api.TaskGroup) string {
	for _, n := range tg.Networks {
		if n != nil {
			return n.Mode
		}
	}
	return ""
}

// setupNetwork gives an allocation in bridge mode its namespace with the group's ports
// mapped from the host, and writes its resolv.conf when the group has a dns block. A
// restored allocation gets back the namespace its tasks already run in.
func (r *allocRunner) setupNetwork(alloc *structs.Allocation, tg *api.TaskGroup) error {
	if groupNetworkMode(tg) != NetworkModeBridge {
		return nil
	}
	var ports []allocnet.Port
	for _, p := range groupPorts(alloc, tg) {
		if p.Value <= 0 {
			continue
		}
		to := p.To
		if to <= 0 {
			to = p.Value
		}
		ports = append(ports, allocnet.Port{Label: p.Label, HostPort: p.Value, ContainerPort: to, HostIP: p.HostIP})
	}
	ctx, cancel := context.WithTimeout(r.c.ctx, 2*time.Minute)
	defer cancel()
	source := ""
	sb, sbName := r.c.groupSandboxer(tg)
	if sb != nil {
		// A restored allocation's sandbox is found running again; the namespace recorded
		// is then the one it holds.
		var err error
		if source, err = sb.CreateSandbox(ctx, alloc.ID); err != nil {
			return fmt.Errorf("setting up the bridge network: %w", err)
		}
	}
	st, err := r.c.net.SetupFrom(ctx, alloc.ID, source, ports)
	if err != nil {
		if sb != nil {
			_ = sb.DestroySandbox(ctx, alloc.ID)
		}
		return fmt.Errorf("setting up the bridge network: %w", err)
	}
	r.mu.Lock()
	r.sandbox = sbName
	r.mu.Unlock()
	status := &api.AllocNetworkStatus{InterfaceName: st.InterfaceName, Address: st.Address}
	if dns := groupDNS(tg); dns != nil {
		status.DNS = dns
		if err := writeResolvConf(r.c.config.AllocDir, r.dir, dns); err != nil {
			return err
		}
	}
	r.mu.Lock()
	r.netStatus, r.netNS = status, st.NetNS
	r.mu.Unlock()
	return nil
}

// teardownNetwork removes the allocation's namespace once none of its tasks runs; a failure
// is logged and left to the next start's reconciliation, which retries it.
func (r *allocRunner) teardownNetwork() {
	r.mu.Lock()
	has := r.netNS != ""
	r.mu.Unlock()
	if !has {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.c.net.Teardown(ctx, r.id); err != nil {
		r.logger.Error("tearing down the allocation's network failed", "error", err)
		return
	}
	r.mu.Lock()
	r.netNS = ""
	sbName := r.sandbox
	r.mu.Unlock()
	if sb, ok := r.c.drivers[sbName].(drivers.NetworkSandboxer); ok {
		if err := sb.DestroySandbox(ctx, r.id); err != nil {
			r.logger.Error("removing the allocation's network sandbox failed", "driver", sbName, "error", err)
		}
	}
}

// groupDNS is the group network's dns block, nil when it has none.
func groupDNS(tg *api.TaskGroup) *api.DNSConfig {
	for _, n := range tg.Networks {
		if n != nil && n.DNS != nil {
			return n.DNS
		}
	}
	return nil
}

// resolvConfName is where an allocation's resolv.conf is written, in its directory (outside
// every task's own directory) and bound over /etc/resolv.conf in exec tasks.
const resolvConfName = "resolv.conf"

// writeResolvConf writes the dns block as a resolv.conf; servers default to the host's,
// as upstream's.
func writeResolvConf(root, dir string, dns *api.DNSConfig) error {
	var b strings.Builder
	servers := dns.Servers
	if len(servers) == 0 {
		servers = hostNameservers()
	}
	for _, s := range servers {
		fmt.Fprintf(&b, "nameserver %s\n", s)
	}
	if len(dns.Searches) > 0 {
		fmt.Fprintf(&b, "search %s\n", strings.Join(dns.Searches, " "))
	}
	if len(dns.Options) > 0 {
		fmt.Fprintf(&b, "options %s\n", strings.Join(dns.Options, " "))
	}
	path, err := allocdir.Join(dir, resolvConfName)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("writing the allocation's resolv.conf: %w", err)
	}
	return nil
}

func hostNameservers() []string {
	raw, err := os.ReadFile("/etc/resolv.conf")
	if err != nil {
		return nil
	}
	var out []string
	for line := range strings.SplitSeq(string(raw), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "nameserver" {
			out = append(out, f[1])
		}
	}
	return out
}

// netNSPath is the allocation's namespace, "" in host mode.
func (r *allocRunner) netNSPath() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.netNS
}

// resolvConfPath is the allocation's resolv.conf, "" when its group has no dns block (or is
// not in bridge mode).
func (r *allocRunner) resolvConfPath() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.netStatus == nil || r.netStatus.DNS == nil {
		return ""
	}
	return filepath.Join(r.dir, resolvConfName)
}

// groupSandboxer is the driver (and its name) of the group's first task whose driver holds
// namespaces in sandboxes (docker), nil when none does.
func (c *Client) groupSandboxer(tg *api.TaskGroup) (drivers.NetworkSandboxer, string) {
	for _, t := range tg.Tasks {
		if t == nil {
			continue
		}
		if sb, ok := c.drivers[t.Driver].(drivers.NetworkSandboxer); ok {
			return sb, t.Driver
		}
	}
	return nil, ""
}

// checkBridgeConfig refuses a bridge configuration the plugins would refuse at the first
// allocation: the agent does not start with it.
func checkBridgeConfig(cfg *Config) error {
	if cfg.BridgeSubnet != "" {
		if _, _, err := net.ParseCIDR(cfg.BridgeSubnet); err != nil {
			return fmt.Errorf("client: bridge_network_subnet %q is not a CIDR: %v", cfg.BridgeSubnet, err)
		}
	}
	// An interface name: at most 15 bytes, no slash, colon or space.
	if n := cfg.BridgeName; n != "" && (len(n) > 15 || strings.ContainsAny(n, "/: \t\n") || n == "." || n == "..") {
		return fmt.Errorf("client: bridge_network_name %q is not an interface name (at most 15 characters, no '/', ':' or space)", n)
	}
	return nil
}
