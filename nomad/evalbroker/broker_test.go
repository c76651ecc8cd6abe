package evalbroker

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

func testBroker(t *testing.T, cfg Config) *Broker {
	t.Helper()
	if cfg.InitialNackDelay == 0 {
		cfg.InitialNackDelay = -1 // redeliver at once unless a test asks for a delay
	}
	if cfg.SubsequentNackDelay == 0 {
		cfg.SubsequentNackDelay = -1
	}
	b := New(cfg)
	b.SetEnabled(true)
	t.Cleanup(func() { b.SetEnabled(false) })
	return b
}

func evalFor(id, job string, priority int, createIndex uint64) *structs.Evaluation {
	return &structs.Evaluation{ID: id, Namespace: "default", JobID: job, Priority: priority,
		Type: structs.JobTypeService, Status: structs.EvalStatusPending, CreateIndex: createIndex}
}

var services = []string{structs.JobTypeService}

// dequeue takes the next evaluation or fails the test after a second.
func dequeue(t *testing.T, b *Broker, queues []string) (*structs.Evaluation, string) {
	t.Helper()
	e, token, err := b.Dequeue(context.Background(), queues, time.Second)
	must.NoError(t, err)
	must.NotNil(t, e, must.Sprint("nothing was delivered"))
	must.NotEq(t, "", token)
	return e, token
}

func mustEmpty(t *testing.T, b *Broker, queues []string) {
	t.Helper()
	e, _, err := b.Dequeue(context.Background(), queues, 20*time.Millisecond)
	must.NoError(t, err)
	must.Nil(t, e, must.Sprintf("unexpected delivery %v", e))
}

func TestBroker_PriorityThenCreateIndex(t *testing.T) {
	cases := []struct {
		name  string
		evals []*structs.Evaluation
		want  []string
	}{
		{
			name:  "higher priority first",
			evals: []*structs.Evaluation{evalFor("a", "j1", 50, 1), evalFor("b", "j2", 70, 2), evalFor("c", "j3", 10, 3)},
			want:  []string{"b", "a", "c"},
		},
		{
			name:  "same priority oldest first",
			evals: []*structs.Evaluation{evalFor("x", "j1", 50, 9), evalFor("y", "j2", 50, 3), evalFor("z", "j3", 50, 5)},
			want:  []string{"y", "z", "x"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := testBroker(t, Config{})
			for _, e := range tc.evals {
				b.Enqueue(e)
			}
			var got []string
			for range tc.want {
				e, token := dequeue(t, b, services)
				got = append(got, e.ID)
				must.NoError(t, b.Ack(e.ID, token))
			}
			must.Eq(t, tc.want, got)
		})
	}
}

func TestBroker_OnlyTakesItsSchedulers(t *testing.T) {
	b := testBroker(t, Config{})
	batch := evalFor("batch", "j1", 90, 1)
	batch.Type = structs.JobTypeBatch
	untyped := evalFor("untyped", "j2", 10, 2)
	untyped.Type = ""
	b.Enqueue(batch)
	b.Enqueue(untyped)
	e, _ := dequeue(t, b, services)
	must.Eq(t, "untyped", e.ID)
	mustEmpty(t, b, services)
	e, _ = dequeue(t, b, []string{structs.JobTypeService, structs.JobTypeBatch})
	must.Eq(t, "batch", e.ID)
}

func TestBroker_OneOutstandingPerJob(t *testing.T) {
	b := testBroker(t, Config{})
	b.Enqueue(evalFor("first", "web", 50, 1))
	b.Enqueue(evalFor("second", "web", 90, 2))
	b.Enqueue(evalFor("other", "api", 10, 3))
	must.Eq(t, 1, b.Stats().TotalBlocked)

	e, token := dequeue(t, b, services)
	must.Eq(t, "first", e.ID)
	// The job's second evaluation waits although it has the higher priority; another job's
	// does not.
	e2, token2 := dequeue(t, b, services)
	must.Eq(t, "other", e2.ID)
	must.NoError(t, b.Ack(e2.ID, token2))
	mustEmpty(t, b, services)

	// A nack keeps the job's slot: the redelivery comes before the waiting one.
	must.NoError(t, b.Nack(e.ID, token))
	e, token = dequeue(t, b, services)
	must.Eq(t, "first", e.ID)
	must.NoError(t, b.Ack(e.ID, token))

	e, token = dequeue(t, b, services)
	must.Eq(t, "second", e.ID)
	must.NoError(t, b.Ack(e.ID, token))
	must.Eq(t, Stats{ByScheduler: map[string]int{structs.JobTypeService: 0}}, b.Stats())
}

func TestBroker_AckNeedsTheCurrentToken(t *testing.T) {
	b := testBroker(t, Config{})
	b.Enqueue(evalFor("a", "web", 50, 1))
	e, token := dequeue(t, b, services)
	must.ErrorIs(t, b.Ack(e.ID, "not-the-token"), ErrTokenMismatch)
	must.ErrorIs(t, b.Nack(e.ID, "not-the-token"), ErrTokenMismatch)
	must.ErrorIs(t, b.Ack("unknown", token), ErrNotOutstanding)
	got, ok := b.Outstanding(e.ID)
	must.True(t, ok)
	must.Eq(t, token, got)
	must.NoError(t, b.Ack(e.ID, token))
	must.ErrorIs(t, b.Ack(e.ID, token), ErrNotOutstanding)
}

func TestBroker_EnqueueIsIdempotent(t *testing.T) {
	b := testBroker(t, Config{})
	e := evalFor("a", "web", 50, 1)
	b.Enqueue(e)
	b.Enqueue(e)
	got, token := dequeue(t, b, services)
	// Offered again while delivered (the leader's fill racing the FSM hook): still once.
	b.Enqueue(e)
	mustEmpty(t, b, services)
	must.NoError(t, b.Ack(got.ID, token))
}

func TestBroker_NackTimeoutRedelivers(t *testing.T) {
	b := testBroker(t, Config{NackTimeout: 30 * time.Millisecond})
	b.Enqueue(evalFor("a", "web", 50, 1))
	e, token := dequeue(t, b, services)
	// Nobody acknowledges: the delivery is taken back and delivered again with a new token,
	// and the first worker can no longer acknowledge it.
	e2, token2, err := b.Dequeue(context.Background(), services, 5*time.Second)
	must.NoError(t, err)
	must.NotNil(t, e2)
	must.Eq(t, e.ID, e2.ID)
	must.NotEq(t, token, token2)
	must.ErrorIs(t, b.Ack(e.ID, token), ErrTokenMismatch)
	must.NoError(t, b.Ack(e2.ID, token2))
}

func TestBroker_TouchKeepsDelivery(t *testing.T) {
	b := testBroker(t, Config{NackTimeout: time.Hour})
	b.Enqueue(evalFor("a", "web", 50, 1))
	e, token := dequeue(t, b, services)
	must.NoError(t, b.Touch(e.ID, token))
	must.ErrorIs(t, b.Touch(e.ID, "other"), ErrTokenMismatch)
	must.Eq(t, 1, b.Stats().TotalUnacked)
	must.NoError(t, b.Ack(e.ID, token))
}

func TestBroker_NackDelay(t *testing.T) {
	b := testBroker(t, Config{InitialNackDelay: 50 * time.Millisecond, SubsequentNackDelay: time.Hour})
	b.Enqueue(evalFor("a", "web", 50, 1))
	e, token := dequeue(t, b, services)
	must.NoError(t, b.Nack(e.ID, token))
	must.Eq(t, 1, b.Stats().TotalWaiting)
	e, token = dequeue(t, b, services) // after the initial delay
	must.NoError(t, b.Nack(e.ID, token))
	// The second delay is long: nothing comes back soon.
	mustEmpty(t, b, services)
	must.Eq(t, 1, b.Stats().TotalWaiting)
}

func TestBroker_DeliveryLimitGoesToFailedQueue(t *testing.T) {
	b := testBroker(t, Config{DeliveryLimit: 3})
	b.Enqueue(evalFor("a", "web", 50, 1))
	b.Enqueue(evalFor("later", "web", 50, 2))
	for i := range 3 {
		e, token := dequeue(t, b, services)
		must.Eq(t, "a", e.ID, must.Sprintf("delivery %d", i+1))
		must.NoError(t, b.Nack(e.ID, token))
	}
	// Not delivered to a scheduler a fourth time, and the job's next one still waits.
	mustEmpty(t, b, services)
	must.Eq(t, 1, b.Stats().ByScheduler[FailedQueue])
	e, token := dequeue(t, b, []string{FailedQueue})
	must.Eq(t, "a", e.ID)
	must.NoError(t, b.Ack(e.ID, token))
	e, token = dequeue(t, b, services)
	must.Eq(t, "later", e.ID)
	must.NoError(t, b.Ack(e.ID, token))
}

func TestBroker_WaitUntilHeldUntilDue(t *testing.T) {
	now := time.Now()
	b := testBroker(t, Config{Now: func() time.Time { return now }})
	delayed := evalFor("delayed", "web", 90, 1)
	delayed.WaitUntil = now.Add(80 * time.Millisecond)
	due := evalFor("due", "api", 10, 2)
	due.WaitUntil = now.Add(-time.Minute)
	b.Enqueue(delayed)
	b.Enqueue(due)
	must.Eq(t, 1, b.Stats().TotalWaiting)
	e, token := dequeue(t, b, services)
	must.Eq(t, "due", e.ID)
	must.NoError(t, b.Ack(e.ID, token))
	e, token = dequeue(t, b, services)
	must.Eq(t, "delayed", e.ID)
	must.NoError(t, b.Ack(e.ID, token))
}

func TestBroker_DisableEmptiesAndWakesWaiters(t *testing.T) {
	b := testBroker(t, Config{NackTimeout: 20 * time.Millisecond})
	held := evalFor("held", "api", 50, 1)
	held.WaitUntil = time.Now().Add(30 * time.Millisecond)
	b.Enqueue(held)
	b.Enqueue(evalFor("a", "web", 50, 2))
	b.Enqueue(evalFor("b", "web", 50, 3))
	e, token := dequeue(t, b, services)

	var wg sync.WaitGroup
	errs := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _, err := b.Dequeue(context.Background(), []string{structs.JobTypeBatch}, 0)
		errs <- err
	}()
	b.SetEnabled(false)
	wg.Wait()
	must.ErrorIs(t, <-errs, ErrNotEnabled)
	must.ErrorIs(t, b.Ack(e.ID, token), ErrNotEnabled)
	b.Enqueue(evalFor("ignored", "x", 50, 4))

	// A new term starts empty, and timers of the old one (the delayed evaluation, the nack
	// timeout) deliver nothing into it.
	b.SetEnabled(true)
	must.Eq(t, Stats{ByScheduler: map[string]int{}}, b.Stats())
	mustEmpty(t, b, services)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return time.Now().After(held.WaitUntil.Add(20 * time.Millisecond))
	}), wait.Timeout(time.Second), wait.Gap(5*time.Millisecond)))
	mustEmpty(t, b, services)
}

func TestBroker_DequeueHonoursContext(t *testing.T) {
	b := testBroker(t, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := b.Dequeue(ctx, services, 0)
	must.ErrorIs(t, err, context.Canceled)
}

// TestBroker_ConcurrentWorkers: many workers, many jobs: every evaluation is delivered, and
// never two of one job at once.
func TestBroker_ConcurrentWorkers(t *testing.T) {
	b := testBroker(t, Config{})
	const jobs, perJob = 10, 20
	for i := range perJob {
		for j := range jobs {
			b.Enqueue(evalFor(fmt.Sprintf("e-%d-%d", j, i), fmt.Sprintf("job-%d", j), 50, uint64(i*jobs+j)))
		}
	}
	var mu sync.Mutex
	running := map[string]bool{}
	seen := map[string]bool{}
	var overlap bool
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				e, token, err := b.Dequeue(ctx, services, 200*time.Millisecond)
				if err != nil || e == nil {
					return
				}
				mu.Lock()
				overlap = overlap || running[e.JobID]
				running[e.JobID] = true
				seen[e.ID] = true
				mu.Unlock()
				mu.Lock()
				running[e.JobID] = false
				mu.Unlock()
				_ = b.Ack(e.ID, token)
			}
		}()
	}
	wg.Wait()
	must.False(t, overlap)
	must.MapLen(t, jobs*perJob, seen)
}

// TestBroker_EndedContextTakesNothing: a caller whose context has ended (a worker of a paused
// pool) takes no evaluation, even one that is ready, and leaves it for the next caller.
func TestBroker_EndedContextTakesNothing(t *testing.T) {
	b := testBroker(t, Config{})
	b.Enqueue(evalFor("ready", "j1", 50, 1))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e, _, err := b.Dequeue(ctx, services, time.Second)
	must.ErrorIs(t, err, context.Canceled)
	must.Nil(t, e)
	e, _ = dequeue(t, b, services)
	must.Eq(t, "ready", e.ID)
}
