package nomad

import (
	"github.com/hashicorp/raft"
	"github.com/hashicorp/serf/serf"
	"github.com/nomadfork/nomad/structs"
)

// autopilotConfig is the stored autopilot configuration, or the defaults before one is set.
func (s *Server) autopilotConfig() *structs.AutopilotConfig {
	return structs.DefaultAutopilotConfig()
}

// autopilotCleanup removes servers that gossip reports failed from the Raft configuration,
// when cleanup_dead_servers is on, as long as the voters left stay at or above min_quorum and
// a majority of the current voters remains alive (never removing what a quorum needs).
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
	inRaft := map[string]bool{}
	for _, srv := range f.Configuration().Servers {
		inRaft[string(srv.ID)] = true
		if srv.Suffrage == raft.Voter {
			voters++
		}
	}
	var failed []*serverMember
	for _, p := range s.regionServers() {
		if p.Status == serf.StatusFailed && inRaft[p.ID] && p.ID != s.config.NodeID {
			failed = append(failed, p)
		}
	}
	if len(failed) == 0 {
		return
	}
	if len(failed) > (voters-1)/2 {
		s.logger.Warn("not removing failed servers: too many have failed to remove them safely", "failed", len(failed), "voters", voters)
		return
	}
	for _, p := range failed {
		if conf.MinQuorum > 0 && uint(voters-1) < conf.MinQuorum {
			s.logger.Warn("not removing a failed server: min_quorum would not be met", "server", p.Name, "min_quorum", conf.MinQuorum)
			return
		}
		if err := s.raft.RemoveServer(raft.ServerID(p.ID), 0, 0).Error(); err != nil {
			s.logger.Error("removing a failed server failed", "server", p.Name, "error", err)
			return
		}
		voters--
		s.logger.Info("removed a failed server from Raft (autopilot cleanup_dead_servers)", "server", p.Name)
	}
}
