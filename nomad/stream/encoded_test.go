package stream

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadfork/nomad/structs"
)

func nextEncoded(t testing.TB, sub *Subscription) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	line, err := sub.NextEncoded(ctx)
	must.NoError(t, err)
	return line
}

// Subscribers with the same view share one encoding of each batch; another view gets its own,
// and each is exactly the JSON of what Next would have returned.
func TestNextEncoded_OneEncodingPerView(t *testing.T) {
	broker := newTestBroker(t, 10)
	jobsWeb := func() *SubscribeRequest {
		return &SubscribeRequest{Topics: map[structs.Topic][]string{structs.TopicJob: {"web"}}, Namespace: "default"}
	}
	// The same view spelled differently: keys repeated and in another order.
	sameView := &SubscribeRequest{Topics: map[structs.Topic][]string{structs.TopicJob: {"web", "web"}}, Namespace: "default"}
	a, b, c := subscribe(t, broker, jobsWeb()), subscribe(t, broker, sameView), subscribe(t, broker, allReq(0))
	plain := subscribe(t, broker, jobsWeb())

	broker.Publish(batch(7, ev(structs.TopicJob, "default", "web"), ev(structs.TopicJob, "default", "api")))

	la, lb, lc := nextEncoded(t, a), nextEncoded(t, b), nextEncoded(t, c)
	must.True(t, &la[0] == &lb[0], must.Sprint("subscribers of one view did not share the encoded bytes"))
	must.False(t, &la[0] == &lc[0])

	want, err := json.Marshal(mustNext(t, plain))
	must.NoError(t, err)
	must.Eq(t, string(want)+"\n", string(la))

	var all structs.Events
	must.NoError(t, json.Unmarshal(lc, &all))
	must.Len(t, 2, all.Events)
}

// A batch with nothing for the view is skipped, as Next skips it.
func TestNextEncoded_SkipsBatchesOutsideTheView(t *testing.T) {
	broker := newTestBroker(t, 10)
	sub := subscribe(t, broker, &SubscribeRequest{Topics: map[structs.Topic][]string{structs.TopicNode: {"*"}}, Namespace: "default"})
	broker.Publish(batch(1, ev(structs.TopicJob, "default", "web")))
	broker.Publish(batch(2, ev(structs.TopicNode, "", "n1")))
	var got structs.Events
	must.NoError(t, json.Unmarshal(nextEncoded(t, sub), &got))
	must.Eq(t, uint64(2), got.Index)
}

func TestViewOf_DistinctFiltersNeverCollide(t *testing.T) {
	cases := []struct {
		name string
		a, b *SubscribeRequest
	}{
		{
			name: "namespace",
			a:    &SubscribeRequest{Topics: map[structs.Topic][]string{structs.TopicJob: {"*"}}, Namespace: "a"},
			b:    &SubscribeRequest{Topics: map[structs.Topic][]string{structs.TopicJob: {"*"}}, Namespace: "b"},
		},
		{
			name: "key boundaries",
			a:    &SubscribeRequest{Topics: map[structs.Topic][]string{structs.TopicJob: {"a:1", "b"}}, Namespace: "x"},
			b:    &SubscribeRequest{Topics: map[structs.Topic][]string{structs.TopicJob: {"a", "1:b"}}, Namespace: "x"},
		},
		{
			name: "keys moved between topics",
			a:    &SubscribeRequest{Topics: map[structs.Topic][]string{structs.TopicJob: {"k"}, structs.TopicNode: {"*"}}, Namespace: "x"},
			b:    &SubscribeRequest{Topics: map[structs.Topic][]string{structs.TopicJob: {"k", "*"}, structs.TopicNode: {}}, Namespace: "x"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.NotEq(t, viewOf(tc.a), viewOf(tc.b))
		})
	}
}

// The waker goroutine belongs to the broker's context: it ends with it.
func TestEventBroker_WakerEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	b := NewEventBroker(ctx, EventBrokerConfig{EventBufferSize: 4})
	b.Publish(batch(1, ev(structs.TopicJob, "default", "web")))
	cancel()
	select {
	case <-b.wakerDone:
	case <-time.After(testTimeout):
		t.Fatal("the waker goroutine outlived the broker's context")
	}
}
