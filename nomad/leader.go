package nomad

import (
	"context"
	"time"
)

// monitorLeadership runs the leader's periodic duties while this server leads.
func (s *Server) monitorLeadership() {
	defer s.leaderWG.Done()
	var stop context.CancelFunc
	for {
		select {
		case <-s.shutdownCtx.Done():
			if stop != nil {
				stop()
			}
			return
		case isLeader := <-s.raft.LeaderCh():
			if isLeader && stop == nil {
				var ctx context.Context
				ctx, stop = context.WithCancel(s.shutdownCtx)
				s.logger.Info("cluster leadership acquired")
				go s.leaderLoop(ctx)
			} else if !isLeader && stop != nil {
				s.logger.Info("cluster leadership lost")
				stop()
				stop = nil
			}
		}
	}
}

// leaderLoop runs GC, token expiry and purge-history retention. Each writes through Raft.
func (s *Server) leaderLoop(ctx context.Context) {
	gcTick := time.NewTicker(positive(s.config.JobGCInterval, 5*time.Minute))
	defer gcTick.Stop()
	reapTick := time.NewTicker(positive(s.config.ReapInterval, 10*time.Second))
	defer reapTick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-gcTick.C:
			if n, err := s.runJobGC(false); err != nil {
				s.logger.Error("job GC failed", "error", err)
			} else if n > 0 {
				s.logger.Info("job GC removed jobs", "count", n)
			}
		case <-reapTick.C:
			if err := s.reapExpiredTokens(); err != nil {
				s.logger.Error("reaping expired ACL tokens failed", "error", err)
			}
			if err := s.reapPurgeHistory(); err != nil {
				s.logger.Error("purge history retention failed", "error", err)
			}
		}
	}
}

func positive(d, fallback time.Duration) time.Duration {
	if d <= 0 {
		return fallback
	}
	return d
}
