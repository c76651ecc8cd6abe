package stream

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadfork/nomad/structs"
)

// testTimeout bounds every wait in these tests; reaching it is a failure, never a pass.
const testTimeout = 5 * time.Second

func newTestBroker(t testing.TB, size int64) *EventBroker {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return NewEventBroker(ctx, EventBrokerConfig{EventBufferSize: size})
}

func ev(topic structs.Topic, ns, key string, filterKeys ...string) structs.Event {
	return structs.Event{Topic: topic, Type: "Test", Namespace: ns, Key: key, FilterKeys: filterKeys}
}

func batch(index uint64, events ...structs.Event) *structs.Events {
	for i := range events {
		events[i].Index = index
	}
	return &structs.Events{Index: index, Events: events}
}

// publishIndexes publishes one Job event per index.
func publishIndexes(b *EventBroker, indexes ...uint64) {
	for _, idx := range indexes {
		b.Publish(batch(idx, ev(structs.TopicJob, "default", "web")))
	}
}

func subscribe(t testing.TB, b *EventBroker, req *SubscribeRequest) *Subscription {
	t.Helper()
	sub, err := b.Subscribe(req)
	must.NoError(t, err)
	t.Cleanup(sub.Unsubscribe)
	return sub
}

func allReq(index uint64) *SubscribeRequest {
	return &SubscribeRequest{
		Topics:    map[structs.Topic][]string{structs.TopicAll: {"*"}},
		Namespace: "*",
		Index:     index,
	}
}

func next(t testing.TB, sub *Subscription) (structs.Events, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	got, err := sub.Next(ctx)
	must.False(t, errors.Is(err, context.DeadlineExceeded), must.Sprint("Next timed out"))
	return got, err
}

func mustNext(t testing.TB, sub *Subscription) structs.Events {
	t.Helper()
	got, err := next(t, sub)
	must.NoError(t, err)
	return got
}

// mustNextIndexes reads len(want) batches and checks their indexes.
func mustNextIndexes(t testing.TB, sub *Subscription, want ...uint64) {
	t.Helper()
	got := make([]uint64, 0, len(want))
	for range want {
		got = append(got, mustNext(t, sub).Index)
	}
	must.Eq(t, want, got)
}

// fenceIndex is published after a test's batches; reading it proves nothing else is pending.
const fenceIndex = 1 << 40

// fenceFor returns a batch the request is certain to receive: one non-namespaced event per
// requested topic, keyed with the first requested key.
func fenceFor(req *SubscribeRequest) *structs.Events {
	var events []structs.Event
	for topic, keys := range req.Topics {
		if topic == structs.TopicAll {
			topic = structs.TopicOperator
		}
		events = append(events, ev(topic, "", keys[0]))
	}
	return batch(fenceIndex, events...)
}

// collect reads until the fence and summarises every event before it as "index:Topic/key".
func collect(t testing.TB, sub *Subscription) []string {
	t.Helper()
	var got []string
	for {
		b := mustNext(t, sub)
		if b.Index == fenceIndex {
			return got
		}
		must.SliceNotEmpty(t, b.Events, must.Sprint("an empty batch was delivered"))
		for _, e := range b.Events {
			must.Eq(t, b.Index, e.Index)
			got = append(got, fmt.Sprintf("%d:%s/%s", b.Index, e.Topic, e.Key))
		}
	}
}

func (b *EventBroker) numSubscriptions() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}
