package leader

import (
	"context"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// Readiness says whether this server leads and has applied the whole log. Each term has its
// own gate: losing leadership ends the gate and installs a fresh one, so a term that ends
// never opens the next term's, and a late opening of an ended term counts for nothing.
type Readiness struct {
	gate atomic.Pointer[termGate]
}

// termGate is one term's readiness: open is closed once the term has caught up, ended once
// the term is over.
type termGate struct {
	open, ended chan struct{}
}

// NewReadiness is the readiness of a server that does not lead yet.
func NewReadiness() *Readiness {
	r := &Readiness{}
	r.Reset()
	return r
}

// Reset ends the current term's gate and makes the server not ready, for the next term to
// open again.
func (r *Readiness) Reset() {
	next := &termGate{open: make(chan struct{}), ended: make(chan struct{})}
	if old := r.gate.Swap(next); old != nil {
		close(old.ended)
	}
}

// current is the channel the running (or next) term closes once it has caught up.
func (r *Readiness) current() chan struct{} { return r.gate.Load().open }

// Ready reports, without waiting, whether this leader has applied the whole log.
func (r *Readiness) Ready() bool { return r.gate.Load().ready() }

func (g *termGate) ready() bool {
	select {
	case <-g.ended:
		return false
	default:
	}
	select {
	case <-g.open:
		return true
	default:
		return false
	}
}

// Monitor runs term for each leadership term Raft reports on leaderCh, until ctx ends. A
// term's goroutine is waited for when the term ends, so that the next term starts only after
// the last one has wound down and Monitor returns only after it. term gets the term's context
// and the readiness channel it closes once it has caught up.
func Monitor(ctx context.Context, leaderCh <-chan bool, ready *Readiness, logger hclog.Logger, term func(ctx context.Context, ready chan struct{})) {
	var stop context.CancelFunc
	var running sync.WaitGroup
	endTerm := func() {
		stop()
		stop = nil
		running.Wait()
	}
	for {
		select {
		case <-ctx.Done():
			if stop != nil {
				endTerm()
			}
			return
		case isLeader := <-leaderCh:
			if isLeader && stop == nil {
				var tctx context.Context
				tctx, stop = context.WithCancel(ctx)
				logger.Info("cluster leadership acquired")
				ch := ready.current()
				running.Add(1)
				go func() {
					defer running.Done()
					term(tctx, ch)
				}()
			} else if !isLeader && stop != nil {
				logger.Info("cluster leadership lost")
				ready.Reset()
				endTerm()
			}
		}
	}
}

// Barrier waits until every entry committed before this term is applied, retrying a failed
// barrier, and reports whether it got there before ctx ended. Without it a freshly elected
// leader (a restart, say) answers from a store that has not replayed its log yet.
func Barrier(ctx context.Context, r interface {
	Barrier(timeout time.Duration) raft.Future
}, timeout time.Duration, logger hclog.Logger) bool {
	for {
		err := WaitFuture(ctx, r.Barrier(timeout))
		if ctx.Err() != nil {
			return false
		}
		if err == nil {
			return true
		}
		logger.Warn("leader barrier failed; retrying", "error", err)
		select {
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// WaitFuture waits for f, or until ctx ends. Raft does not always answer a future it was
// given just before it stepped down or shut down, and a term that ends (leadership lost, the
// server stopping) must not wait on one: Monitor and the server's Shutdown wait for the term.
// The goroutine that reads f ends when raft answers it; one raft never answers lives on until
// the process ends, which only a server being shut down leaves behind.
func WaitFuture(ctx context.Context, f interface{ Error() error }) error {
	answer := make(chan error, 1)
	go func() { answer <- f.Error() }()
	select {
	case err := <-answer:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Duty is a goroutine of the term: it runs until the term's context ends.
type Duty struct {
	Name string
	Run  func(ctx context.Context)
}

// Chore is work the term does every Every, one chore at a time.
type Chore struct {
	Every time.Duration
	Run   func()
}

// RunTerm starts every duty, runs the chores on their intervals until ctx ends, and returns
// once every duty has stopped. Chores run one at a time on this goroutine, so two never
// overlap; a chore that overruns its interval skips the ticks it missed, as a ticker does.
func RunTerm(ctx context.Context, logger hclog.Logger, duties []Duty, chores []Chore) {
	var owned sync.WaitGroup
	defer owned.Wait()
	for _, d := range duties {
		owned.Add(1)
		go func() {
			defer owned.Done()
			d.Run(ctx)
			logger.Trace("leader duty stopped", "duty", d.Name)
		}()
	}
	cases := []reflect.SelectCase{{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())}}
	for _, c := range chores {
		tick := time.NewTicker(c.Every)
		defer tick.Stop()
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(tick.C)})
	}
	for {
		chosen, _, _ := reflect.Select(cases)
		if chosen == 0 {
			return
		}
		chores[chosen-1].Run()
	}
}
