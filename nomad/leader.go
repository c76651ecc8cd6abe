package nomad

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	"github.com/nomadfork/nomad/nomad/deploymentwatcher"
	"github.com/nomadfork/nomad/nomad/drainer"
	"github.com/nomadfork/nomad/nomad/eventsink"
	"github.com/nomadfork/nomad/nomad/periodic"
	"github.com/nomadfork/nomad/nomad/planapply"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// monitorLeadership runs the leader's periodic duties while this server leads. A term's
// goroutine (establishLeadership and everything leaderLoop owns) is waited for when the term
// ends, so that the next term starts only after the last one has wound down (its workers, the
// plan applier and the broker are per term) and Shutdown returns only after it.
func (s *Server) monitorLeadership() {
	defer s.leaderWG.Done()
	var stop context.CancelFunc
	var term sync.WaitGroup
	endTerm := func() {
		stop()
		stop = nil
		term.Wait()
	}
	for {
		select {
		case <-s.shutdownCtx.Done():
			if stop != nil {
				endTerm()
			}
			return
		case isLeader := <-s.raft.LeaderCh():
			if isLeader && stop == nil {
				var ctx context.Context
				ctx, stop = context.WithCancel(s.shutdownCtx)
				s.logger.Info("cluster leadership acquired")
				ready := *s.leaderReady.Load()
				term.Add(1)
				go func() {
					defer term.Done()
					s.establishLeadership(ctx, ready)
				}()
			} else if !isLeader && stop != nil {
				s.logger.Info("cluster leadership lost")
				s.leaderReady.Store(newNotReady())
				endTerm()
			}
		}
	}
}

// newNotReady is the readiness channel of a server that has not yet caught up as leader.
func newNotReady() *chan struct{} {
	ch := make(chan struct{})
	return &ch
}

// establishLeadership waits until every entry committed before this term is applied to the
// FSM, then opens the server for reads and writes that depend on state and starts the
// leader's duties. Without the barrier a freshly elected leader (a restart, say) answers from
// a store that has not replayed its log yet.
func (s *Server) establishLeadership(ctx context.Context, ready chan struct{}) {
	for {
		err := waitFuture(ctx, s.raft.Barrier(raftApplyTimeout))
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			break
		}
		s.logger.Warn("leader barrier failed; retrying", "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
	// Before opening up: the official client's harness (and any workload identity) takes a
	// listed key as the sign that the cluster is usable. A failure is retried next term.
	if err := s.initializeKeyring(ctx); err != nil {
		s.logger.Error("initializing the keyring failed", "error", err)
	}
	if err := s.armVariableLocks(); err != nil {
		s.logger.Error("arming variable lock timers failed", "error", err)
	}
	// ready belongs to this term only: losing leadership installs a fresh channel.
	close(ready)
	s.leaderLoop(ctx)
}

// waitFuture waits for f, or until ctx ends. Raft does not always answer a future it was
// given just before it stepped down or shut down, and a term that ends (leadership lost, the
// server stopping) must not wait on one: monitorLeadership and Shutdown wait for the term.
// The goroutine that reads f ends when raft answers it; one raft never answers lives on until
// the process ends, which only a server being shut down leaves behind.
func waitFuture(ctx context.Context, f raft.Future) error {
	answer := make(chan error, 1)
	go func() { answer <- f.Error() }()
	select {
	case err := <-answer:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// leaderCaughtUp reports, without waiting, whether this leader has applied the whole log, so
// decisions that read state (autopilot's configuration) are not taken from a store behind it.
func (s *Server) leaderCaughtUp() bool {
	select {
	case <-*s.leaderReady.Load():
		return true
	default:
		return false
	}
}

// leaderReadyWait bounds how long a request waits for a new leader to catch up.
const leaderReadyWait = 10 * time.Second

// waitLeaderReady holds a request that reached the leader until the leader has applied the
// whole log. Followers answer from their replicated state without waiting.
func (s *Server) waitLeaderReady() {
	if !s.IsLeader() {
		return
	}
	select {
	case <-*s.leaderReady.Load():
	case <-time.After(leaderReadyWait):
	case <-s.shutdownCtx.Done():
	}
}

// leaderLoop runs GC, token expiry, purge-history retention, node heartbeats, the
// evaluation broker, the scheduling workers and the plan applier. Each writes through Raft.
func (s *Server) leaderLoop(ctx context.Context) {
	// The heartbeat timers, the worker, the drainer, the deployment watcher and the periodic
	// dispatcher belong to this term: they stop with ctx and this loop does not return before
	// they have. (A step already under way when the term ends may still finish its write; a
	// stale one is harmless: marks are idempotent, a drain is ended only if its strategy is
	// unchanged, the watcher re-reads state each step, a plan carries the evaluation it
	// completes, and the state refuses a periodic launch already recorded.) The worker waits while
	// the configuration says 0 schedulers (the agent API can change it).
	var owned sync.WaitGroup
	// Deferred first, so it runs last: the broker is emptied once nothing of this term uses
	// it any more, unless a next term (leadership regained before this one wound down) has
	// started and owns it now.
	term := s.leaderTerm.Add(1)
	defer func() {
		if s.leaderTerm.Load() == term {
			s.evalBroker.SetEnabled(false)
		}
	}()
	defer owned.Wait()
	if err := s.enableEvalBroker(); err != nil {
		s.logger.Error("filling the evaluation broker failed", "error", err)
	}
	applier := planapply.New(planapply.Config{
		State: s.State,
		Apply: func(req *structs.ApplyPlanResultsRequest) (uint64, error) {
			return s.raftApply(structs.ApplyPlanResultsRequestType, req)
		},
	})
	owned.Add(8)
	go func() {
		defer owned.Done()
		s.runHeartbeats(ctx)
	}()
	go func() {
		defer owned.Done()
		applier.Run(ctx)
	}()
	go func() {
		defer owned.Done()
		s.workers.Run(ctx, workerBackend{s}, applier)
	}()
	go func() {
		defer owned.Done()
		s.runEvalBrokerFeeder(ctx)
	}()
	go func() {
		defer owned.Done()
		s.runFailedEvalReaper(ctx)
	}()
	go func() {
		defer owned.Done()
		deploymentwatcher.New(watcherBackend{s}, s.logger).Run(ctx)
	}()
	go func() {
		defer owned.Done()
		drainer.New(drainer.Config{
			State: s.State, Apply: s.raftApply, Logger: s.logger.Named("drainer"),
		}).Run(ctx)
	}()
	go func() {
		defer owned.Done()
		periodic.New(periodic.Config{
			State: s.State, Launch: s.periodicLaunch, Logger: s.logger.Named("periodic"),
			Settle: 250 * time.Millisecond,
		}).Run(ctx)
	}()
	owned.Add(2)
	go func() {
		defer owned.Done()
		s.runLeaderMetrics(ctx)
	}()
	go func() {
		defer owned.Done()
		// Event sinks are delivered by the leader only: its cursor commits go through Raft,
		// and one deliverer per sink keeps batches in order.
		eventsink.New(eventsink.Config{
			State: s.State, Broker: s.broker, Apply: s.raftApply, Logger: s.logger.Named("event_sink"),
		}).Run(ctx)
	}()
	gcTick := time.NewTicker(positive(s.config.JobGCInterval, 5*time.Minute))
	defer gcTick.Stop()
	reapTick := time.NewTicker(positive(s.config.ReapInterval, 10*time.Second))
	defer reapTick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-gcTick.C:
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
		case <-reapTick.C:
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
