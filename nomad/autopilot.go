package nomad

import (
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	"github.com/hashicorp/serf/serf"
	"github.com/nomadfork/nomad/nomad/gossip"
	"github.com/nomadfork/nomad/structs"
)

// autopilotConfig is the stored autopilot configuration, or the defaults before one is set.
func (s *Server) autopilotConfig() *structs.AutopilotConfig {
	_, conf, err := s.State().AutopilotConfig(nil)
	if err != nil || conf == nil {
		return structs.DefaultAutopilotConfig()
	}
	return conf
}

// RaftStats answers the leader's health check with this server's view of its own log. Like
// every Cluster method it is served only to authenticated servers.
func (c *Cluster) RaftStats(_ *HelloRequest, reply *structs.RaftStats) error {
	*reply = c.srv.localRaftStats()
	return nil
}

func (s *Server) localRaftStats() structs.RaftStats {
	stats := s.raft.Stats()
	term, _ := strconv.ParseUint(stats["last_log_term"], 10, 64)
	out := structs.RaftStats{LastContact: s.LastContact(), LastTerm: term, LastIndex: s.raft.LastIndex()}
	if sp, ok := s.DiskSpace(); ok {
		out.DataDirFreeBytes = sp.FreeBytes
		out.DiskWarning, _ = s.DiskHealth()
	}
	return out
}

// healthTracker remembers when each server's health last changed (StableSince).
type healthTracker struct {
	mu      sync.Mutex
	healthy map[string]bool
	since   map[string]time.Time
}

func (h *healthTracker) observe(id string, healthy bool, now time.Time) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.healthy == nil {
		h.healthy, h.since = map[string]bool{}, map[string]time.Time{}
	}
	if was, ok := h.healthy[id]; !ok || was != healthy {
		h.healthy[id] = healthy
		h.since[id] = now
	}
	return h.since[id]
}

// serverHealth asks every server of the Raft configuration for its log position (the leader
// answers for itself) and judges each against the autopilot configuration: alive in gossip
// (when there is gossip), heard from the leader within last_contact_threshold, on the leader's
// term, and at most max_trailing_logs behind.
func (s *Server) serverHealth() (*structs.OperatorHealthReply, error) {
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, err
	}
	conf := s.autopilotConfig()
	members := map[string]*gossip.Server{}
	for _, m := range s.regionServers() {
		members[m.ID] = m
	}
	leaderStats := s.localRaftStats()
	leaderAddr := s.Leader()
	out := &structs.OperatorHealthReply{Healthy: true}
	voters, healthyVoters := 0, 0
	now := time.Now()
	for _, srv := range f.Configuration().Servers {
		id := string(srv.ID)
		h := structs.ServerHealth{
			ID:      id,
			Name:    "(unknown)",
			Address: string(srv.Address),
			Leader:  string(srv.Address) == leaderAddr,
			Voter:   srv.Suffrage == raft.Voter,
		}
		serfOK := s.gossip == nil
		if m, ok := members[id]; ok {
			h.Name, h.SerfStatus, h.Version = m.Name, m.Status.String(), m.Build
			serfOK = m.Status == serf.StatusAlive
		} else if id == s.config.NodeID {
			h.Name, h.SerfStatus, h.Version = s.config.NodeName+"."+s.config.Region, "alive", s.config.Build
			serfOK = true
		} else if s.gossip == nil {
			h.SerfStatus = "none"
		}
		var stats structs.RaftStats
		statsOK := true
		if id == s.config.NodeID {
			stats = leaderStats
		} else if err := s.rpcCallTimeout(string(srv.Address), "Cluster.RaftStats", &HelloRequest{Server: s.self()}, &stats, helloTimeout); err != nil {
			statsOK = false
		}
		h.LastContact, h.LastTerm, h.LastIndex = stats.LastContact, stats.LastTerm, stats.LastIndex
		h.DataDirFreeBytes, h.DiskWarning = stats.DataDirFreeBytes, stats.DiskWarning
		h.Healthy = serfOK && statsOK &&
			(h.Leader || stats.LastContact <= conf.LastContactThreshold) &&
			stats.LastTerm == leaderStats.LastTerm &&
			stats.LastIndex+conf.MaxTrailingLogs >= leaderStats.LastIndex
		h.StableSince = s.health.observe(id, h.Healthy, now)
		if h.Leader {
			out.Leader = id
		}
		if h.Voter {
			voters++
			out.Voters = append(out.Voters, id)
			if h.Healthy {
				healthyVoters++
			}
		}
		if !h.Healthy {
			out.Healthy = false
		}
		out.Servers = append(out.Servers, h)
	}
	if tolerance := healthyVoters - (voters/2 + 1); tolerance > 0 {
		out.FailureTolerance = tolerance
	}
	return out, nil
}

// autopilotCleanup removes servers that gossip reports failed from the Raft configuration,
// when cleanup_dead_servers is on, as long as the voters left stay at or above min_quorum and
// no more than a minority of the voters has failed (never removing what a quorum needs).
// Failed non-voters count in no quorum and are always removed.
func (s *Server) autopilotCleanup() {
	conf := s.autopilotConfig()
	if !conf.CleanupDeadServers {
		return
	}
	f := s.raft.GetConfiguration()
	if f.Error() != nil {
		return
	}
	voters := 0
	inRaft := map[string]raft.Server{}
	for _, srv := range f.Configuration().Servers {
		inRaft[string(srv.ID)] = srv
		if srv.Suffrage == raft.Voter {
			voters++
		}
	}
	var failed []*gossip.Server
	failedVoters := 0
	for _, p := range s.regionServers() {
		srv, ok := inRaft[p.ID]
		if !ok || p.Status != serf.StatusFailed || p.ID == s.config.NodeID {
			continue
		}
		failed = append(failed, p)
		if srv.Suffrage == raft.Voter {
			failedVoters++
		}
	}
	if len(failed) == 0 {
		return
	}
	m := s.membership
	if failedVoters > (voters-1)/2 {
		m.warnOnce("autopilot", "not removing failed servers: too many voters have failed to remove them safely", "failed", failedVoters, "voters", voters)
		return
	}
	for _, p := range failed {
		srv := inRaft[p.ID]
		isVoter := srv.Suffrage == raft.Voter
		if isVoter && conf.MinQuorum > 0 && uint(voters-1) < conf.MinQuorum {
			m.warnOnce("autopilot", "not removing a failed server: min_quorum would not be met", "server", p.Name, "min_quorum", conf.MinQuorum)
			continue
		}
		if !m.mayRetry(p.ID) || !m.removeIfGone(p.ID, p.Name, string(srv.Address), "failed") {
			continue
		}
		if isVoter {
			voters--
		}
	}
}

// autopilotPromote makes voters of the non-voters that have been healthy for at least
// server_stabilization_time, judged as the health endpoint judges them.
func (s *Server) autopilotPromote() {
	f := s.raft.GetConfiguration()
	if f.Error() != nil {
		return
	}
	pending := false
	for _, srv := range f.Configuration().Servers {
		if srv.Suffrage == raft.Nonvoter {
			pending = true
		}
	}
	if !pending {
		return
	}
	health, err := s.serverHealth()
	if err != nil {
		return
	}
	stable := s.autopilotConfig().ServerStabilizationTime
	now := time.Now()
	for _, h := range health.Servers {
		if h.Voter || !h.Healthy || now.Sub(h.StableSince) < stable {
			continue
		}
		if err := s.raft.AddVoter(raft.ServerID(h.ID), raft.ServerAddress(h.Address), 0, 10*time.Second).Error(); err != nil {
			s.logger.Error("promoting a stable server to voter failed", "server", h.Name, "error", err)
			continue
		}
		s.logger.Info("promoted a stable server to voter", "server", h.Name, "stable_since", h.StableSince)
	}
}
