package nomad

import (
	"strconv"

	"github.com/hashicorp/go-hclog"
	"github.com/nomadfork/nomad/nomad/autopilot"
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

// autopilotBackend gives autopilot Raft, gossip, the stored configuration and the membership
// that removes servers.
type autopilotBackend struct{ s *Server }

func (b autopilotBackend) Raft() autopilot.Raft             { return b.s.raft }
func (b autopilotBackend) Config() *structs.AutopilotConfig { return b.s.autopilotConfig() }
func (b autopilotBackend) Leader() string                   { return b.s.Leader() }
func (b autopilotBackend) Gossip() bool                     { return b.s.gossip != nil }
func (b autopilotBackend) Servers() []*gossip.Server        { return b.s.regionServers() }
func (b autopilotBackend) LocalStats() structs.RaftStats    { return b.s.localRaftStats() }
func (b autopilotBackend) Logger() hclog.Logger             { return b.s.logger }
func (b autopilotBackend) Membership() autopilot.Membership { return b.s.membership }
func (b autopilotBackend) Local() autopilot.Local {
	c := b.s.config
	return autopilot.Local{ID: c.NodeID, Name: c.NodeName + "." + c.Region, Build: c.Build}
}
func (b autopilotBackend) RemoteStats(addr string) (structs.RaftStats, error) {
	var stats structs.RaftStats
	err := b.s.rpcCallTimeout(addr, "Cluster.RaftStats", &HelloRequest{Server: b.s.self()}, &stats, helloTimeout)
	return stats, err
}
