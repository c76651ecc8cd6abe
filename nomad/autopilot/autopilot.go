package autopilot

import (
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/hashicorp/serf/serf"
	"github.com/nomadfork/nomad/nomad/gossip"
	"github.com/nomadfork/nomad/structs"
)

// Raft is what autopilot needs of Raft: the configuration it judges and the promotion it makes.
type Raft interface {
	GetConfiguration() raft.ConfigurationFuture
	AddVoter(id raft.ServerID, address raft.ServerAddress, prevIndex uint64, timeout time.Duration) raft.IndexFuture
}

// Local is how the leader names itself in the health report.
type Local struct {
	ID, Name, Build string
}

// Backend is what autopilot needs of the server it runs on (the leader).
type Backend interface {
	Raft() Raft
	// Config is the stored autopilot configuration, or the defaults before one is set.
	Config() *structs.AutopilotConfig
	Local() Local
	// Leader is the leader's Raft address.
	Leader() string
	// Gossip is false for a server without a gossip pool: membership is then not judged.
	Gossip() bool
	// Servers are the region's servers as gossip sees them.
	Servers() []*gossip.Server
	// LocalStats is this server's view of its own log; RemoteStats asks the server at addr.
	LocalStats() structs.RaftStats
	RemoteStats(addr string) (structs.RaftStats, error)
	Logger() hclog.Logger
	// Membership decides whether a failed server may be removed now, and removes it.
	Membership() Membership
}

// Membership is the part of cluster membership autopilot's cleanup goes through, so that a
// failed server is removed the way one that left is: only when it no longer answers as itself.
type Membership interface {
	WarnOnce(id string, msg string, args ...any)
	MayRetry(id string) bool
	RemoveIfGone(id, name, addr, why string) bool
}

// Autopilot judges the servers' health for the operator's health endpoint and, on the leader,
// removes failed servers and promotes stable non-voters.
type Autopilot struct {
	b      Backend
	health healthTracker
}

// New is autopilot over b.
func New(b Backend) *Autopilot { return &Autopilot{b: b} }

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

// Health asks every server of the Raft configuration for its log position (the leader
// answers for itself) and judges each against the autopilot configuration: alive in gossip
// (when there is gossip), heard from the leader within last_contact_threshold, on the leader's
// term, and at most max_trailing_logs behind.
func (a *Autopilot) Health() (*structs.OperatorHealthReply, error) {
	f := a.b.Raft().GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, err
	}
	conf := a.b.Config()
	members := map[string]*gossip.Server{}
	for _, m := range a.b.Servers() {
		members[m.ID] = m
	}
	self := a.b.Local()
	leaderStats := a.b.LocalStats()
	leaderAddr := a.b.Leader()
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
		serfOK := !a.b.Gossip()
		if m, ok := members[id]; ok {
			h.Name, h.SerfStatus, h.Version = m.Name, m.Status.String(), m.Build
			serfOK = m.Status == serf.StatusAlive
		} else if id == self.ID {
			h.Name, h.SerfStatus, h.Version = self.Name, "alive", self.Build
			serfOK = true
		} else if !a.b.Gossip() {
			h.SerfStatus = "none"
		}
		stats, statsOK := leaderStats, true
		if id != self.ID {
			var err error
			stats, err = a.b.RemoteStats(string(srv.Address))
			statsOK = err == nil
		}
		h.LastContact, h.LastTerm, h.LastIndex = stats.LastContact, stats.LastTerm, stats.LastIndex
		h.DataDirFreeBytes, h.DiskWarning = stats.DataDirFreeBytes, stats.DiskWarning
		h.Healthy = serfOK && statsOK &&
			(h.Leader || stats.LastContact <= conf.LastContactThreshold) &&
			stats.LastTerm == leaderStats.LastTerm &&
			stats.LastIndex+conf.MaxTrailingLogs >= leaderStats.LastIndex
		h.StableSince = a.health.observe(id, h.Healthy, now)
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

// Cleanup removes servers that gossip reports failed from the Raft configuration, when
// cleanup_dead_servers is on, as long as the voters left stay at or above min_quorum and no
// more than a minority of the voters has failed (never removing what a quorum needs).
// Failed non-voters count in no quorum and are always removed.
func (a *Autopilot) Cleanup() {
	conf := a.b.Config()
	if !conf.CleanupDeadServers {
		return
	}
	f := a.b.Raft().GetConfiguration()
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
	selfID := a.b.Local().ID
	var failed []*gossip.Server
	failedVoters := 0
	for _, p := range a.b.Servers() {
		srv, ok := inRaft[p.ID]
		if !ok || p.Status != serf.StatusFailed || p.ID == selfID {
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
	m := a.b.Membership()
	if failedVoters > (voters-1)/2 {
		m.WarnOnce("autopilot", "not removing failed servers: too many voters have failed to remove them safely", "failed", failedVoters, "voters", voters)
		return
	}
	for _, p := range failed {
		srv := inRaft[p.ID]
		isVoter := srv.Suffrage == raft.Voter
		if isVoter && conf.MinQuorum > 0 && uint(voters-1) < conf.MinQuorum {
			m.WarnOnce("autopilot", "not removing a failed server: min_quorum would not be met", "server", p.Name, "min_quorum", conf.MinQuorum)
			continue
		}
		if !m.MayRetry(p.ID) || !m.RemoveIfGone(p.ID, p.Name, string(srv.Address), "failed") {
			continue
		}
		if isVoter {
			voters--
		}
	}
}

// Promote makes voters of the non-voters that have been healthy for at least
// server_stabilization_time, judged as the health endpoint judges them.
func (a *Autopilot) Promote() {
	r := a.b.Raft()
	f := r.GetConfiguration()
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
	health, err := a.Health()
	if err != nil {
		return
	}
	stable := a.b.Config().ServerStabilizationTime
	now := time.Now()
	for _, h := range health.Servers {
		if h.Voter || !h.Healthy || now.Sub(h.StableSince) < stable {
			continue
		}
		if err := r.AddVoter(raft.ServerID(h.ID), raft.ServerAddress(h.Address), 0, 10*time.Second).Error(); err != nil {
			a.b.Logger().Error("promoting a stable server to voter failed", "server", h.Name, "error", err)
			continue
		}
		a.b.Logger().Info("promoted a stable server to voter", "server", h.Name, "stable_since", h.StableSince)
	}
}
