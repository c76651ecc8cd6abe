package leader

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/shoenig/test/must"
)

// unanswered is a raft future raft never answers, as one given just before a shutdown can be.
type unanswered struct{ never chan struct{} }

func (u unanswered) Error() error { <-u.never; return nil }

// TestWaitFuture_EndsWithTheTerm: a term that ends stops waiting on a future raft will never
// answer, so Monitor and Shutdown, which wait for the term, are not held forever.
func TestWaitFuture_EndsWithTheTerm(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- WaitFuture(ctx, unanswered{never: make(chan struct{})}) }()
	cancel()
	select {
	case err := <-done:
		must.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("WaitFuture still waits after its context ended")
	}
}

// TestRunTerm_WaitsForEveryDutyAndRunsChores: the chores run on their interval, and RunTerm
// returns only once every duty has returned, however long a duty takes to wind down.
func TestRunTerm_WaitsForEveryDutyAndRunsChores(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var stopped atomic.Int32
	var chored atomic.Int32
	slow := func(ctx context.Context) {
		<-ctx.Done()
		time.Sleep(50 * time.Millisecond)
		stopped.Add(1)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		RunTerm(ctx, hclog.NewNullLogger(),
			[]Duty{{Name: "a", Run: slow}, {Name: "b", Run: slow}},
			[]Chore{{Every: time.Millisecond, Run: func() {
				if chored.Add(1) == 3 {
					cancel()
				}
			}}})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("RunTerm did not return after its context ended")
	}
	must.Eq(t, 2, stopped.Load())
	must.GreaterEq(t, 3, chored.Load())
}

// TestMonitor_OneTermAtATime: leadership lost ends the term and resets readiness before a
// new term may start, and Monitor waits for the running term when it stops.
func TestMonitor_OneTermAtATime(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	leaderCh := make(chan bool)
	ready := NewReadiness()
	var running, terms atomic.Int32
	overlap := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		Monitor(ctx, leaderCh, ready, hclog.NewNullLogger(), func(ctx context.Context, r chan struct{}) {
			if running.Add(1) > 1 {
				overlap <- struct{}{}
			}
			terms.Add(1)
			close(r)
			<-ctx.Done()
			time.Sleep(20 * time.Millisecond)
			running.Add(-1)
		})
	}()
	leaderCh <- true
	waitFor(t, ready.Ready)
	leaderCh <- false
	waitFor(t, func() bool { return !ready.Ready() })
	leaderCh <- true
	waitFor(t, ready.Ready)
	cancel()
	<-done
	must.Eq(t, 2, terms.Load())
	must.Eq(t, 0, running.Load())
	select {
	case <-overlap:
		t.Fatal("two terms ran at once")
	default:
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met")
		}
		time.Sleep(time.Millisecond)
	}
}

// A term that opens after it ended (its catch-up finished late, after leadership was lost)
// must not make the server ready; the next term's opening does.
func TestReadiness_EndedTermNeverOpens(t *testing.T) {
	ready := NewReadiness()
	first := ready.current()
	ready.Reset() // leadership lost while the term caught up
	close(first)
	must.False(t, ready.Ready())

	close(ready.current()) // the next term catches up
	must.True(t, ready.Ready())
	ready.Reset()
	must.False(t, ready.Ready())
}
