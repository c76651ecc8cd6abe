package nomad

import (
	"context"
	"path/filepath"
	"time"

	"github.com/hashicorp/serf/serf"
	"github.com/nomadfork/nomad/nomad/gossip"
	"github.com/nomadfork/nomad/structs"
)

// Gossip (nomad/gossip) only tells servers where the others are. It never makes a voter by
// itself: before bootstrapping with a member or adding it to Raft, a server calls
// Cluster.Hello on the member's RPC port, which only answers a peer that proves the cluster key
// or presents a certificate from the CA, and the answer must carry the ID the member gossiped.
// With server.encrypt set, gossip is encrypted with that key too, so a node without it cannot
// join the member list at all.

// serfEventBuffer is the room for membership events between serf and the loop that drains
// them; serf blocks when it is full.
const serfEventBuffer = 256

// setupSerf starts gossip on config.SerfBindAddr. A server without one (a lone server, or a
// dev agent with Raft in memory) has no gossip: it is its own cluster.
func (s *Server) setupSerf() error {
	if s.config.SerfBindAddr == "" || s.rpcListener == nil {
		return nil
	}
	c := gossip.Config{
		Self: gossip.Self{Name: s.config.NodeName, ID: s.config.NodeID, Region: s.config.Region,
			DC: s.config.Datacenter, Build: s.config.Build, RPCAddr: s.RaftAddr(),
			BootstrapExpect: s.config.BootstrapExpect},
		BindAddr:      s.config.SerfBindAddr,
		AdvertiseAddr: s.config.SerfAdvertiseAddr,
		Fast:          s.config.FastRaft,
		Events:        s.serfEvents,
		Logger:        s.logger.Named("serf"),
	}
	if s.clusterKey != nil {
		c.Key = s.clusterKey.GossipKey()
	}
	if s.config.DataDir != "" {
		c.SnapshotDir = filepath.Join(s.config.DataDir, "server")
	}
	pool, err := gossip.Start(c)
	if err != nil {
		return err
	}
	s.gossip = pool
	return nil
}

// Serf returns the gossip pool's serf, nil when this server gossips with no one.
func (s *Server) Serf() *serf.Serf { return s.gossip.Serf() }

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
func (s *Server) regionServers() []*gossip.Server { return s.gossip.RegionServers() }

// JoinGossip joins the serf addresses; it is the agent's join endpoint.
func (s *Server) JoinGossip(addrs []string) (int, error) { return s.gossip.Join(addrs) }

// runRetryJoin joins the configured addresses until one answers (retry_join).
func (s *Server) runRetryJoin(ctx context.Context) {
	defer s.leaderWG.Done()
	s.gossip.RetryJoin(ctx, s.config.RetryJoin, positive(s.config.RetryInterval, joinInterval), s.config.RetryMaxAttempts, s.logger)
}

// ForceLeave moves the failed member named node to left (prune: and forgets it at once).
func (s *Server) ForceLeave(node string, prune bool) error { return s.gossip.ForceLeave(node, prune) }

// Regions lists the regions of the servers in the gossip pool, sorted; without gossip, this
// server's own.
func (s *Server) Regions() []string { return s.gossip.Regions(s.config.Region) }

// leaveWait bounds how long Leave waits for the leader to drop this server from Raft.
const leaveWait = 10 * time.Second

// Leave takes this server out of the cluster gracefully (leave_on_interrupt,
// leave_on_terminate): it leaves gossip, has the leader remove it from Raft (a leader
// removes itself, which hands the leadership on), and waits until the removal has reached it,
// so the quorum never counts a server that is going away.
func (s *Server) Leave() error {
	if s.gossip == nil {
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
	if err := s.gossip.Leave(); err != nil {
		return err
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
