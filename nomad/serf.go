package nomad

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
	"github.com/nomadfork/nomad/structs"
)

// Gossip (serf, memberlist underneath) only tells servers where the others are. It never
// makes a voter by itself: before bootstrapping with a member or adding it to Raft, a server
// calls Cluster.Hello on the member's RPC port, which only answers a peer that proves the
// cluster key or presents a certificate from the CA, and the answer must carry the ID the
// member gossiped. With server.encrypt set, gossip is encrypted with that key too, so a node
// without it cannot join the member list at all.

// The tags a server gossips, as upstream's servers do.
const (
	serfTagRole      = "role"
	serfTagRegion    = "region"
	serfTagDC        = "dc"
	serfTagID        = "id"
	serfTagPort      = "port"
	serfTagRPCAddr   = "rpc_addr"
	serfTagBuild     = "build"
	serfTagVsn       = "vsn"
	serfTagMvn       = "mvn"
	serfTagRaftVsn   = "raft_vsn"
	serfTagExpect    = "expect"
	serfTagBootstrap = "bootstrap"
	serfRoleNomad    = "nomad"
)

// serverMember is what a gossiped member says about itself, when it says it is a server.
type serverMember struct {
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

// parseServerMember reads the tags of m; ok is false for anything that is not a Nomad server
// with an ID and an RPC address.
func parseServerMember(m serf.Member) (*serverMember, bool) {
	if m.Tags[serfTagRole] != serfRoleNomad || m.Tags[serfTagID] == "" {
		return nil, false
	}
	port, err := strconv.Atoi(m.Tags[serfTagPort])
	if err != nil || port <= 0 || port > 65535 {
		return nil, false
	}
	host := m.Tags[serfTagRPCAddr]
	if host == "" {
		host = m.Addr.String()
	}
	expect, _ := strconv.Atoi(m.Tags[serfTagExpect])
	return &serverMember{
		Name:      m.Name,
		ID:        m.Tags[serfTagID],
		Region:    m.Tags[serfTagRegion],
		DC:        m.Tags[serfTagDC],
		RPCAddr:   net.JoinHostPort(host, strconv.Itoa(port)),
		Build:     m.Tags[serfTagBuild],
		Expect:    expect,
		Bootstrap: m.Tags[serfTagBootstrap] == "1",
		Status:    m.Status,
		Addr:      m.Addr,
		Port:      m.Port,
	}, true
}

// serfTags are this server's tags; the RPC address is the one Raft advertises.
func (s *Server) serfTags() (map[string]string, error) {
	host, port, err := net.SplitHostPort(s.RaftAddr())
	if err != nil {
		return nil, fmt.Errorf("gossip needs the RPC address as host:port: %w", err)
	}
	tags := map[string]string{
		serfTagRole:    serfRoleNomad,
		serfTagRegion:  s.config.Region,
		serfTagDC:      s.config.Datacenter,
		serfTagID:      s.config.NodeID,
		serfTagPort:    port,
		serfTagRPCAddr: host,
		serfTagBuild:   s.config.Build,
		serfTagVsn:     "1",
		serfTagMvn:     "1",
		serfTagRaftVsn: "3",
	}
	if s.config.BootstrapExpect > 0 {
		tags[serfTagExpect] = strconv.Itoa(s.config.BootstrapExpect)
	}
	if s.config.BootstrapExpect == 1 {
		tags[serfTagBootstrap] = "1"
	}
	return tags, nil
}

// serfEventBuffer is the room for membership events between serf and the loop that drains
// them; serf blocks when it is full.
const serfEventBuffer = 256

// setupSerf starts gossip on config.SerfBindAddr. A server without one (a lone server, or a
// dev agent with Raft in memory) has no gossip: it is its own cluster.
func (s *Server) setupSerf() error {
	if s.config.SerfBindAddr == "" || s.rpcListener == nil {
		return nil
	}
	bindHost, bindPort, err := splitHostPort(s.config.SerfBindAddr)
	if err != nil {
		return fmt.Errorf("serf address %q: %w", s.config.SerfBindAddr, err)
	}
	tags, err := s.serfTags()
	if err != nil {
		return err
	}
	conf := serf.DefaultConfig()
	conf.Init()
	conf.NodeName = s.config.NodeName + "." + s.config.Region
	conf.Tags = tags
	conf.EventCh = s.serfEvents
	conf.Logger = s.logger.Named("serf").StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true})
	if s.config.DataDir != "" {
		// The snapshot lets a restarted server find the others again without retry_join.
		dir := filepath.Join(s.config.DataDir, "server")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("creating server data dir: %w", err)
		}
		conf.SnapshotPath = filepath.Join(dir, "serf.snapshot")
	}
	mc := memberlist.DefaultLANConfig()
	if s.config.FastRaft {
		// Tests and dev clusters on one machine: notice a dead server in a second or two.
		mc = memberlist.DefaultLocalConfig()
		conf.ReconnectTimeout = 10 * time.Second
	}
	mc.Name = conf.NodeName
	mc.BindAddr, mc.BindPort = bindHost, bindPort
	if adv := s.config.SerfAdvertiseAddr; adv != "" {
		host, port, err := splitHostPort(adv)
		if err != nil {
			return fmt.Errorf("serf advertise address %q: %w", adv, err)
		}
		mc.AdvertiseAddr, mc.AdvertisePort = host, port
	}
	if s.clusterKey != nil {
		mc.SecretKey = s.clusterKey.GossipKey()
	}
	mc.Logger = conf.Logger
	conf.MemberlistConfig = mc
	sf, err := serf.Create(conf)
	if err != nil {
		return fmt.Errorf("starting gossip on %s: %w", s.config.SerfBindAddr, err)
	}
	s.serf = sf
	return nil
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

// Serf returns the gossip pool, nil when this server gossips with no one.
func (s *Server) Serf() *serf.Serf { return s.serf }

// runSerfEvents drains serf's events so it never blocks, and nudges the membership loop.
func (s *Server) runSerfEvents(ctx context.Context) {
	defer s.leaderWG.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-s.serfEvents:
			me, ok := e.(serf.MemberEvent)
			if !ok {
				continue
			}
			if me.Type == serf.EventMemberReap || me.Type == serf.EventMemberLeave {
				s.membership.noteGone(me.Members)
			}
			s.membership.nudge()
		}
	}
}

// regionServers lists the gossiped servers of this server's region, sorted by ID.
func (s *Server) regionServers() []*serverMember {
	if s.serf == nil {
		return nil
	}
	var out []*serverMember
	for _, m := range s.serf.Members() {
		p, ok := parseServerMember(m)
		if !ok || p.Region != s.config.Region {
			continue
		}
		out = append(out, p)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out
}

// errNoGossip is the join error of a server that runs no gossip.
var errNoGossip = errors.New("this server runs no gossip (no serf address: a lone server in memory)")

// JoinGossip joins the serf addresses; it is the retry_join loop's attempt and the agent's
// join endpoint.
func (s *Server) JoinGossip(addrs []string) (int, error) {
	if s.serf == nil {
		return 0, errNoGossip
	}
	return s.serf.Join(addrs, true)
}

// runRetryJoin joins the configured addresses until one answers, then stops: from then on
// gossip keeps the member list and the snapshot finds it again after a restart.
func (s *Server) runRetryJoin(ctx context.Context) {
	defer s.leaderWG.Done()
	t := time.NewTicker(positive(s.config.RetryInterval, joinInterval))
	defer t.Stop()
	for attempt := 1; ; attempt++ {
		n, err := s.JoinGossip(s.config.RetryJoin)
		if n > 0 {
			s.logger.Info("joined the gossip pool", "joined", n)
			return
		}
		s.logger.Warn("joining the gossip pool failed; retrying", "addresses", s.config.RetryJoin, "attempt", attempt, "error", err)
		if max := s.config.RetryMaxAttempts; max > 0 && attempt >= max {
			s.logger.Error("giving up joining the gossip pool after retry_max attempts", "attempts", attempt)
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
func (s *Server) ForceLeave(node string, prune bool) error {
	if s.serf == nil {
		return nil
	}
	var err error
	if prune {
		err = s.serf.RemoveFailedNodePrune(node)
	} else {
		err = s.serf.RemoveFailedNode(node)
	}
	if err != nil {
		return fmt.Errorf("forcing %q out of the gossip pool: %w", node, err)
	}
	return nil
}

// Regions lists the regions of the servers in the gossip pool, sorted; without gossip, this
// server's own.
func (s *Server) Regions() []string {
	if s.serf == nil {
		return []string{s.config.Region}
	}
	seen := map[string]bool{s.config.Region: true}
	for _, m := range s.serf.Members() {
		if p, ok := parseServerMember(m); ok && p.Region != "" && m.Status == serf.StatusAlive {
			seen[p.Region] = true
		}
	}
	out := make([]string, 0, len(seen))
	for r := range seen {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// leaveWait bounds how long Leave waits for the leader to drop this server from Raft.
const leaveWait = 10 * time.Second

// Leave takes this server out of the cluster gracefully (leave_on_interrupt,
// leave_on_terminate): it leaves gossip, has the leader remove it from Raft (a leader
// removes itself, which hands the leadership on), and waits until the removal has reached it,
// so the quorum never counts a server that is going away.
func (s *Server) Leave() error {
	if s.serf == nil {
		return nil
	}
	inRaft := func() (bool, int) {
		f := s.raft.GetConfiguration()
		if f.Error() != nil {
			return false, 0
		}
		found := false
		for _, srv := range f.Configuration().Servers {
			if string(srv.ID) == s.config.NodeID {
				found = true
			}
		}
		return found, len(f.Configuration().Servers)
	}
	member, servers := inRaft()
	// Raft first, over the RPC port (authenticated), not on gossip's word: the leader removes
	// a server that gossip says left only once it stops answering, and it reaches the leader
	// while it still gossips (its forwarding finds the leader through gossip). The leader
	// then holds it back from being re-added while gossip still calls it alive.
	// A follower's own copy of the configuration may not hold the latest entries yet (it may
	// not even list itself): unless it is the only server, the leader is asked all the same.
	if !(member && servers <= 1) {
		var reply structs.GenericResponse
		if err := (&Cluster{srv: s}).Leave(&LeaveRequest{ID: s.config.NodeID}, &reply); err != nil {
			s.logger.Error("leaving: asking the leader to remove this server from Raft failed", "error", err)
		}
	}
	if err := s.serf.Leave(); err != nil {
		return fmt.Errorf("leaving the gossip pool: %w", err)
	}
	if !member || servers <= 1 {
		return nil
	}
	deadline := time.Now().Add(leaveWait)
	for time.Now().Before(deadline) {
		if still, _ := inRaft(); !still {
			s.logger.Info("left the cluster")
			return nil
		}
		select {
		case <-s.shutdownCtx.Done():
			return nil
		case <-time.After(50 * time.Millisecond):
		}
	}
	s.logger.Warn("left gossip, but the leader has not removed this server from Raft yet")
	return nil
}
