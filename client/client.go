package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-uuid"
	"github.com/nomadfork/nomad/client/allocdir"
	"github.com/nomadfork/nomad/client/allocnet"
	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/client/fingerprint"
	"github.com/nomadfork/nomad/structs"
)

// shutdownKillWait bounds how long Shutdown waits for the tasks it kills.
const shutdownKillWait = 10 * time.Second

// Client runs the allocations the servers place on its node.
type Client struct {
	config  *Config
	servers Servers
	logger  hclog.Logger
	node    *structs.Node
	drivers map[string]drivers.Driver
	// users says which users the tasks of which drivers may not run as.
	users userPolicy

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	runners  map[string]*allocRunner
	shutdown bool

	updater *allocUpdater
	// services keeps the servers' registrations of the node's nomad services current.
	services *serviceSyncer
	// stats keeps the previous CPU readings of the stats endpoints.
	stats statsCache
	// snapshots keeps the disk snapshots other nodes are migrating (alloc_migrate.go).
	snapshots snapshotCache
	// state keeps allocations, task states and driver handles across restarts; nil without
	// a state directory.
	state *clientState
	// registered is closed once the node is registered.
	registered chan struct{}
	// heartbeatTTL is the TTL the servers gave at registration, in nanoseconds.
	heartbeatTTL atomic.Int64

	// metaMu guards the node's metadata (node_meta.go): the static and dynamic parts, and
	// node.Meta, their merge, which registrations copy.
	metaMu      sync.Mutex
	staticMeta  map[string]string
	dynamicMeta map[string]*string
	// metaChanged asks the heartbeat loop to register the node again with its new meta.
	metaChanged chan struct{}

	// idMu guards nodeID, the node's identity (node_identity.go); identityRenewed tells its
	// loop that the API renewed it.
	idMu            sync.Mutex
	nodeID          *nodeIdentity
	identityRenewed chan struct{}

	// net sets up and tears down the networks of allocations in bridge mode.
	net *allocnet.Manager
}

// New builds the node from cfg, then registers it, heartbeats and runs its allocations in the
// background until Shutdown.
func New(cfg *Config, servers Servers) (*Client, error) {
	if servers == nil {
		return nil, errors.New("client: no servers to talk to")
	}
	cfg = cfg.withDefaults()
	if cfg.AllocDir == "" {
		return nil, errors.New("client: no allocation directory")
	}
	if err := checkBridgeConfig(cfg); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.AllocDir, 0o755); err != nil {
		return nil, fmt.Errorf("client: creating allocation directory: %w", err)
	}
	if err := loadIdentity(cfg); err != nil {
		return nil, err
	}
	state, restored, err := openClientState(cfg.StateDir, cfg.Logger.Named("client"))
	if err != nil {
		return nil, err
	}
	dynamicMeta, err := loadDynamicMeta(cfg.StateDir)
	if err != nil {
		_ = state.close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Client{
		staticMeta:  staticNodeMeta(cfg.Meta),
		dynamicMeta: dynamicMeta,
		metaChanged: make(chan struct{}, 1),

		identityRenewed: make(chan struct{}, 1),
		state:           state,
		config:          cfg,
		servers:         servers,
		logger:          cfg.Logger.Named("client"),
		drivers:         map[string]drivers.Driver{},
		users:           newUserPolicy(cfg.Options),
		ctx:             ctx,
		cancel:          cancel,
		runners:         map[string]*allocRunner{},
		registered:      make(chan struct{}),
	}
	for _, d := range cfg.Drivers {
		c.drivers[d.Name()] = d
	}
	c.net = newNetManager(cfg)
	if c.node, err = c.buildNode(); err != nil {
		cancel()
		_ = state.close()
		return nil, err
	}
	// A dimension the node does not report is not counted by the scheduler: say so, rather
	// than let the node take more than it has without a word.
	r := c.node.NodeResources
	if r.Cpu.CpuShares == 0 {
		c.logger.Warn("CPU speed unknown, so CPU is not counted on this node: set client.cpu_total_compute")
	}
	if r.Memory.MemoryMB == 0 {
		c.logger.Warn("memory size unknown, so memory is not counted on this node: set client.memory_total_mb")
	}
	removeMigrationLeftovers(cfg.AllocDir, c.logger)
	c.updater = newAllocUpdater(c)
	c.services = newServiceSyncer(c)
	c.removeDangling(restored)
	c.reconcileNetworks(restored)
	c.restore(restored)
	c.wg.Add(1)
	go c.run()
	return c, nil
}

// removeDangling has every driver that can leave tasks behind remove those of a previous run
// that the client does not re-attach to.
func (c *Client) removeDangling(restored []*restoredAlloc) {
	keep := map[string]bool{}
	for _, ra := range restored {
		for _, h := range ra.handles {
			if h.ContainerID != "" {
				keep[h.ContainerID] = true
			}
		}
	}
	for name, d := range c.drivers {
		dr, ok := d.(drivers.DanglingRemover)
		if !ok {
			continue
		}
		ctx, cancel := context.WithTimeout(c.ctx, 30*time.Second)
		n, err := dr.RemoveDangling(ctx, keep)
		cancel()
		switch {
		case err != nil:
			c.logger.Debug("dangling task cleanup skipped", "driver", name, "error", err)
		case n > 0:
			c.logger.Info("removed tasks a previous run left behind", "driver", name, "count", n)
		}
	}
}

// restore re-attaches to the tasks of the allocations a previous run of the agent left in the
// state file, before the servers are asked anything: a task found running is watched again,
// never started a second time. The servers' view, once read, stops or removes them as usual.
func (c *Client) restore(allocs []*restoredAlloc) {
	for _, ra := range allocs {
		r := newAllocRunner(c, ra.alloc)
		r.restored = ra
		// A stop the previous run received but had not carried out: the servers will not
		// send it again (the allocation is unchanged), so it is carried out now.
		r.stopping = ra.alloc.DesiredStatus != structs.AllocDesiredStatusRun
		c.runners[ra.alloc.ID] = r
		c.logger.Info("restoring allocation", "alloc_id", ra.alloc.ID, "tasks", len(ra.states))
		go r.run()
	}
}

// loadIdentity fills the node ID and secret from StateDir, or makes them up (and stores them
// there when set).
func loadIdentity(cfg *Config) error {
	for _, f := range []struct {
		name string
		dst  *string
	}{{"node-id", &cfg.NodeID}, {"secret-id", &cfg.SecretID}} {
		if *f.dst != "" {
			continue
		}
		path := ""
		if cfg.StateDir != "" {
			path = filepath.Join(cfg.StateDir, f.name)
			if raw, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(raw))) > 0 {
				*f.dst = strings.TrimSpace(string(raw))
				continue
			}
		}
		id, err := uuid.GenerateUUID()
		if err != nil {
			return err
		}
		*f.dst = id
		if path == "" {
			continue
		}
		if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
			return fmt.Errorf("client: creating state directory: %w", err)
		}
		if err := os.WriteFile(path, []byte(id), 0o600); err != nil {
			return fmt.Errorf("client: writing %s: %w", f.name, err)
		}
	}
	return nil
}

// buildNode describes the node to the servers: its identity, what fingerprinting found and
// its drivers. A driver's attributes ("driver.docker.version") join the node's, where
// constraints read them as ${attr.driver.docker.version}.
func (c *Client) buildNode() (*structs.Node, error) {
	src := fingerprint.HostSources()
	if c.config.Sources != nil {
		src = *c.config.Sources
	}
	fpCfg := c.config.Resources
	fpCfg.AllocDir = c.config.AllocDir
	fpCfg.NetworkInterface = c.config.NetworkInterface
	fp, err := fingerprint.Fingerprint(fpCfg, src)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	for _, w := range fp.Warnings {
		c.logger.Warn("client: " + w)
	}
	host := fp.Attributes["unique.hostname"]
	n := &structs.Node{
		ID:                    c.config.NodeID,
		SecretID:              c.config.SecretID,
		Name:                  c.config.Name,
		Datacenter:            c.config.Datacenter,
		NodePool:              c.config.NodePool,
		NodeClass:             c.config.NodeClass,
		Meta:                  mergeNodeMeta(c.staticMeta, c.dynamicMeta),
		HTTPAddr:              c.config.HTTPAddr,
		Status:                structs.NodeStatusReady,
		SchedulingEligibility: structs.NodeSchedulingEligible,
		Attributes:            fp.Attributes,
		NodeResources:         fp.Resources,
		ReservedResources:     fp.Reserved,
		Drivers:               map[string]*structs.DriverInfo{},
		HostVolumes:           c.config.HostVolumes,
		HostNetworks:          fp.HostNetworks,
	}
	n.Attributes["nomad.version"] = c.config.Version
	if n.Name == "" {
		n.Name = host
	}
	for name, d := range c.drivers {
		info := d.Fingerprint()
		n.Drivers[name] = info
		if !info.Detected {
			continue
		}
		n.Attributes["driver."+name] = "1"
		for k, v := range info.Attributes {
			if strings.HasPrefix(k, "driver."+name+".") {
				n.Attributes[k] = v
			}
		}
	}
	c.fingerprintBridge(n)
	return n, nil
}

// NodeID is the ID of the client's node.
func (c *Client) NodeID() string { return c.node.ID }

// Registered is closed once the node has registered with the servers.
func (c *Client) Registered() <-chan struct{} { return c.registered }

// TaskPID is the process ID of a running task, 0 when there is none (tests use it to check
// that a killed task is gone).
func (c *Client) TaskPID(allocID, task string) int {
	r := c.runner(allocID)
	if r == nil {
		return 0
	}
	return r.taskPID(task)
}

// TaskPIDs are the process IDs of every task the client runs or left running at shutdown
// (tests end with them what a shutdown with a state directory leaves behind).
func (c *Client) TaskPIDs() []int {
	c.mu.Lock()
	runners := make([]*allocRunner, 0, len(c.runners))
	for _, r := range c.runners {
		runners = append(runners, r)
	}
	c.mu.Unlock()
	var out []int
	for _, r := range runners {
		tasks := r.taskRunners()
		for _, tr := range tasks {
			if pid := tr.pid(); pid > 0 {
				out = append(out, pid)
			}
		}
	}
	return out
}

// TaskDir is the directory of a task of an allocation ("" for names that cannot be one).
func (c *Client) TaskDir(allocID, task string) string {
	dir, err := allocdir.Join(c.config.AllocDir, allocID, task)
	if err != nil {
		return ""
	}
	return dir
}

func (c *Client) run() {
	defer c.wg.Done()
	for {
		err := c.register()
		if err == nil {
			break
		}
		c.logger.Error("registering node failed", "error", err)
		if !c.sleep(c.config.RetryInterval) {
			return
		}
	}
	close(c.registered)
	c.logger.Info("node registered", "node_id", c.node.ID)
	c.wg.Add(5)
	go c.heartbeat()
	go c.updater.run()
	go c.services.run()
	go c.runMetrics()
	go c.nodeIdentityLoop()
	// The watch is not waited for at shutdown: it may be in a blocking read the servers end.
	go c.watchAllocations()
}

func (c *Client) writeRequest() structs.WriteRequest {
	return structs.WriteRequest{Region: c.config.Region, AuthToken: c.node.SecretID}
}

func (c *Client) register() error {
	var reply structs.NodeUpdateResponse
	c.metaMu.Lock()
	c.node.Meta = mergeNodeMeta(c.staticMeta, c.dynamicMeta)
	node := c.node.Copy()
	c.metaMu.Unlock()
	args := &structs.NodeRegisterRequest{Node: node, IntroToken: c.introduction(), WriteRequest: c.writeRequest()}
	if err := c.servers.RegisterNode(args, &reply); err != nil {
		return err
	}
	c.heartbeatTTL.Store(int64(reply.HeartbeatTTL))
	return nil
}

// heartbeat tells the servers the node is alive, at half the TTL they asked for. A server that
// no longer knows the node (its state was lost) gets the node registered again.
func (c *Client) heartbeat() {
	defer c.wg.Done()
	ttl := time.Duration(c.heartbeatTTL.Load())
	if ttl <= 0 {
		ttl = 10 * time.Second
	}
	wait := ttl / 2
	metaPending := false
	for {
		t := time.NewTimer(wait)
		select {
		case <-c.ctx.Done():
			t.Stop()
			return
		case <-c.metaChanged:
			t.Stop()
			metaPending = true
		case <-t.C:
		}
		if metaPending {
			// New metadata: registered again at once, which also counts as a heartbeat.
			if err := c.register(); err != nil {
				c.logger.Warn("registering the node's new metadata failed", "error", err)
				wait = c.config.RetryInterval
				continue
			}
			metaPending = false
			wait = ttl / 2
			continue
		}
		var reply structs.NodeUpdateResponse
		err := c.servers.UpdateNodeStatus(&structs.NodeUpdateStatusRequest{
			NodeID: c.node.ID, Status: structs.NodeStatusReady, WriteRequest: c.writeRequest(),
		}, &reply)
		if err != nil && structs.ErrorCode(err) == http.StatusNotFound {
			err = c.register()
		}
		if err != nil {
			c.logger.Warn("heartbeat failed", "error", err)
			wait = c.config.RetryInterval
			continue
		}
		if reply.HeartbeatTTL > 0 {
			ttl = reply.HeartbeatTTL
		}
		wait = ttl / 2
	}
}

// watchAllocations follows the node's allocations with blocking reads and hands each change to
// syncAllocs.
func (c *Client) watchAllocations() {
	var index uint64
	for c.ctx.Err() == nil {
		var reply structs.NodeAllocsResponse
		err := c.servers.NodeAllocations(&structs.NodeSpecificRequest{
			NodeID: c.node.ID,
			QueryOptions: structs.QueryOptions{
				Region: c.config.Region, AuthToken: c.node.SecretID, AllowStale: true,
				MinQueryIndex: index, MaxQueryTime: c.config.MaxQueryTime,
			},
		}, &reply)
		if c.ctx.Err() != nil {
			return
		}
		if err != nil {
			c.logger.Warn("reading the node's allocations failed", "error", err)
			c.sleep(c.config.RetryInterval)
			continue
		}
		c.syncAllocs(reply.Allocs)
		index = reply.Index
	}
}

// syncAllocs starts runners for new allocations, passes changes to existing ones, and
// destroys the runners of allocations that are gone (their job was purged).
func (c *Client) syncAllocs(allocs []*structs.Allocation) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shutdown {
		return
	}
	seen := map[string]bool{}
	for _, a := range allocs {
		seen[a.ID] = true
		if r := c.runners[a.ID]; r != nil {
			if a.ClientTerminalStatus() && r.isDone() {
				// The servers have the final state: nothing left to do for it.
				delete(c.runners, a.ID)
				c.forget(a.ID)
				continue
			}
			r.update(a)
			continue
		}
		switch {
		case a.ClientTerminalStatus():
			// Finished (or lost while the node was away): never run again.
		case a.DesiredStatus != structs.AllocDesiredStatusRun:
			// Stopped before this client started it.
			c.updater.send(&structs.Allocation{
				ID: a.ID, ClientStatus: structs.AllocClientStatusComplete,
				ClientDescription: "alloc was stopped before it started",
			})
		default:
			r := newAllocRunner(c, a)
			c.runners[a.ID] = r
			go r.run()
		}
	}
	ids := make([]string, 0, len(c.runners))
	for id := range c.runners {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if !seen[id] {
			c.runners[id].destroy()
			delete(c.runners, id)
			c.forget(id)
		}
	}
}

// forget removes an allocation from the state file.
func (c *Client) forget(id string) {
	if err := c.state.deleteAlloc(id); err != nil {
		c.logger.Error("removing allocation from the client state failed", "alloc_id", id, "error", err)
	}
}

// sleep waits d or until shutdown; it reports whether the client is still running.
func (c *Client) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Shutdown stops talking to the servers without reporting anything more: the servers learn
// of the node's absence from its missed heartbeats. With a state directory the tasks keep
// running, for the next run of the agent to re-attach to; without one nothing could find them
// again, so they are killed.
func (c *Client) Shutdown() {
	c.mu.Lock()
	if c.shutdown {
		c.mu.Unlock()
		return
	}
	c.shutdown = true
	runners := make([]*allocRunner, 0, len(c.runners))
	for _, r := range c.runners {
		runners = append(runners, r)
	}
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
	c.snapshots.clear()
	defer func() {
		if err := c.state.close(); err != nil {
			c.logger.Warn("closing the client state file failed", "error", err)
		}
	}()
	// After the tasks: a driver's background work (image GC) may act on their ending.
	defer func() {
		for _, d := range c.drivers {
			if s, ok := d.(drivers.Shutdowner); ok {
				s.Shutdown()
			}
		}
	}()
	deadline := time.NewTimer(shutdownKillWait)
	defer deadline.Stop()
	for _, r := range runners {
		if c.state != nil {
			r.detach()
		} else {
			r.silence()
		}
	}
	for _, r := range runners {
		select {
		case <-r.done:
		case <-deadline.C:
			c.logger.Warn("tasks still running at shutdown", "alloc_id", r.id)
			return
		}
	}
}

// runner is the runner of an allocation this client runs, nil when it runs no such one.
func (c *Client) runner(allocID string) *allocRunner {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runners[allocID]
}

// Allocation is the servers' latest view of an allocation this client runs, nil when it runs
// no such allocation: an agent serves requests about its own allocations from it.
func (c *Client) Allocation(allocID string) *structs.Allocation {
	r := c.runner(allocID)
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.alloc
}
