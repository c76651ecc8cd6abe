package stream

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/nomadfork/nomad/structs"
)

// Subscription follows the broker's buffer from a cursor. Next must be called from one
// goroutine at a time; Unsubscribe and the broker's close calls may come from any goroutine.
type Subscription struct {
	broker *EventBroker
	req    SubscribeRequest // private copy; read-only after Subscribe
	filter *eventFilter

	// Owned by the goroutine calling Next.
	cursor *bufferItem // last item passed over; its successor is read next
	// startAfter is the requested Index: batches up to it are passed over until the
	// subscription is positioned, i.e. has read its first batch past it. From then on every
	// batch is considered in list order, so a batch published out of Index order is never
	// skipped.
	startAfter uint64
	positioned bool
	// gap is set when batches the subscriber was owed were dropped; TakeGap hands it out.
	gap *structs.EventGap

	closeOnce sync.Once
	closeErr  error // written once before closed is closed
	closed    chan struct{}
}

// Next blocks until a batch with at least one event that passes the filter is published, and
// returns only those events. Batches are returned in publish order and never twice.
//
// It returns ctx's error when ctx is done, the close error once the subscription was closed
// (ErrSubscriptionClosed, or ErrSlowSubscriber), and ErrSlowSubscriber when batches it had not
// yet read were dropped from the buffer. The start position is fixed when the first batch past
// the requested index is read: if batches after that index were dropped before then, a
// subscription without StartExactlyAtIndex starts at the oldest retained batch, like a request
// for an index older than the buffer.
//
// The returned events and their payloads are shared with other subscribers: read-only.
func (s *Subscription) Next(ctx context.Context) (structs.Events, error) {
	for {
		item, err := s.advance(ctx)
		if err != nil {
			return structs.Events{}, err
		}
		if out, ok := item.filteredFor(s.filter); ok {
			return out, nil
		}
	}
}

// NextEncoded is Next for streams that send JSON: it returns the batch's filtered events as
// one JSON object and a newline, `{"Index":N,"Events":[...]}`. The bytes are encoded once per
// batch and subscriber view (topics, keys and namespace) and shared by every subscription
// with that view, so a thousand subscribers of one topic cost one encoding: read-only.
func (s *Subscription) NextEncoded(ctx context.Context) ([]byte, error) {
	for {
		item, err := s.advance(ctx)
		if err != nil {
			return nil, err
		}
		line, err := item.encodedFor(s.filter)
		if err != nil {
			return nil, err
		}
		if line != nil {
			return line, nil
		}
	}
}

// advance moves the cursor to the next batch to consider, blocking until there is one.
func (s *Subscription) advance(ctx context.Context) (*bufferItem, error) {
	for {
		// A closed subscription stops at once, even with batches pending: it may have been
		// closed because its token no longer allows them.
		select {
		case <-s.closed:
			return nil, s.closeErr
		default:
		}

		wake := s.broker.wakeCh()
		next := s.cursor.next.Load()
		if next == nil {
			select {
			case <-s.cursor.ready:
				// Linked since the load above, or linked and then cut because the successor
				// was dropped (next is nil again): the check below tells which.
				next = s.cursor.next.Load()
			default:
				select {
				case <-wake:
					continue
				case <-s.closed:
					return nil, s.closeErr
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
		}

		// Items are only ever dropped from the head, so one comparison against the head
		// marker tells whether next is still retained.
		if head := s.broker.buf.head.Load(); next == nil || next.seq <= head.seq {
			// Once positioned, every dropped item is one the subscriber should have read.
			// Before that, only dropped batches past startAfter count (head's Index is the
			// newest dropped one; Raft indexes grow), and only an exact start must fail for
			// them: otherwise the stream starts at the oldest retained batch.
			if s.positioned || (s.req.StartExactlyAtIndex && head.events.Index > s.startAfter) {
				s.broker.logger.Warn("subscriber fell behind the event buffer, closing it",
					"accessor_id", s.req.TokenAccessorID, "dropped_through_index", head.events.Index)
				last := s.startAfter
				if s.positioned {
					last = s.cursor.events.Index
				}
				s.gap = &structs.EventGap{LastIndex: last, OldestIndex: s.broker.buf.oldestIndex(), Reason: structs.EventGapFellBehind}
				s.close(ErrSlowSubscriber)
				s.broker.remove(s)
				return nil, ErrSlowSubscriber
			}
			s.cursor = head
			continue
		}

		s.cursor = next
		if !s.positioned {
			if next.events.Index <= s.startAfter {
				continue
			}
			s.positioned = true
			// Dropped batches all precede next; head's Index is the newest of them. One past
			// the requested start means the subscriber would miss it without being told.
			if head := s.broker.buf.head.Load(); s.startAfter > 0 && head.events.Index > s.startAfter {
				s.gap = &structs.EventGap{LastIndex: s.startAfter, OldestIndex: next.events.Index, Reason: structs.EventGapIndexNotRetained}
			}
		}
		return next, nil
	}
}

// TakeGap returns, once, the gap found by the last Next or NextEncoded: when it is not nil the
// caller tells the subscriber before the batch that call returned (or, for ErrSlowSubscriber,
// instead of it). Call it from the goroutine that calls Next.
func (s *Subscription) TakeGap() *structs.EventGap {
	g := s.gap
	s.gap = nil
	return g
}

// Unsubscribe closes the subscription and releases its place in the broker. Next then
// returns ErrSubscriptionClosed. Safe to call more than once.
func (s *Subscription) Unsubscribe() {
	s.close(ErrSubscriptionClosed)
	s.broker.remove(s)
}

func (s *Subscription) close(err error) {
	s.closeOnce.Do(func() {
		s.closeErr = err
		close(s.closed)
	})
}

// String describes the request for logs without its secret token.
func (r SubscribeRequest) String() string {
	return fmt.Sprintf("SubscribeRequest{Topics:%v Namespace:%q Index:%d StartExactlyAtIndex:%t TokenAccessorID:%q}",
		r.Topics, r.Namespace, r.Index, r.StartExactlyAtIndex, r.TokenAccessorID)
}

// GoString keeps %#v from printing the token too.
func (r SubscribeRequest) GoString() string { return r.String() }

// keySet is the key filter of one topic.
type keySet struct {
	all  bool
	keys map[string]struct{}
}

func (k *keySet) matches(e *structs.Event) bool {
	if k == nil {
		return false
	}
	if k.all {
		return true
	}
	if _, ok := k.keys[e.Key]; ok {
		return true
	}
	for _, fk := range e.FilterKeys {
		if _, ok := k.keys[fk]; ok {
			return true
		}
	}
	return false
}

// eventFilter is a SubscribeRequest compiled for matching.
type eventFilter struct {
	everything bool // topic "*" with key "*" in namespace "*": no event is filtered out
	// view names what passes the filter: subscriptions with equal views see equal events, so
	// they share the encoding of each batch.
	view      string
	namespace string
	topics    map[structs.Topic]*keySet
	anyTopic  *keySet // keys given for structs.TopicAll
}

func newEventFilter(req *SubscribeRequest) (*eventFilter, error) {
	if len(req.Topics) == 0 {
		return nil, structs.BadRequest("subscribe request has no topics")
	}
	if req.Namespace == "" {
		return nil, structs.BadRequest("subscribe request has no namespace")
	}
	f := &eventFilter{
		namespace: req.Namespace,
		topics:    make(map[structs.Topic]*keySet, len(req.Topics)),
	}
	for topic, keys := range req.Topics {
		if len(keys) == 0 {
			return nil, structs.BadRequest("topic %q has no keys", topic)
		}
		set := &keySet{keys: make(map[string]struct{}, len(keys))}
		for _, key := range keys {
			if key == "*" {
				set.all = true
			}
			set.keys[key] = struct{}{}
		}
		if topic == structs.TopicAll {
			f.anyTopic = set
		} else {
			f.topics[topic] = set
		}
	}
	f.everything = f.anyTopic != nil && f.anyTopic.all && f.namespace == structs.AllNamespacesSentinel
	f.view = viewOf(req)
	return f, nil
}

// viewOf is a canonical text of the request's filter: namespace, then each topic with its
// keys, both sorted and de-duplicated, every part length-prefixed so no two filters collide.
func viewOf(req *SubscribeRequest) string {
	var b strings.Builder
	part := func(s string) { fmt.Fprintf(&b, "%d:%s", len(s), s) }
	part(req.Namespace)
	topics := slices.Sorted(maps.Keys(req.Topics))
	for _, t := range topics {
		part(string(t))
		keys := slices.Compact(slices.Sorted(slices.Values(req.Topics[t])))
		fmt.Fprintf(&b, "[%d]", len(keys))
		for _, k := range keys {
			part(k)
		}
	}
	return b.String()
}

func (f *eventFilter) matches(e *structs.Event) bool {
	if f.namespace != structs.AllNamespacesSentinel && e.Namespace != "" && e.Namespace != f.namespace {
		return false
	}
	return f.anyTopic.matches(e) || f.topics[e.Topic].matches(e)
}

// apply returns the events of batch that pass the filter and whether there are any. When all
// pass, the batch's own slice is returned rather than a copy.
func (f *eventFilter) apply(batch structs.Events) (structs.Events, bool) {
	if f.everything {
		return batch, true
	}
	// Count first: most batches pass whole or not at all, and those cost no allocation.
	n := 0
	for i := range batch.Events {
		if f.matches(&batch.Events[i]) {
			n++
		}
	}
	switch n {
	case 0:
		return structs.Events{}, false
	case len(batch.Events):
		return batch, true
	}
	kept := make([]structs.Event, 0, n)
	for i := range batch.Events {
		if f.matches(&batch.Events[i]) {
			kept = append(kept, batch.Events[i])
		}
	}
	return structs.Events{Index: batch.Index, Events: kept}, true
}
