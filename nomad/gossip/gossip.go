// Package gossip is how servers find each other: a serf pool (memberlist underneath) whose
// members gossip the tags upstream's servers do. Gossip only says where the others are; it
// never makes a voter by itself (the nomad package checks a member on its RPC port first).
// A nil *Pool is a server that gossips with no one: a lone server, or a dev agent in memory.
package gossip

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/memberlist"
	"github.com/hashicorp/serf/serf"
)

// The tags a server gossips, as upstream's servers do.
const (
	tagRole      = "role"
	tagRegion    = "region"
	tagDC        = "dc"
	tagID        = "id"
	tagPort      = "port"
	tagRPCAddr   = "rpc_addr"
	tagBuild     = "build"
	tagVsn       = "vsn"
	tagMvn       = "mvn"
	tagRaftVsn   = "raft_vsn"
	tagExpect    = "expect"
	tagBootstrap = "bootstrap"
	roleNomad    = "nomad"
)

// Server is what a gossiped member says about itself, when it says it is a server.
type Server struct {
	Name      string
	ID        string
	Region    string
	DC        string
	RPCAddr   string
	Build     string
	Expect    int
	Bootstrap bool
	Status    serf.MemberStatus
	Addr      net.IP
	Port      uint16
}

// ParseServer reads the tags of m; ok is false for anything that is not a Nomad server with
// an ID and an RPC address.
func ParseServer(m serf.Member) (*Server, bool) {
	if m.Tags[tagRole] != roleNomad || m.Tags[tagID] == "" {
		return nil, false
	}
	port, err := strconv.Atoi(m.Tags[tagPort])
	if err != nil || port <= 0 || port > 65535 {
		return nil, false
	}
	host := m.Tags[tagRPCAddr]
	if host == "" {
		host = m.Addr.String()
	}
	expect, _ := strconv.Atoi(m.Tags[tagExpect])
	return &Server{
		Name:      m.Name,
		ID:        m.Tags[tagID],
		Region:    m.Tags[tagRegion],
		DC:        m.Tags[tagDC],
		RPCAddr:   net.JoinHostPort(host, strconv.Itoa(port)),
		Build:     m.Tags[tagBuild],
		Expect:    expect,
		Bootstrap: m.Tags[tagBootstrap] == "1",
		Status:    m.Status,
		Addr:      m.Addr,
		Port:      m.Port,
	}, true
}

// Self is what this server gossips about itself.
type Self struct {
	Name, ID, Region, DC, Build string
	// RPCAddr is the host:port Raft advertises; the others dial it.
	RPCAddr         string
	BootstrapExpect int
}

// Tags are the tags Self gossips.
func (s Self) Tags() (map[string]string, error) {
	host, port, err := net.SplitHostPort(s.RPCAddr)
	if err != nil {
		return nil, fmt.Errorf("gossip needs the RPC address as host:port: %w", err)
	}
	tags := map[string]string{
		tagRole:    roleNomad,
		tagRegion:  s.Region,
		tagDC:      s.DC,
		tagID:      s.ID,
		tagPort:    port,
		tagRPCAddr: host,
		tagBuild:   s.Build,
		tagVsn:     "1",
		tagMvn:     "1",
		tagRaftVsn: "3",
	}
	if s.BootstrapExpect > 0 {
		tags[tagExpect] = strconv.Itoa(s.BootstrapExpect)
	}
	if s.BootstrapExpect == 1 {
		tags[tagBootstrap] = "1"
	}
	return tags, nil
}

// Config starts a Pool.
type Config struct {
	Self Self
	// BindAddr is where gossip listens (TCP and UDP); AdvertiseAddr what the others are told,
	// empty for BindAddr.
	BindAddr, AdvertiseAddr string
	// Key encrypts gossip (memberlist's AES-GCM); nil gossips in the clear.
	Key []byte
	// SnapshotDir keeps the member list across restarts, so a restarted server finds the
	// others again without retry_join; empty keeps none.
	SnapshotDir string
	// Fast notices a dead member in a second or two: tests and dev clusters on one machine.
	Fast bool
	// Events receives serf's events; serf blocks when it is full, so its owner must drain it.
	Events chan serf.Event
	Logger hclog.Logger
}

// Pool is this server's gossip pool.
type Pool struct {
	serf   *serf.Serf
	region string
}

// Start joins nothing yet: it listens and gossips Self's tags.
func Start(c Config) (*Pool, error) {
	bindHost, bindPort, err := splitHostPort(c.BindAddr)
	if err != nil {
		return nil, fmt.Errorf("serf address %q: %w", c.BindAddr, err)
	}
	tags, err := c.Self.Tags()
	if err != nil {
		return nil, err
	}
	conf := serf.DefaultConfig()
	conf.Init()
	conf.NodeName = c.Self.Name + "." + c.Self.Region
	conf.Tags = tags
	conf.EventCh = c.Events
	conf.Logger = c.Logger.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true})
	if c.SnapshotDir != "" {
		if err := os.MkdirAll(c.SnapshotDir, 0o700); err != nil {
			return nil, fmt.Errorf("creating server data dir: %w", err)
		}
		conf.SnapshotPath = filepath.Join(c.SnapshotDir, "serf.snapshot")
	}
	mc := memberlist.DefaultLANConfig()
	if c.Fast {
		mc = memberlist.DefaultLocalConfig()
		conf.ReconnectTimeout = 10 * time.Second
	}
	mc.Name = conf.NodeName
	mc.BindAddr, mc.BindPort = bindHost, bindPort
	if adv := c.AdvertiseAddr; adv != "" {
		host, port, err := splitHostPort(adv)
		if err != nil {
			return nil, fmt.Errorf("serf advertise address %q: %w", adv, err)
		}
		mc.AdvertiseAddr, mc.AdvertisePort = host, port
	}
	mc.SecretKey = c.Key
	mc.Logger = conf.Logger
	conf.MemberlistConfig = mc
	sf, err := serf.Create(conf)
	if err != nil {
		return nil, fmt.Errorf("starting gossip on %s: %w", c.BindAddr, err)
	}
	return &Pool{serf: sf, region: c.Self.Region}, nil
}

func splitHostPort(addr string) (string, int, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("bad port %q", portStr)
	}
	return host, port, nil
}

// Serf is the pool's serf, nil without gossip.
func (p *Pool) Serf() *serf.Serf {
	if p == nil {
		return nil
	}
	return p.serf
}

// RegionServers lists the gossiped servers of this server's region, sorted by ID.
func (p *Pool) RegionServers() []*Server {
	if p == nil {
		return nil
	}
	var out []*Server
	for _, m := range p.serf.Members() {
		s, ok := ParseServer(m)
		if !ok || s.Region != p.region {
			continue
		}
		out = append(out, s)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out
}

// ErrNoGossip is the join error of a server that runs no gossip.
var ErrNoGossip = errors.New("this server runs no gossip (no serf address: a lone server in memory)")

// Join joins the serf addresses; it is the retry_join loop's attempt and the agent's join
// endpoint.
func (p *Pool) Join(addrs []string) (int, error) {
	if p == nil {
		return 0, ErrNoGossip
	}
	return p.serf.Join(addrs, true)
}

// RetryJoin joins addrs until one answers, then stops: from then on gossip keeps the member
// list and the snapshot finds it again after a restart. max > 0 gives up after that many
// attempts.
func (p *Pool) RetryJoin(ctx context.Context, addrs []string, interval time.Duration, max int, logger hclog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for attempt := 1; ; attempt++ {
		n, err := p.Join(addrs)
		if n > 0 {
			logger.Info("joined the gossip pool", "joined", n)
			return
		}
		logger.Warn("joining the gossip pool failed; retrying", "addresses", addrs, "attempt", attempt, "error", err)
		if max > 0 && attempt >= max {
			logger.Error("giving up joining the gossip pool after retry_max attempts", "attempts", attempt)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ForceLeave moves the failed member named node to left (prune: and forgets it at once). A
// name no one knows is not an error, as upstream's; without gossip no name is known.
func (p *Pool) ForceLeave(node string, prune bool) error {
	if p == nil {
		return nil
	}
	var err error
	if prune {
		err = p.serf.RemoveFailedNodePrune(node)
	} else {
		err = p.serf.RemoveFailedNode(node)
	}
	if err != nil {
		return fmt.Errorf("forcing %q out of the gossip pool: %w", node, err)
	}
	return nil
}

// Regions lists the regions of the alive servers in the pool and this server's own, sorted.
func (p *Pool) Regions(own string) []string {
	seen := map[string]bool{own: true}
	if p != nil {
		for _, m := range p.serf.Members() {
			if s, ok := ParseServer(m); ok && s.Region != "" && m.Status == serf.StatusAlive {
				seen[s.Region] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for r := range seen {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// Leave tells the pool this server is going away.
func (p *Pool) Leave() error {
	if p == nil {
		return nil
	}
	if err := p.serf.Leave(); err != nil {
		return fmt.Errorf("leaving the gossip pool: %w", err)
	}
	return nil
}

// Shutdown stops gossiping.
func (p *Pool) Shutdown() error {
	if p == nil {
		return nil
	}
	return p.serf.Shutdown()
}
