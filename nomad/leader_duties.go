package nomad

import (
	"context"
	"time"

	"github.com/nomadfork/nomad/nomad/deploymentwatcher"
	"github.com/nomadfork/nomad/nomad/drainer"
	"github.com/nomadfork/nomad/nomad/eventsink"
	"github.com/nomadfork/nomad/nomad/leader"
	"github.com/nomadfork/nomad/nomad/periodic"
	"github.com/nomadfork/nomad/nomad/planapply"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// monitorLeadership runs the leader's duties while this server leads, one term at a time
// (leader.Monitor): the workers, the plan applier and the broker are per term, and Shutdown
// returns only after the last term has wound down.
func (s *Server) monitorLeadership() {
	defer s.leaderWG.Done()
	leader.Monitor(s.shutdownCtx, s.raft.LeaderCh(), s.leaderReady, s.logger, s.establishLeadership)
}

// establishLeadership waits until every entry committed before this term is applied to the
// FSM, then opens the server for reads and writes that depend on state and starts the
// leader's duties.
func (s *Server) establishLeadership(ctx context.Context, ready chan struct{}) {
	if !leader.Barrier(ctx, s.raft, raftApplyTimeout, s.logger) {
		return
	}
	// Before opening up: the official client's harness (and any workload identity) takes a
	// listed key as the sign that the cluster is usable. A failure is retried next term.
	if err := s.initializeKeyring(ctx); err != nil {
		s.logger.Error("initializing the keyring failed", "error", err)
	}
	if err := s.armVariableLocks(); err != nil {
		s.logger.Error("arming variable lock timers failed", "error", err)
	}
	// A term that ended while it caught up must not open: a request waiting on it would
	// take this store, no longer the leader's, for the leader's.
	if ctx.Err() != nil {
		return
	}
	// ready belongs to this term only: losing leadership installs a fresh channel.
	close(ready)
	s.leaderLoop(ctx)
}

// leaderCaughtUp reports, without waiting, whether this leader has applied the whole log, so
// decisions that read state (autopilot's configuration) are not taken from a store behind it.
func (s *Server) leaderCaughtUp() bool { return s.leaderReady.Ready() }

// LeaderReady reports whether this server leads and takes calls: it has applied the log it
// was elected with.
func (s *Server) LeaderReady() bool { return s.IsLeader() && s.leaderReady.Ready() }

// catchingUp reports whether this server leads but has not yet applied the log it was
// elected with: calls that depend on its store are refused until it has (structs.NotReady).
func (s *Server) catchingUp() bool { return s.IsLeader() && !s.leaderReady.Ready() }

// leaderLoop runs the term's duties and chores (leaderDuties, leaderChores), each writing
// through Raft, and returns once all have stopped.
func (s *Server) leaderLoop(ctx context.Context) {
	// The duties belong to this term: they stop with ctx and leader.RunTerm does not return
	// before they have. (A step already under way when the term ends may still finish its
	// write; a stale one is harmless: marks are idempotent, a drain is ended only if its
	// strategy is unchanged, the watcher re-reads state each step, a plan carries the
	// evaluation it completes, and the state refuses a periodic launch already recorded.) The
	// workers wait while the configuration says 0 schedulers (the agent API can change it).
	//
	// Deferred before the term runs, so it runs after: the broker is emptied once nothing of
	// this term uses it any more, unless a next term (leadership regained before this one
	// wound down) has started and owns it now.
	term := s.leaderTerm.Add(1)
	defer func() {
		if s.leaderTerm.Load() == term {
			s.evalBroker.SetEnabled(false)
		}
	}()
	if err := s.evalFeed.Enable(); err != nil {
		s.logger.Error("filling the evaluation broker failed", "error", err)
	}
	leader.RunTerm(ctx, s.logger, s.leaderDuties(), s.leaderChores())
}

// leaderDuties are the goroutines of one leadership term.
func (s *Server) leaderDuties() []leader.Duty {
	applier := planapply.New(planapply.Config{
		State: s.State,
		Apply: func(req *structs.ApplyPlanResultsRequest) (uint64, error) {
			return s.raftApply(structs.ApplyPlanResultsRequestType, req)
		},
	})
	return []leader.Duty{
		{Name: "heartbeats", Run: s.runHeartbeats},
		{Name: "plan applier", Run: applier.Run},
		{Name: "scheduling workers", Run: func(ctx context.Context) { s.workers.Run(ctx, workerBackend{s}, applier) }},
		{Name: "evaluation broker feeder", Run: s.evalFeed.Run},
		{Name: "failed evaluation reaper", Run: s.evalFeed.RunReaper},
		{Name: "deployment watcher", Run: deploymentwatcher.New(watcherBackend{s}, s.logger).Run},
		{Name: "drainer", Run: drainer.New(drainer.Config{
			State: s.State, Apply: s.raftApply, Logger: s.logger.Named("drainer"),
		}).Run},
		{Name: "periodic dispatcher", Run: periodic.New(periodic.Config{
			State: s.State, Launch: s.periodicLaunch, Logger: s.logger.Named("periodic"),
			Settle: 250 * time.Millisecond,
		}).Run},
		{Name: "leader metrics", Run: s.runLeaderMetrics},
		// Event sinks are delivered by the leader only: its cursor commits go through Raft,
		// and one deliverer per sink keeps batches in order.
		{Name: "event sinks", Run: eventsink.New(eventsink.Config{
			State: s.State, Broker: s.broker, Apply: s.raftApply, Logger: s.logger.Named("event_sink"),
		}).Run},
	}
}

// leaderChores are the term's work on a fixed interval: garbage collection, and the expiry
// of tokens, purge history and variable locks.
func (s *Server) leaderChores() []leader.Chore {
	return []leader.Chore{
		{Every: positive(s.config.JobGCInterval, 5*time.Minute), Run: s.collectGarbage},
		{Every: positive(s.config.ReapInterval, 10*time.Second), Run: s.reapExpired},
	}
}

func (s *Server) collectGarbage() {
	if n, err := s.runJobGC(false, nil); err != nil {
		s.logger.Error("job GC failed", "error", err)
	} else if n > 0 {
		s.logger.Info("job GC removed jobs", "count", n)
	}
	if n, err := s.runNodeGC(false); err != nil {
		s.logger.Error("node GC failed", "error", err)
	} else if n > 0 {
		s.logger.Info("node GC removed down nodes", "count", n)
	}
	if n, err := s.runEvalGC(false); err != nil {
		s.logger.Error("evaluation GC failed", "error", err)
	} else if n > 0 {
		s.logger.Debug("evaluation GC removed evaluations", "count", n)
	}
	if n, err := s.runAllocGC(false); err != nil {
		s.logger.Error("allocation GC failed", "error", err)
	} else if n > 0 {
		s.logger.Debug("allocation GC removed allocations", "count", n)
	}
}

func (s *Server) reapExpired() {
	if err := s.reapExpiredTokens(); err != nil {
		s.logger.Error("reaping expired ACL tokens failed", "error", err)
	}
	if err := s.reapExpiredOneTimeTokens(); err != nil {
		s.logger.Error("reaping expired one-time tokens failed", "error", err)
	}
	if err := s.reapPurgeHistory(); err != nil {
		s.logger.Error("purge history retention failed", "error", err)
	}
	if err := s.reapExpiredVariableLocks(); err != nil {
		s.logger.Error("releasing expired variable locks failed", "error", err)
	}
}

func positive(d, fallback time.Duration) time.Duration {
	if d <= 0 {
		return fallback
	}
	return d
}

// watcherBackend gives the deployment watcher the state, Raft and the clock.
type watcherBackend struct{ s *Server }

func (b watcherBackend) State() *state.StateStore { return b.s.State() }
func (b watcherBackend) Now() time.Time           { return now() }
func (b watcherBackend) Apply(t structs.MessageType, req any) (uint64, error) {
	return b.s.raftApply(t, req)
}
