package nomad

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nomadfork/nomad/nomad/planapply"
	"github.com/nomadfork/nomad/nomad/worker"
	"github.com/nomadfork/nomad/structs"
)

// testWorker processes evaluations as a scheduling worker does, one per step, for tests that
// drive the scheduler step by step on a server started without workers (NumSchedulers 0: the
// broker is filled, nothing takes from it). It has its own plan applier, owned by the test.
type testWorker struct {
	srv *Server
	w   *worker.Worker
}

func newTestWorker(t *testing.T, srv *Server) *testWorker {
	t.Helper()
	// The broker is enabled by the term's duties, which start just after the leader is ready.
	waitUntil(t, srv.evalBroker.Enabled)
	applier := planapply.New(planapply.Config{
		State: srv.State,
		Apply: func(req *structs.ApplyPlanResultsRequest) (uint64, error) {
			return srv.raftApply(structs.ApplyPlanResultsRequestType, req)
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		applier.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return &testWorker{srv: srv, w: worker.New(workerBackend{srv}, applier)}
}

// step processes the next evaluation the broker delivers and acknowledges it (nacks it on an
// error, which it returns).
func (tw *testWorker) step(ctx context.Context) error {
	broker := tw.srv.evalBroker
	eval, token, err := broker.Dequeue(ctx, worker.DefaultEnabledSchedulers, 2*time.Second)
	if err != nil {
		return err
	}
	if eval == nil {
		return errors.New("no evaluation ready")
	}
	if err := tw.w.Handle(ctx, eval, token); err != nil {
		_ = broker.Nack(eval.ID, token)
		return err
	}
	return broker.Ack(eval.ID, token)
}
