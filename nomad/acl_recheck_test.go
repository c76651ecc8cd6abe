package nomad

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// runRecheck runs r until the test ends and returns a channel closed when run has returned.
func runRecheck(t *testing.T, ctx context.Context, r *aclSubscriptionRecheck) <-chan struct{} {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.run(ctx)
	}()
	return done
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting: %s", what)
	}
}

func TestACLSubscriptionRecheck_BurstCoalesces(t *testing.T) {
	var checks atomic.Int32
	started := make(chan int32, 10)
	release := make(chan struct{})
	r := newACLSubscriptionRecheck(func() {
		n := checks.Add(1)
		started <- n
		if n == 1 {
			<-release
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := runRecheck(t, ctx, r)

	r.request()
	must.Eq(t, 1, <-started)
	// A burst of writes while the first check runs.
	for range 100 {
		r.request()
	}
	close(release)
	must.Eq(t, 2, <-started)

	cancel()
	waitClosed(t, done, "run to return")
	must.Eq(t, 2, checks.Load(), must.Sprint("101 writes: one check, then one for the whole burst"))
}

func TestACLSubscriptionRecheck_StopsWithItsContext(t *testing.T) {
	var checks atomic.Int32
	r := newACLSubscriptionRecheck(func() { checks.Add(1) })
	ctx, cancel := context.WithCancel(context.Background())
	done := runRecheck(t, ctx, r)
	cancel()
	waitClosed(t, done, "run to return on shutdown")

	// Writes after shutdown neither block the FSM nor check.
	r.request()
	r.request()
	must.Eq(t, 0, checks.Load())
}

// Every write is followed by a check that sees it, however the writes and checks interleave:
// the last check must see the last write.
func TestACLSubscriptionRecheck_LastWriteIsChecked(t *testing.T) {
	const writes = 500
	var written, seen atomic.Int64
	r := newACLSubscriptionRecheck(func() { seen.Store(written.Load()) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := runRecheck(t, ctx, r)

	for i := int64(1); i <= writes; i++ {
		written.Store(i)
		r.request()
	}
	deadline := time.Now().Add(5 * time.Second)
	for seen.Load() != writes && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	must.Eq(t, writes, seen.Load())
	cancel()
	waitClosed(t, done, "run to return")
}
