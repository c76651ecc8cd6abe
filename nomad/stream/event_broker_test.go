package stream

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadfork/nomad/structs"
)

func TestEventBroker_IndexResume(t *testing.T) {
	cases := []struct {
		name    string
		size    int64
		publish []uint64
		index   uint64
		exact   bool
		// then is published after subscribing, so a subscriber that is caught up can show
		// what it reads next.
		then    []uint64
		want    []uint64
		wantErr error
	}{
		{
			name: "index 0 starts at the oldest batch", size: 10,
			publish: []uint64{10, 20, 30}, index: 0, want: []uint64{10, 20, 30},
		},
		{
			name: "index 0 on an empty buffer waits for the first batch", size: 10,
			index: 0, then: []uint64{5}, want: []uint64{5},
		},
		{
			name: "index of a retained batch resumes after it", size: 10,
			publish: []uint64{10, 20, 30}, index: 10, want: []uint64{20, 30},
		},
		{
			name: "index between batches resumes at the next one", size: 10,
			publish: []uint64{10, 20, 30}, index: 15, want: []uint64{20, 30},
		},
		{
			name: "index of the newest batch waits for new ones", size: 10,
			publish: []uint64{10, 20, 30}, index: 30, then: []uint64{40}, want: []uint64{40},
		},
		{
			name: "index ahead of the buffer skips batches up to it", size: 10,
			publish: []uint64{10}, index: 25, then: []uint64{20, 30}, want: []uint64{30},
		},
		{
			name: "index 0 after drops starts at the oldest retained", size: 2,
			publish: []uint64{10, 20, 30, 40}, index: 0, want: []uint64{30, 40},
		},
		{
			name: "index older than the buffer starts at the oldest retained", size: 2,
			publish: []uint64{10, 20, 30, 40}, index: 10, want: []uint64{30, 40},
		},
		{
			name: "exact start at the newest dropped index", size: 2,
			publish: []uint64{10, 20, 30, 40}, index: 20, exact: true, want: []uint64{30, 40},
		},
		{
			name: "exact start survives drops of batches up to its index", size: 3,
			publish: []uint64{10, 20, 30}, index: 30, exact: true,
			then: []uint64{40, 50}, want: []uint64{40, 50},
		},
		{
			name: "exact start older than the buffer is refused", size: 2,
			publish: []uint64{10, 20, 30, 40}, index: 10, exact: true,
			wantErr: ErrIndexNotRetained,
		},
		{
			name: "exact start at 0 after drops is refused", size: 2,
			publish: []uint64{10, 20, 30}, index: 0, exact: true,
			wantErr: ErrIndexNotRetained,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newTestBroker(t, tc.size)
			publishIndexes(b, tc.publish...)

			req := allReq(tc.index)
			req.StartExactlyAtIndex = tc.exact
			sub, err := b.Subscribe(req)
			if tc.wantErr != nil {
				must.ErrorIs(t, err, tc.wantErr)
				must.Eq(t, 0, b.numSubscriptions())
				return
			}
			must.NoError(t, err)
			t.Cleanup(sub.Unsubscribe)

			publishIndexes(b, tc.then...)
			mustNextIndexes(t, sub, tc.want...)
		})
	}
}

func TestEventBroker_BufferBound(t *testing.T) {
	cases := []struct {
		name     string
		size     int64
		wantSize int
	}{
		{name: "configured size", size: 3, wantSize: 3},
		{name: "size one", size: 1, wantSize: 1},
		{name: "zero means the default", size: 0, wantSize: DefaultEventBufferSize},
		{name: "negative means the default", size: -4, wantSize: DefaultEventBufferSize},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newTestBroker(t, tc.size)
			must.Eq(t, 0, b.Len())
			for i := 1; i <= 3*tc.wantSize; i++ {
				publishIndexes(b, uint64(i))
				must.Eq(t, min(i, tc.wantSize), b.Len())
			}
			// Empty batches carry nothing to deliver and take no place.
			b.Publish(&structs.Events{Index: 99999})
			b.Publish(nil)
			must.Eq(t, tc.wantSize, b.Len())

			last := uint64(3 * tc.wantSize)
			mustNextIndexes(t, subscribe(t, b, allReq(0)), last-uint64(tc.wantSize)+1)
		})
	}
}

func TestSubscription_SlowSubscriber(t *testing.T) {
	cases := []struct {
		name  string
		exact bool
		// read is how many batches the subscriber reads before the burst.
		read int
		// burst is published while the subscriber is not reading.
		burst   []uint64
		want    []uint64
		wantErr error
	}{
		{
			name: "exactly a buffer behind loses nothing",
			read: 1, burst: []uint64{2, 3}, want: []uint64{2, 3},
		},
		{
			name: "more than a buffer behind after reading",
			read: 1, burst: []uint64{2, 3, 4}, wantErr: ErrSlowSubscriber,
		},
		{
			name: "more than a buffer behind before the first read starts at the oldest retained",
			read: 0, burst: []uint64{2, 3, 4}, want: []uint64{3, 4},
		},
		{
			name:  "exact start overtaken before the first read",
			exact: true, read: 0, burst: []uint64{2, 3, 4}, wantErr: ErrSlowSubscriber,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newTestBroker(t, 2)
			req := allReq(0)
			req.StartExactlyAtIndex = tc.exact
			sub := subscribe(t, b, req)

			publishIndexes(b, 1)
			for range tc.read {
				mustNext(t, sub)
			}
			publishIndexes(b, tc.burst...)

			if tc.wantErr == nil {
				mustNextIndexes(t, sub, tc.want...)
				return
			}
			_, err := next(t, sub)
			must.ErrorIs(t, err, tc.wantErr)
			must.Eq(t, 0, b.numSubscriptions())

			// The subscription stays failed, even though newer batches arrive.
			publishIndexes(b, 100)
			_, err = next(t, sub)
			must.ErrorIs(t, err, tc.wantErr)
		})
	}
}

// A slow subscriber that resubscribes from the last index it received continues with the
// oldest retained batch, as clients are told to do.
func TestSubscription_SlowSubscriberResubscribes(t *testing.T) {
	b := newTestBroker(t, 2)
	sub := subscribe(t, b, allReq(0))
	publishIndexes(b, 1)
	last := mustNext(t, sub).Index
	publishIndexes(b, 2, 3, 4)
	_, err := next(t, sub)
	must.ErrorIs(t, err, ErrSlowSubscriber)

	req := allReq(last)
	req.StartExactlyAtIndex = true
	_, err = b.Subscribe(req)
	must.ErrorIs(t, err, ErrIndexNotRetained)

	mustNextIndexes(t, subscribe(t, b, allReq(last)), 3, 4)
}

// Publish runs on the FSM's apply path: no number of idle subscribers may slow it down.
func TestEventBroker_PublishNeverBlocks(t *testing.T) {
	const size, subscribers = 10, 1000
	b := newTestBroker(t, size)

	idle := make([]*Subscription, subscribers)
	for i := range idle {
		idle[i] = subscribe(t, b, allReq(0))
	}
	// Half of them read once, so they have a position that the burst will drop.
	publishIndexes(b, 1)
	for _, sub := range idle[:subscribers/2] {
		mustNextIndexes(t, sub, 1)
	}

	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := uint64(1000); i < 1000+100*size; i++ {
			publishIndexes(b, i)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("Publish blocked on subscribers that do not read")
	}
	must.Eq(t, size, b.Len())

	_, err := next(t, idle[0])
	must.ErrorIs(t, err, ErrSlowSubscriber)
	got := mustNext(t, idle[subscribers-1])
	must.Eq(t, uint64(1000+99*size), got.Index)
}

// Subscribers blocked in Next are all woken by one publish, each getting the batch once.
func TestEventBroker_WakesBlockedSubscribers(t *testing.T) {
	const subscribers = 200
	b := newTestBroker(t, 10)
	subs := make([]*Subscription, subscribers)
	for i := range subs {
		subs[i] = subscribe(t, b, allReq(0))
	}

	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	results := make(chan error, subscribers)
	for _, sub := range subs {
		go func() {
			got, err := sub.Next(ctx)
			if err == nil && got.Index != 7 {
				err = errors.New("wrong batch")
			}
			results <- err
		}()
	}
	publishIndexes(b, 7)
	for range subscribers {
		must.NoError(t, <-results)
	}
}

func TestEventBroker_CloseSubscriptionsForTokens(t *testing.T) {
	b := newTestBroker(t, 10)
	withAccessor := func(id string) *Subscription {
		req := allReq(0)
		req.TokenAccessorID = id
		req.Token = "secret-" + id
		return subscribe(t, b, req)
	}
	a1, a2, other, noACL := withAccessor("a"), withAccessor("a"), withAccessor("b"), withAccessor("")

	// One of the closed subscriptions is blocked in Next when the token goes away.
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	blocked := make(chan error, 1)
	go func() {
		_, err := a1.Next(ctx)
		blocked <- err
	}()

	b.CloseSubscriptionsForTokens([]string{"a", "unknown"})
	must.ErrorIs(t, <-blocked, ErrSubscriptionClosed)

	// A closed subscription does not deliver what was published before the close either.
	publishIndexes(b, 1)
	_, err := next(t, a2)
	must.ErrorIs(t, err, ErrSubscriptionClosed)

	mustNextIndexes(t, other, 1)
	mustNextIndexes(t, noACL, 1)
	must.Eq(t, 2, b.numSubscriptions())
}

func TestEventBroker_CheckSubscriptionsAgainst(t *testing.T) {
	b := newTestBroker(t, 10)
	jobs := &SubscribeRequest{
		Topics:          map[structs.Topic][]string{structs.TopicJob: {"*"}},
		Namespace:       "default",
		Token:           "job-reader",
		TokenAccessorID: "acc-1",
	}
	tokens := &SubscribeRequest{
		Topics:          map[structs.Topic][]string{structs.TopicACLToken: {"*"}, structs.TopicJob: {"*"}},
		Namespace:       "default",
		Token:           "job-reader",
		TokenAccessorID: "acc-1",
	}
	mgmt := &SubscribeRequest{
		Topics:          map[structs.Topic][]string{structs.TopicACLToken: {"*"}},
		Namespace:       "*",
		Token:           "management",
		TokenAccessorID: "acc-2",
	}
	jobSub, tokenSub, mgmtSub := subscribe(t, b, jobs), subscribe(t, b, tokens), subscribe(t, b, mgmt)

	// The ACL decision after a policy change: job-reader lost access to ACL tokens.
	var seen []string
	b.CheckSubscriptionsAgainst(func(req *SubscribeRequest) bool {
		seen = append(seen, req.Token)
		if req.Token == "management" {
			return true
		}
		_, wantsTokens := req.Topics[structs.TopicACLToken]
		return !wantsTokens
	})
	slices.Sort(seen)
	must.Eq(t, []string{"job-reader", "job-reader", "management"}, seen)

	b.Publish(batch(1, ev(structs.TopicJob, "default", "web"), ev(structs.TopicACLToken, "", "acc-9")))
	mustNextIndexes(t, jobSub, 1)
	mustNextIndexes(t, mgmtSub, 1)
	_, err := next(t, tokenSub)
	must.ErrorIs(t, err, ErrSubscriptionClosed)
	must.Eq(t, 2, b.numSubscriptions())

	// Everything allowed: nothing more is closed.
	b.CheckSubscriptionsAgainst(func(*SubscribeRequest) bool { return true })
	must.Eq(t, 2, b.numSubscriptions())
}

func TestSubscription_Unsubscribe(t *testing.T) {
	b := newTestBroker(t, 10)
	sub := subscribe(t, b, allReq(0))
	kept := subscribe(t, b, allReq(0))
	publishIndexes(b, 1)

	sub.Unsubscribe()
	sub.Unsubscribe()
	_, err := next(t, sub)
	must.ErrorIs(t, err, ErrSubscriptionClosed)
	must.Eq(t, 1, b.numSubscriptions())
	mustNextIndexes(t, kept, 1)
}

func TestSubscription_NextHonoursContext(t *testing.T) {
	b := newTestBroker(t, 10)
	sub := subscribe(t, b, allReq(0))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := sub.Next(ctx)
	must.ErrorIs(t, err, context.Canceled)

	// The subscription is still usable afterwards.
	publishIndexes(b, 1)
	mustNextIndexes(t, sub, 1)
}

func TestEventBroker_StopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	b := NewEventBroker(ctx, EventBrokerConfig{EventBufferSize: 10})
	sub := subscribe(t, b, allReq(0))
	cancel()

	_, err := next(t, sub)
	must.ErrorIs(t, err, ErrSubscriptionClosed)
	must.Wait(t, wait.InitialSuccess(
		wait.BoolFunc(func() bool { return b.numSubscriptions() == 0 }),
		wait.Timeout(testTimeout),
		wait.Gap(time.Millisecond),
	))
	_, err = b.Subscribe(allReq(0))
	must.ErrorIs(t, err, ErrSubscriptionClosed)
}

// Concurrent publishers and readers, for the race detector: every reader sees every batch
// once, in publish order.
func TestEventBroker_Concurrent(t *testing.T) {
	const publishers, perPublisher, readers = 4, 200, 8
	b := newTestBroker(t, publishers*perPublisher)

	subs := make([]*Subscription, readers)
	for i := range subs {
		subs[i] = subscribe(t, b, allReq(0))
	}

	var order []uint64
	var orderMu sync.Mutex
	var pubs sync.WaitGroup
	for p := range publishers {
		pubs.Go(func() {
			for i := range perPublisher {
				idx := uint64(p*perPublisher + i + 1)
				// The lock only records the publish order for the assertion below.
				orderMu.Lock()
				publishIndexes(b, idx)
				order = append(order, idx)
				orderMu.Unlock()
			}
		})
	}

	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	got := make([][]uint64, readers)
	var reads sync.WaitGroup
	for i, sub := range subs {
		reads.Go(func() {
			for range publishers * perPublisher {
				events, err := sub.Next(ctx)
				if err != nil {
					return
				}
				got[i] = append(got[i], events.Index)
			}
		})
	}
	pubs.Wait()
	reads.Wait()
	for i := range got {
		must.Eq(t, order, got[i])
	}
}

// A subscriber that stops reading must not keep every later batch alive: once the batches
// after its position are dropped, the links from its position are cut.
func TestEventBroker_StalledSubscriberPinsOnlyItsPosition(t *testing.T) {
	const size = 3
	b := newTestBroker(t, size)
	positioned := subscribe(t, b, allReq(0))
	fresh := subscribe(t, b, allReq(0))
	publishIndexes(b, 1)
	mustNextIndexes(t, positioned, 1)

	for i := uint64(2); i <= 2+3*size; i++ {
		publishIndexes(b, i)
	}
	must.Nil(t, positioned.cursor.next.Load())
	must.Nil(t, fresh.cursor.next.Load())

	// Walking from the head reaches exactly the retained batches.
	var retained []uint64
	for item := b.buf.head.Load().next.Load(); item != nil; item = item.next.Load() {
		retained = append(retained, item.events.Index)
	}
	must.Eq(t, []uint64{9, 10, 11}, retained)

	_, err := next(t, positioned)
	must.ErrorIs(t, err, ErrSlowSubscriber)
	mustNextIndexes(t, fresh, 9, 10, 11)
}
