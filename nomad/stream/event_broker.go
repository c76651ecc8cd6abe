package stream

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/nomadfork/nomad/structs"
)

// DefaultEventBufferSize is the number of batches retained when the configuration leaves it
// unset; it matches the default of the server option event_buffer_size.
const DefaultEventBufferSize = 100

var (
	// ErrSubscriptionClosed ends a subscription the server closed: its token was deleted or
	// expired, an ACL change no longer allows it, it was unsubscribed, or the broker stopped.
	// The text is what Nomad clients see; keep it.
	ErrSubscriptionClosed = errors.New("subscription closed by server, client should resubscribe")

	// ErrSlowSubscriber ends a subscription that fell so far behind that batches it had not yet
	// read were dropped from the buffer. Resubscribing from the last index received continues
	// from the oldest batch still retained.
	ErrSlowSubscriber = errors.New("subscriber fell behind the event buffer and missed events; resubscribe from the last index received")

	// ErrIndexNotRetained refuses a SubscribeRequest with StartExactlyAtIndex when batches
	// after the requested index were already dropped from the buffer.
	ErrIndexNotRetained = errors.New("events after the requested index are no longer in the event buffer")
)

// EventBrokerConfig configures NewEventBroker.
type EventBrokerConfig struct {
	// EventBufferSize is how many batches (one per Raft apply, not per event) are retained for
	// subscribers to catch up on; DefaultEventBufferSize when <= 0.
	EventBufferSize int64
	Logger          hclog.Logger
	// WakeInterval is the most time between two wake-ups of waiting subscribers while
	// batches keep coming; batches published in between are read in one go. The pause
	// actually taken grows with the number of subscriptions, wakeCostPerSubscription each,
	// up to this. 0 uses DefaultWakeInterval; negative wakes them on every publish.
	WakeInterval time.Duration
}

// DefaultWakeInterval bounds how often waiting subscribers are woken while batches keep
// coming: a thousand subscribers woken on every one of a thousand writes a second would take
// the cores the writes need. A batch published after a quiet spell is delivered at once.
const DefaultWakeInterval = 10 * time.Millisecond

// wakeCostPerSubscription is the pause between wake-ups each subscription adds: waking one
// costs a few microseconds of CPU, so pausing a multiple of that keeps the share of the
// machine spent on wake-ups the same whatever the number of subscribers — one subscriber is
// woken at once, a thousand every 10 ms.
const wakeCostPerSubscription = 10 * time.Microsecond

// EventBroker fans published event batches out to subscriptions.
//
// Lock order: EventBroker.mu may be held while closing a Subscription (which takes only the
// subscription's sync.Once); nothing takes EventBroker.mu while holding the buffer's lock.
type EventBroker struct {
	buf    *eventBuffer
	logger hclog.Logger

	mu         sync.Mutex
	subs       map[*Subscription]struct{}
	byAccessor map[string]map[*Subscription]struct{}
	stopped    bool

	// wake is closed (and replaced) by the waker goroutine after publishes; subscribers with
	// nothing to read wait on it. published carries one pending "something was published"
	// signal, so Publish never blocks and never wakes anyone itself.
	wake      atomic.Pointer[chan struct{}]
	published chan struct{}
	wakeEvery time.Duration
	wakerDone chan struct{}
	// numSubs mirrors len(subs) for the waker, which must not take mu.
	numSubs atomic.Int64
	// unpublishedThrough is the highest index whose events this broker never saw: the state
	// was restored from a snapshot at that index (at start, or a follower catching up), so
	// the transactions up to it were never applied here and published nothing. A subscriber
	// that must not lose events (an event sink) compares its cursor with it, since the buffer
	// alone cannot tell "never published" from "nothing happened".
	unpublishedThrough atomic.Uint64
}

// MarkUnpublishedThrough records that events up to index were never published to this broker
// (the FSM restored a snapshot at index). It only moves forward.
func (b *EventBroker) MarkUnpublishedThrough(index uint64) {
	for {
		cur := b.unpublishedThrough.Load()
		if index <= cur || b.unpublishedThrough.CompareAndSwap(cur, index) {
			return
		}
	}
}

// UnpublishedThrough is the highest index MarkUnpublishedThrough recorded, 0 when the broker
// has seen every transaction since the state was empty.
func (b *EventBroker) UnpublishedThrough() uint64 { return b.unpublishedThrough.Load() }

// NewEventBroker returns a broker whose subscriptions are all closed with
// ErrSubscriptionClosed once ctx is done.
func NewEventBroker(ctx context.Context, cfg EventBrokerConfig) *EventBroker {
	size := cfg.EventBufferSize
	if size <= 0 {
		size = DefaultEventBufferSize
	}
	logger := cfg.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	wakeEvery := cfg.WakeInterval
	if wakeEvery == 0 {
		wakeEvery = DefaultWakeInterval
	}
	b := &EventBroker{
		buf:        newEventBuffer(size),
		logger:     logger.Named("event_broker"),
		subs:       make(map[*Subscription]struct{}),
		byAccessor: make(map[string]map[*Subscription]struct{}),
		published:  make(chan struct{}, 1),
		wakeEvery:  wakeEvery,
		wakerDone:  make(chan struct{}),
	}
	first := make(chan struct{})
	b.wake.Store(&first)
	go b.runWaker(ctx)
	context.AfterFunc(ctx, b.stop)
	return b
}

// runWaker wakes the waiting subscribers after publishes, at most once per wakeEvery, off the
// publisher's goroutine: readying a thousand waiters is work the FSM must not do. It ends with
// ctx; the broker's subscriptions are closed then, so nobody waits on wake any more.
func (b *EventBroker) runWaker(ctx context.Context) {
	defer close(b.wakerDone)
	var pause *time.Timer
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.published:
		}
		next := make(chan struct{})
		close(*b.wake.Swap(&next))
		wait := min(b.wakeEvery, time.Duration(b.numSubs.Load())*wakeCostPerSubscription)
		if wait <= 0 {
			continue
		}
		if pause == nil {
			pause = time.NewTimer(wait)
		} else {
			pause.Reset(wait)
		}
		select {
		case <-ctx.Done():
			pause.Stop()
			return
		case <-pause.C:
		}
	}
}

// wakeCh is the channel that is closed at the next wake-up. A subscriber loads it before it
// looks for a batch, so a batch published after the look is followed by a close it sees.
func (b *EventBroker) wakeCh() <-chan struct{} { return *b.wake.Load() }

// Publish appends one batch to the buffer, dropping the oldest batch when the buffer is full.
// It never waits on subscribers: it is called from the FSM. The broker takes ownership of
// events; neither the slice nor the payloads may be modified afterwards, since subscribers
// share them. Empty batches are ignored.
func (b *EventBroker) Publish(events *structs.Events) {
	if events == nil || len(events.Events) == 0 {
		return
	}
	b.buf.append(*events)
	select {
	case b.published <- struct{}{}:
	default: // a wake-up is already pending; it will cover this batch too
	}
}

// Len reports how many batches are retained.
func (b *EventBroker) Len() int { return b.buf.len() }

// SubscribeRequest selects the events a subscription receives.
type SubscribeRequest struct {
	// Topics maps each topic to the keys wanted; a key matches an event's Key or any of its
	// FilterKeys, and the key "*" matches every event of the topic. The topic structs.TopicAll
	// applies its keys to every topic.
	Topics map[structs.Topic][]string
	// Namespace is the namespace whose events are wanted, or "*" for all. Events with an
	// empty Namespace (objects outside namespaces) pass any namespace filter.
	Namespace string
	// Index is the last index the subscriber received: it gets batches with a greater Index.
	// 0 starts at the oldest retained batch. When batches after Index were already dropped,
	// the subscription starts at the oldest retained batch (Nomad's behaviour), unless
	// StartExactlyAtIndex is set, in which case Subscribe fails with ErrIndexNotRetained.
	Index               uint64
	StartExactlyAtIndex bool
	// Token is the caller's secret, kept only so that CheckSubscriptionsAgainst can
	// re-evaluate the subscription's ACL. Never log it; String omits it.
	Token string
	// TokenAccessorID identifies the subscription for CloseSubscriptionsForTokens; empty
	// when ACLs are disabled.
	TokenAccessorID string
}

// Subscribe registers a subscription. It takes no ACL decision: the caller authorises req
// first. The caller must Unsubscribe when it stops reading (a subscription the server closed
// is already released, but Unsubscribe is harmless then).
func (b *EventBroker) Subscribe(req *SubscribeRequest) (*Subscription, error) {
	if req == nil {
		return nil, structs.BadRequest("missing subscribe request")
	}
	filter, err := newEventFilter(req)
	if err != nil {
		return nil, err
	}

	head := b.buf.head.Load()
	if head.events.Index > req.Index {
		// head.events.Index is the newest dropped batch: something after req.Index is gone.
		if req.StartExactlyAtIndex {
			return nil, ErrIndexNotRetained
		}
		if req.Index > 0 {
			b.logger.Debug("requested index is older than the event buffer, starting at the oldest retained batch",
				"requested_index", req.Index, "dropped_through_index", head.events.Index)
		}
	}

	stored := *req
	stored.Topics = maps.Clone(req.Topics)
	for topic, keys := range stored.Topics {
		stored.Topics[topic] = slices.Clone(keys)
	}
	sub := &Subscription{
		broker:     b,
		req:        stored,
		filter:     filter,
		cursor:     head,
		startAfter: req.Index,
		closed:     make(chan struct{}),
	}

	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return nil, ErrSubscriptionClosed
	}
	b.subs[sub] = struct{}{}
	b.numSubs.Store(int64(len(b.subs)))
	if id := stored.TokenAccessorID; id != "" {
		if b.byAccessor[id] == nil {
			b.byAccessor[id] = make(map[*Subscription]struct{})
		}
		b.byAccessor[id][sub] = struct{}{}
	}
	return sub, nil
}

// CloseSubscriptionsForTokens closes, with ErrSubscriptionClosed, every subscription made with
// one of the given token accessor IDs; call it when tokens are deleted or expire.
func (b *EventBroker) CloseSubscriptionsForTokens(accessorIDs []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, id := range accessorIDs {
		for sub := range b.byAccessor[id] {
			b.removeLocked(sub)
			sub.close(ErrSubscriptionClosed)
		}
	}
}

// CheckSubscriptionsAgainst closes, with ErrSubscriptionClosed, every subscription for which
// allowed returns false; call it after an ACL policy, role or token changed. allowed is called
// without broker locks held, so it may resolve tokens against state; it must treat the
// request as read-only.
func (b *EventBroker) CheckSubscriptionsAgainst(allowed func(req *SubscribeRequest) bool) {
	b.mu.Lock()
	subs := slices.Collect(maps.Keys(b.subs))
	b.mu.Unlock()

	var denied []*Subscription
	for _, sub := range subs {
		req := sub.req
		if !allowed(&req) {
			denied = append(denied, sub)
		}
	}
	if len(denied) == 0 {
		return
	}

	b.mu.Lock()
	defer b.mu.Unlock()
	for _, sub := range denied {
		b.removeLocked(sub)
		sub.close(ErrSubscriptionClosed)
	}
}

// stop closes every subscription and refuses new ones.
func (b *EventBroker) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopped = true
	for sub := range b.subs {
		sub.close(ErrSubscriptionClosed)
	}
	clear(b.subs)
	b.numSubs.Store(0)
	clear(b.byAccessor)
}

func (b *EventBroker) remove(sub *Subscription) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.removeLocked(sub)
}

func (b *EventBroker) removeLocked(sub *Subscription) {
	delete(b.subs, sub)
	b.numSubs.Store(int64(len(b.subs)))
	id := sub.req.TokenAccessorID
	if set, ok := b.byAccessor[id]; ok {
		delete(set, sub)
		if len(set) == 0 {
			delete(b.byAccessor, id)
		}
	}
}
