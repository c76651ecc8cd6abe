package nomad

import (
	"context"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// unanswered is a raft future raft never answers, as one given just before a shutdown can be.
type unanswered struct{ never chan struct{} }

func (u unanswered) Error() error { <-u.never; return nil }

// TestWaitFuture_EndsWithTheTerm: a term that ends stops waiting on a future raft will never
// answer, so monitorLeadership and Shutdown, which wait for the term, are not held forever.
func TestWaitFuture_EndsWithTheTerm(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- waitFuture(ctx, unanswered{never: make(chan struct{})}) }()
	cancel()
	select {
	case err := <-done:
		must.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("waitFuture still waits after its context ended")
	}
}
