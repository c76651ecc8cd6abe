package nomad

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	metrics "github.com/hashicorp/go-metrics"
	"github.com/nomadfork/nomad/nomad/evalbroker"
	"github.com/nomadfork/nomad/nomad/worker"
	"github.com/nomadfork/nomad/structs"
)

// The evaluation broker on the leader (nomad/evalbroker holds the queue itself). This file
// owns what feeds and drains it for one leadership term:
//   - enableEvalBroker turns it on and fills it with every pending evaluation in the state;
//     from then on the FSM's commit hook (onCommit) adds each evaluation applied as pending.
//   - runEvalBrokerFeeder offers the blocked evaluations again whenever the nodes or the
//     allocations change (room may have appeared), follows the scheduler configuration's
//     PauseEvalBroker, and reports the nomad.broker.* gauges.
//   - runFailedEvalReaper marks the evaluations that reached the delivery limit failed and
//     gives each a delayed follow-up, in one Raft entry.
// Leadership loss disables the broker (leaderLoop), which empties it.

// enableEvalBroker turns the broker on and fills it from the state, unless the scheduler
// configuration pauses it. Enabling before reading means an evaluation applied in between is
// offered by the commit hook too; the broker takes each once.
func (s *Server) enableEvalBroker() error {
	if s.schedulerConfig().PauseEvalBroker {
		return nil
	}
	s.evalBroker.SetEnabled(true)
	pending, err := s.State().EvalsByStatus(nil, structs.EvalStatusPending)
	if err != nil {
		return err
	}
	for _, eval := range pending {
		s.evalBroker.Enqueue(eval)
	}
	return nil
}

// evalBrokerGaugeInterval is how often the broker's gauges are reported.
const evalBrokerGaugeInterval = time.Second

// runEvalBrokerFeeder runs until ctx ends.
func (s *Server) runEvalBrokerFeeder(ctx context.Context) {
	var capacitySeen uint64
	for ctx.Err() == nil {
		store := s.State()
		ws := memdb.NewWatchSet()
		ws.Add(store.AbandonCh())
		idx := max(store.WatchIndex(ws, "nodes"), store.WatchIndex(ws, "allocs"))
		store.WatchIndex(ws, "scheduler_config")

		paused := s.schedulerConfigIn(store).PauseEvalBroker
		switch {
		case paused && s.evalBroker.Enabled():
			s.logger.Info("evaluation broker paused by the scheduler configuration")
			s.evalBroker.SetEnabled(false)
		case !paused && !s.evalBroker.Enabled():
			if err := s.enableEvalBroker(); err != nil {
				s.logger.Error("filling the evaluation broker failed", "error", err)
			}
			capacitySeen = 0
		}
		if !paused && idx > capacitySeen {
			blocked, err := store.EvalsByStatus(nil, structs.EvalStatusBlocked)
			if err != nil {
				s.logger.Error("reading blocked evaluations failed", "error", err)
			} else {
				for _, eval := range blocked {
					s.evalBroker.Enqueue(eval)
				}
				capacitySeen = idx
			}
		}
		s.emitEvalBrokerGauges()
		wctx, cancel := context.WithTimeout(ctx, evalBrokerGaugeInterval)
		_ = ws.WatchCtx(wctx)
		cancel()
	}
}

func (s *Server) emitEvalBrokerGauges() {
	st := s.evalBroker.Stats()
	metrics.SetGauge([]string{"nomad", "broker", "total_ready"}, float32(st.TotalReady))
	metrics.SetGauge([]string{"nomad", "broker", "total_unacked"}, float32(st.TotalUnacked))
	metrics.SetGauge([]string{"nomad", "broker", "total_blocked"}, float32(st.TotalBlocked))
	metrics.SetGauge([]string{"nomad", "broker", "total_waiting"}, float32(st.TotalWaiting))
}

// runFailedEvalReaper runs until ctx ends.
func (s *Server) runFailedEvalReaper(ctx context.Context) {
	for ctx.Err() == nil {
		eval, token, err := s.evalBroker.Dequeue(ctx, []string{evalbroker.FailedQueue}, 0)
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
			continue
		}
		if err := s.failEvalWithFollowup(eval); err != nil {
			s.logger.Error("marking an evaluation failed failed", "eval_id", eval.ID, "error", err)
			_ = s.evalBroker.Nack(eval.ID, token)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		_ = s.evalBroker.Ack(eval.ID, token)
	}
}

// failEvalWithFollowup marks an evaluation that reached the delivery limit failed and
// creates its follow-up, due after a delay, in one entry: the job is tried again later
// rather than never, without holding up the evaluations behind it now.
func (s *Server) failEvalWithFollowup(delivered *structs.Evaluation) error {
	current, err := s.State().EvalByID(nil, delivered.ID)
	if err != nil {
		return err
	}
	if current == nil || current.TerminalStatus() {
		return nil
	}
	t := now()
	followup, err := worker.NewEval(worker.EvalJob(nil, current), structs.EvalTriggerFailedFollowUp, current.Priority, t.UnixNano())
	if err != nil {
		return err
	}
	base := positive(s.config.EvalFailedFollowupDelay, time.Minute)
	followup.WaitUntil = t.Add(base + rand.N(5*base)).UTC()
	followup.PreviousEval = current.ID
	followup.JobModifyIndex = current.JobModifyIndex
	followup.StatusDescription = "created to retry evaluation " + current.ID + " that reached its delivery limit"
	failed := current.Copy()
	failed.Status = structs.EvalStatusFailed
	failed.StatusDescription = fmt.Sprintf("evaluation reached its delivery limit (%d)", s.evalDeliveryLimit())
	failed.NextEval = followup.ID
	failed.ModifyTime = t.UnixNano()
	_, err = s.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{failed, followup}})
	return err
}

func (s *Server) evalDeliveryLimit() int {
	if s.config.EvalBroker.DeliveryLimit > 0 {
		return s.config.EvalBroker.DeliveryLimit
	}
	return 3
}
