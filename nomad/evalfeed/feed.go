// Package evalfeed feeds the leader's evaluation broker (nomad/evalbroker holds the queue
// itself) and drains what it gives up on, for one leadership term:
//   - Enable turns the broker on and fills it with every pending evaluation in the state;
//     from then on the FSM's commit hook offers each evaluation applied as pending.
//   - Run offers the blocked evaluations again whenever the nodes or the allocations change
//     (room may have appeared), follows the scheduler configuration's PauseEvalBroker, and
//     reports the nomad.broker.* gauges.
//   - RunReaper marks the evaluations that reached the delivery limit failed and gives each a
//     delayed follow-up, in one Raft entry.
//
// Leadership loss disables the broker (the server's leader duties), which empties it. It
// imports structs, state, nomad/evalbroker and nomad/worker (for the evaluation constructor),
// never the server package.
package evalfeed

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"
	metrics "github.com/hashicorp/go-metrics"
	"github.com/nomadfork/nomad/nomad/evalbroker"
	"github.com/nomadfork/nomad/nomad/worker"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// Config is what the feeder works with.
type Config struct {
	Broker *evalbroker.Broker
	State  func() *state.StateStore
	// SchedulerConfig is the scheduler configuration in force as store holds it.
	SchedulerConfig func(store *state.StateStore) *structs.SchedulerConfiguration
	Apply           func(t structs.MessageType, msg any) (uint64, error)
	// Now is the leader's clock.
	Now func() time.Time
	// FollowupDelay is the least delay of a failed evaluation's follow-up; the delay is
	// spread over up to six times it.
	FollowupDelay time.Duration
	// DeliveryLimit is the broker's, for the failed evaluation's description.
	DeliveryLimit int
	Logger        hclog.Logger
}

// Feeder fills and drains the broker; see the package documentation.
type Feeder struct{ cfg Config }

// New is a feeder with cfg.
func New(cfg Config) *Feeder { return &Feeder{cfg: cfg} }

// Enable turns the broker on and fills it from the state, unless the scheduler
// configuration pauses it. Enabling before reading means an evaluation applied in between is
// offered by the commit hook too; the broker takes each once.
func (f *Feeder) Enable() error {
	store := f.cfg.State()
	if f.cfg.SchedulerConfig(store).PauseEvalBroker {
		return nil
	}
	f.cfg.Broker.SetEnabled(true)
	pending, err := f.cfg.State().EvalsByStatus(nil, structs.EvalStatusPending)
	if err != nil {
		return err
	}
	for _, eval := range pending {
		f.cfg.Broker.Enqueue(eval)
	}
	return nil
}

// gaugeInterval is how often the broker's gauges are reported.
const gaugeInterval = time.Second

// Run feeds the broker until ctx ends.
func (f *Feeder) Run(ctx context.Context) {
	broker, logger := f.cfg.Broker, f.cfg.Logger
	var capacitySeen uint64
	for ctx.Err() == nil {
		store := f.cfg.State()
		ws := memdb.NewWatchSet()
		ws.Add(store.AbandonCh())
		idx := max(store.WatchIndex(ws, "nodes"), store.WatchIndex(ws, "allocs"))
		store.WatchIndex(ws, "scheduler_config")

		paused := f.cfg.SchedulerConfig(store).PauseEvalBroker
		switch {
		case paused && broker.Enabled():
			logger.Info("evaluation broker paused by the scheduler configuration")
			broker.SetEnabled(false)
		case !paused && !broker.Enabled():
			if err := f.Enable(); err != nil {
				logger.Error("filling the evaluation broker failed", "error", err)
			}
			capacitySeen = 0
		}
		if !paused && idx > capacitySeen {
			blocked, err := store.EvalsByStatus(nil, structs.EvalStatusBlocked)
			if err != nil {
				logger.Error("reading blocked evaluations failed", "error", err)
			} else {
				for _, eval := range blocked {
					broker.Enqueue(eval)
				}
				capacitySeen = idx
			}
		}
		f.emitGauges()
		wctx, cancel := context.WithTimeout(ctx, gaugeInterval)
		_ = ws.WatchCtx(wctx)
		cancel()
	}
}

func (f *Feeder) emitGauges() {
	st := f.cfg.Broker.Stats()
	metrics.SetGauge([]string{"nomad", "broker", "total_ready"}, float32(st.TotalReady))
	metrics.SetGauge([]string{"nomad", "broker", "total_unacked"}, float32(st.TotalUnacked))
	metrics.SetGauge([]string{"nomad", "broker", "total_blocked"}, float32(st.TotalBlocked))
	metrics.SetGauge([]string{"nomad", "broker", "total_waiting"}, float32(st.TotalWaiting))
}

// RunReaper fails the evaluations the broker gave up on until ctx ends.
func (f *Feeder) RunReaper(ctx context.Context) {
	broker := f.cfg.Broker
	for ctx.Err() == nil {
		eval, token, err := broker.Dequeue(ctx, []string{evalbroker.FailedQueue}, 0)
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
			continue
		}
		if err := f.failWithFollowup(eval); err != nil {
			f.cfg.Logger.Error("marking an evaluation failed failed", "eval_id", eval.ID, "error", err)
			_ = broker.Nack(eval.ID, token)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		_ = broker.Ack(eval.ID, token)
	}
}

// failWithFollowup marks an evaluation that reached the delivery limit failed and creates
// its follow-up, due after a delay, in one entry: the job is tried again later rather than
// never, without holding up the evaluations behind it now.
func (f *Feeder) failWithFollowup(delivered *structs.Evaluation) error {
	current, err := f.cfg.State().EvalByID(nil, delivered.ID)
	if err != nil {
		return err
	}
	if current == nil || current.TerminalStatus() {
		return nil
	}
	t := f.cfg.Now()
	followup, err := worker.NewEval(worker.EvalJob(nil, current), structs.EvalTriggerFailedFollowUp, current.Priority, t.UnixNano())
	if err != nil {
		return err
	}
	base := f.cfg.FollowupDelay
	followup.WaitUntil = t.Add(base + rand.N(5*base)).UTC()
	followup.PreviousEval = current.ID
	followup.JobModifyIndex = current.JobModifyIndex
	followup.StatusDescription = "created to retry evaluation " + current.ID + " that reached its delivery limit"
	failed := current.Copy()
	failed.Status = structs.EvalStatusFailed
	failed.StatusDescription = fmt.Sprintf("evaluation reached its delivery limit (%d)", f.cfg.DeliveryLimit)
	failed.NextEval = followup.ID
	failed.ModifyTime = t.UnixNano()
	_, err = f.cfg.Apply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{failed, followup}})
	return err
}
