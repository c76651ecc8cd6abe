package evalbroker

import (
	"container/heap"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hashicorp/go-uuid"
	"github.com/nomadfork/nomad/structs"
)

// FailedQueue is the queue of evaluations that reached the delivery limit. The leader
// dequeues it like a scheduler type, marks each evaluation failed with a follow-up through
// Raft, and acknowledges it.
const FailedQueue = "_failed"

// Errors the broker returns; callers test them with errors.Is.
var (
	ErrNotEnabled     = errors.New("evaluation broker disabled")
	ErrNotOutstanding = errors.New("evaluation is not outstanding")
	ErrTokenMismatch  = errors.New("evaluation token does not match")
)

// Config tunes the broker; zero values take the defaults, which follow upstream's.
type Config struct {
	// DeliveryLimit is how many times an evaluation is delivered before it goes to the
	// FailedQueue (default 3).
	DeliveryLimit int
	// NackTimeout is how long a delivery may stay unacknowledged before it is taken back as
	// if nacked (default 60s).
	NackTimeout time.Duration
	// InitialNackDelay holds a nacked evaluation back before its second delivery, and
	// SubsequentNackDelay before each later one (defaults 1s and 20s), so that an evaluation
	// that fails because of the cluster's state does not spin.
	InitialNackDelay    time.Duration
	SubsequentNackDelay time.Duration
	// Now is the clock WaitUntil is compared with (default time.Now).
	Now func() time.Time
}

func (c Config) withDefaults() Config {
	if c.DeliveryLimit <= 0 {
		c.DeliveryLimit = 3
	}
	if c.NackTimeout <= 0 {
		c.NackTimeout = 60 * time.Second
	}
	if c.InitialNackDelay < 0 {
		c.InitialNackDelay = 0
	} else if c.InitialNackDelay == 0 {
		c.InitialNackDelay = time.Second
	}
	if c.SubsequentNackDelay < 0 {
		c.SubsequentNackDelay = 0
	} else if c.SubsequentNackDelay == 0 {
		c.SubsequentNackDelay = 20 * time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Stats counts what the broker holds, for the nomad.broker.* gauges.
type Stats struct {
	// TotalReady are evaluations waiting for a worker (the FailedQueue included).
	TotalReady int
	// TotalUnacked are delivered and not yet acknowledged.
	TotalUnacked int
	// TotalBlocked wait behind another evaluation of their job.
	TotalBlocked int
	// TotalWaiting wait for their WaitUntil or for a nack delay.
	TotalWaiting int
	// ByScheduler counts the ready evaluations per queue.
	ByScheduler map[string]int
}

// Broker is the leader's evaluation queue. The zero value is not usable: use New.
type Broker struct {
	cfg Config

	mu      sync.Mutex
	enabled bool
	// gen changes on every enable and disable, so a timer armed in an earlier term does
	// nothing when it fires.
	gen uint64
	// known holds every evaluation the broker has, in whatever stage, by ID.
	known map[string]*structs.Evaluation
	// ready holds the deliverable evaluations per queue (scheduler type or FailedQueue).
	ready map[string]*evalHeap
	// jobs names each job's outstanding evaluation; waiting holds the job's others.
	jobs    map[structs.NamespacedID]string
	waiting map[structs.NamespacedID]*evalHeap
	unack   map[string]*unacked
	// deliveries counts the deliveries of each evaluation the broker holds.
	deliveries map[string]int
	// timers hold evaluations until their WaitUntil or the end of a nack delay.
	timers map[string]*time.Timer
	// notify is closed (and replaced) whenever an evaluation becomes ready or the broker is
	// enabled or disabled, waking every Dequeue that waits.
	notify chan struct{}
}

type unacked struct {
	eval  *structs.Evaluation
	token string
	timer *time.Timer
}

// New returns a disabled broker.
func New(cfg Config) *Broker {
	b := &Broker{cfg: cfg.withDefaults(), notify: make(chan struct{})}
	b.resetLocked()
	return b
}

func (b *Broker) resetLocked() {
	b.known = map[string]*structs.Evaluation{}
	b.ready = map[string]*evalHeap{}
	b.jobs = map[structs.NamespacedID]string{}
	b.waiting = map[structs.NamespacedID]*evalHeap{}
	b.unack = map[string]*unacked{}
	b.deliveries = map[string]int{}
	b.timers = map[string]*time.Timer{}
}

// SetEnabled turns the broker on (leadership gained) or off (lost). Turning it off drops
// everything it holds, stops its timers and makes every waiting Dequeue return ErrNotEnabled.
func (b *Broker) SetEnabled(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.enabled == on {
		return
	}
	b.enabled = on
	b.gen++
	if !on {
		for _, t := range b.timers {
			t.Stop()
		}
		for _, u := range b.unack {
			u.timer.Stop()
		}
		b.resetLocked()
	}
	b.wakeLocked()
}

// Enabled reports whether the broker takes evaluations.
func (b *Broker) Enabled() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.enabled
}

// Enqueue adds a pending evaluation. It is a no-op while disabled and for an evaluation the
// broker already holds (the FSM hook and the leader's initial fill may both offer one). An
// evaluation with a WaitUntil in the future is held until then. eval is not modified and
// must not be modified by the caller afterwards (state rows are immutable).
func (b *Broker) Enqueue(eval *structs.Evaluation) {
	if eval == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.enabled || b.known[eval.ID] != nil {
		return
	}
	b.known[eval.ID] = eval
	if !eval.WaitUntil.IsZero() {
		if d := eval.WaitUntil.Sub(b.cfg.Now()); d > 0 {
			b.holdLocked(eval, d, b.admitLocked)
			return
		}
	}
	b.admitLocked(eval)
}

// admitLocked makes eval its job's outstanding evaluation, or has it wait behind the one
// that is.
func (b *Broker) admitLocked(eval *structs.Evaluation) {
	job := jobKey(eval)
	if out, ok := b.jobs[job]; ok && out != eval.ID {
		h := b.waiting[job]
		if h == nil {
			h = &evalHeap{}
			b.waiting[job] = h
		}
		heap.Push(h, eval)
		return
	}
	b.jobs[job] = eval.ID
	b.pushReadyLocked(eval, queueOf(eval))
}

func (b *Broker) pushReadyLocked(eval *structs.Evaluation, queue string) {
	h := b.ready[queue]
	if h == nil {
		h = &evalHeap{}
		b.ready[queue] = h
	}
	heap.Push(h, eval)
	b.wakeLocked()
}

func (b *Broker) wakeLocked() {
	close(b.notify)
	b.notify = make(chan struct{})
}

// holdLocked runs then(eval) under the lock after d, unless the broker was disabled (or
// disabled and enabled again) in between.
func (b *Broker) holdLocked(eval *structs.Evaluation, d time.Duration, then func(*structs.Evaluation)) {
	gen := b.gen
	b.timers[eval.ID] = time.AfterFunc(d, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.gen != gen || !b.enabled {
			return
		}
		delete(b.timers, eval.ID)
		then(eval)
	})
}

// Dequeue waits for the highest-priority ready evaluation of one of the queues (scheduler
// types, or FailedQueue) and delivers it with a token for Ack or Nack. It returns a nil
// evaluation when timeout (if positive) passes first, ctx's error when ctx ends, and
// ErrNotEnabled when the broker is or becomes disabled.
func (b *Broker) Dequeue(ctx context.Context, queues []string, timeout time.Duration) (*structs.Evaluation, string, error) {
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	for {
		b.mu.Lock()
		if !b.enabled {
			b.mu.Unlock()
			return nil, "", ErrNotEnabled
		}
		// Checked under the lock: a caller whose context ended before an evaluation was
		// enqueued never takes it (a paused worker pool is paused for what comes after).
		if err := ctx.Err(); err != nil {
			b.mu.Unlock()
			return nil, "", err
		}
		eval, token, err := b.popLocked(queues)
		if err != nil || eval != nil {
			b.mu.Unlock()
			return eval, token, err
		}
		wake := b.notify
		b.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, "", ctx.Err()
		case <-expired:
			return nil, "", nil
		case <-wake:
		}
	}
}

// popLocked delivers the best ready evaluation among queues: highest priority, then oldest
// (CreateIndex), then ID, whichever queue it is in.
func (b *Broker) popLocked(queues []string) (*structs.Evaluation, string, error) {
	var best *evalHeap
	for _, q := range queues {
		h := b.ready[q]
		if h == nil || h.Len() == 0 {
			continue
		}
		if best == nil || less((*h)[0], (*best)[0]) {
			best = h
		}
	}
	if best == nil {
		return nil, "", nil
	}
	token, err := uuid.GenerateUUID()
	if err != nil {
		return nil, "", err
	}
	eval := heap.Pop(best).(*structs.Evaluation)
	b.deliveries[eval.ID]++
	gen := b.gen
	b.unack[eval.ID] = &unacked{eval: eval, token: token, timer: time.AfterFunc(b.cfg.NackTimeout, func() {
		b.nackTimeout(eval.ID, token, gen)
	})}
	return eval, token, nil
}

// Ack records that the evaluation delivered with token was processed: the broker forgets it
// and releases its job's next evaluation.
func (b *Broker) Ack(evalID, token string) error {
	return b.withDelivery(evalID, token, func(u *unacked) error {
		b.endDeliveryLocked(u)
		delete(b.known, evalID)
		delete(b.deliveries, evalID)
		job := jobKey(u.eval)
		if b.jobs[job] != evalID {
			return nil
		}
		delete(b.jobs, job)
		if h := b.waiting[job]; h != nil && h.Len() > 0 {
			next := heap.Pop(h).(*structs.Evaluation)
			if h.Len() == 0 {
				delete(b.waiting, job)
			}
			b.jobs[job] = next.ID
			b.pushReadyLocked(next, queueOf(next))
		}
		return nil
	})
}

// Nack gives the evaluation delivered with token back: it is delivered again after a nack
// delay, or goes to the FailedQueue once it has been delivered DeliveryLimit times. Its job's
// other evaluations keep waiting meanwhile.
func (b *Broker) Nack(evalID, token string) error {
	return b.withDelivery(evalID, token, func(u *unacked) error {
		b.endDeliveryLocked(u)
		b.requeueLocked(u.eval)
		return nil
	})
}

// Touch restarts the nack timeout of a delivery that is still being worked on (a large plan
// going through the applier).
func (b *Broker) Touch(evalID, token string) error {
	return b.withDelivery(evalID, token, func(u *unacked) error {
		if !u.timer.Stop() {
			// The timeout is firing: it takes the delivery back as soon as we unlock.
			return ErrNotOutstanding
		}
		gen := b.gen
		u.timer = time.AfterFunc(b.cfg.NackTimeout, func() { b.nackTimeout(evalID, token, gen) })
		return nil
	})
}

// withDelivery runs f, under the lock, on the outstanding delivery of evalID made with token;
// a delivery that is not outstanding (or a broker that is off) is refused before f.
func (b *Broker) withDelivery(evalID, token string, f func(u *unacked) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	u, err := b.outstandingLocked(evalID, token)
	if err != nil {
		return err
	}
	return f(u)
}

// endDeliveryLocked ends an outstanding delivery: its nack timeout will not fire.
func (b *Broker) endDeliveryLocked(u *unacked) {
	u.timer.Stop()
	delete(b.unack, u.eval.ID)
}

// Outstanding returns the token of the evaluation's current delivery.
func (b *Broker) Outstanding(evalID string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	u := b.unack[evalID]
	if u == nil {
		return "", false
	}
	return u.token, true
}

func (b *Broker) outstandingLocked(evalID, token string) (*unacked, error) {
	if !b.enabled {
		return nil, ErrNotEnabled
	}
	u := b.unack[evalID]
	if u == nil {
		return nil, ErrNotOutstanding
	}
	if u.token != token {
		return nil, ErrTokenMismatch
	}
	return u, nil
}

func (b *Broker) nackTimeout(evalID, token string, gen uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.gen != gen || !b.enabled {
		return
	}
	u := b.unack[evalID]
	if u == nil || u.token != token {
		return
	}
	delete(b.unack, evalID)
	b.requeueLocked(u.eval)
}

// requeueLocked puts a taken-back evaluation where it goes next. It keeps its job's slot.
func (b *Broker) requeueLocked(eval *structs.Evaluation) {
	n := b.deliveries[eval.ID]
	if n >= b.cfg.DeliveryLimit {
		b.pushReadyLocked(eval, FailedQueue)
		return
	}
	delay := b.cfg.SubsequentNackDelay
	if n <= 1 {
		delay = b.cfg.InitialNackDelay
	}
	if delay <= 0 {
		b.pushReadyLocked(eval, queueOf(eval))
		return
	}
	b.holdLocked(eval, delay, func(e *structs.Evaluation) { b.pushReadyLocked(e, queueOf(e)) })
}

// Stats counts what the broker holds.
func (b *Broker) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := Stats{TotalUnacked: len(b.unack), TotalWaiting: len(b.timers), ByScheduler: map[string]int{}}
	for q, h := range b.ready {
		s.TotalReady += h.Len()
		s.ByScheduler[q] = h.Len()
	}
	for _, h := range b.waiting {
		s.TotalBlocked += h.Len()
	}
	return s
}

func jobKey(e *structs.Evaluation) structs.NamespacedID {
	return structs.NamespacedID{Namespace: e.Namespace, ID: e.JobID}
}

// queueOf is the scheduler type that takes eval; an evaluation without one is a service's.
func queueOf(e *structs.Evaluation) string {
	if e.Type == "" {
		return structs.JobTypeService
	}
	return e.Type
}

// less orders evaluations for delivery: higher priority first, then the oldest.
func less(a, b *structs.Evaluation) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if a.CreateIndex != b.CreateIndex {
		return a.CreateIndex < b.CreateIndex
	}
	return a.ID < b.ID
}

type evalHeap []*structs.Evaluation

func (h evalHeap) Len() int           { return len(h) }
func (h evalHeap) Less(i, j int) bool { return less(h[i], h[j]) }
func (h evalHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *evalHeap) Push(x any)        { *h = append(*h, x.(*structs.Evaluation)) }
func (h *evalHeap) Pop() any {
	old := *h
	n := len(old)
	e := old[n-1]
	old[n-1] = nil
	*h = old[:n-1]
	return e
}
