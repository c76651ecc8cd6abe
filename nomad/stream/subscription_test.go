package stream

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadfork/nomad/structs"
)

// filterBatches is published before every filter case: two namespaces, non-namespaced
// objects, and evaluations that name their job only through FilterKeys.
func filterBatches() []*structs.Events {
	return []*structs.Events{
		batch(10,
			ev(structs.TopicJob, "default", "web"),
			ev(structs.TopicEvaluation, "default", "e1", "web", "d1"),
		),
		batch(11,
			ev(structs.TopicJob, "prod", "web"),
			ev(structs.TopicEvaluation, "prod", "e2", "web"),
		),
		batch(12,
			ev(structs.TopicJob, "default", "api"),
			ev(structs.TopicEvaluation, "default", "e3", "api"),
		),
		batch(13,
			ev(structs.TopicACLToken, "", "acc-1"),
			ev(structs.TopicNode, "", "web"),
		),
	}
}

func TestSubscription_Filter(t *testing.T) {
	cases := []struct {
		name      string
		topics    map[structs.Topic][]string
		namespace string
		want      []string
	}{
		{
			name:      "topic filter keeps only that topic",
			topics:    map[structs.Topic][]string{structs.TopicJob: {"*"}},
			namespace: "default",
			want:      []string{"10:Job/web", "12:Job/api"},
		},
		{
			name:      "key filter matches Key",
			topics:    map[structs.Topic][]string{structs.TopicJob: {"web"}},
			namespace: "default",
			want:      []string{"10:Job/web"},
		},
		{
			name:      "key filter matches FilterKeys",
			topics:    map[structs.Topic][]string{structs.TopicEvaluation: {"web"}},
			namespace: "default",
			want:      []string{"10:Evaluation/e1"},
		},
		{
			name:      "key filter matches a later FilterKey",
			topics:    map[structs.Topic][]string{structs.TopicEvaluation: {"d1"}},
			namespace: "*",
			want:      []string{"10:Evaluation/e1"},
		},
		{
			name:      "several keys of a topic are OR-ed",
			topics:    map[structs.Topic][]string{structs.TopicJob: {"web", "api"}},
			namespace: "default",
			want:      []string{"10:Job/web", "12:Job/api"},
		},
		{
			name: "several topics",
			topics: map[structs.Topic][]string{
				structs.TopicJob:      {"api"},
				structs.TopicACLToken: {"*"},
			},
			namespace: "default",
			want:      []string{"12:Job/api", "13:ACLToken/acc-1"},
		},
		{
			name:      "wildcard topic and key in every namespace gets everything",
			topics:    map[structs.Topic][]string{structs.TopicAll: {"*"}},
			namespace: "*",
			want: []string{
				"10:Job/web", "10:Evaluation/e1",
				"11:Job/web", "11:Evaluation/e2",
				"12:Job/api", "12:Evaluation/e3",
				"13:ACLToken/acc-1", "13:Node/web",
			},
		},
		{
			name:      "wildcard topic with a key matches it in every topic",
			topics:    map[structs.Topic][]string{structs.TopicAll: {"web"}},
			namespace: "*",
			want: []string{
				"10:Job/web", "10:Evaluation/e1",
				"11:Job/web", "11:Evaluation/e2",
				"13:Node/web",
			},
		},
		{
			name:      "namespace filter passes non-namespaced events",
			topics:    map[structs.Topic][]string{structs.TopicAll: {"*"}},
			namespace: "prod",
			want:      []string{"11:Job/web", "11:Evaluation/e2", "13:ACLToken/acc-1", "13:Node/web"},
		},
		{
			name:      "all namespaces",
			topics:    map[structs.Topic][]string{structs.TopicJob: {"web"}},
			namespace: "*",
			want:      []string{"10:Job/web", "11:Job/web"},
		},
		{
			name:      "unknown namespace still gets non-namespaced events",
			topics:    map[structs.Topic][]string{structs.TopicAll: {"*"}},
			namespace: "nope",
			want:      []string{"13:ACLToken/acc-1", "13:Node/web"},
		},
		{
			name:      "nothing matches",
			topics:    map[structs.Topic][]string{structs.TopicDeployment: {"*"}},
			namespace: "*",
			want:      nil,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newTestBroker(t, 100)
			for _, bt := range filterBatches() {
				b.Publish(bt)
			}
			req := &SubscribeRequest{Topics: tc.topics, Namespace: tc.namespace}
			sub := subscribe(t, b, req)
			b.Publish(fenceFor(req))
			must.Eq(t, tc.want, collect(t, sub))
		})
	}
}

// A subscriber that wants everything gets the published slice itself, not a copy per
// subscriber; a filtered batch is a new slice and leaves the published one intact.
func TestSubscription_FilterSharesUnfilteredBatches(t *testing.T) {
	b := newTestBroker(t, 10)
	all := subscribe(t, b, allReq(0))
	some := subscribe(t, b, &SubscribeRequest{
		Topics:    map[structs.Topic][]string{structs.TopicJob: {"*"}},
		Namespace: "*",
	})

	published := batch(5, ev(structs.TopicJob, "default", "web"), ev(structs.TopicNode, "", "n1"))
	b.Publish(published)

	got := mustNext(t, all)
	must.True(t, &got.Events[0] == &published.Events[0])

	filtered := mustNext(t, some)
	must.SliceLen(t, 1, filtered.Events)
	must.Eq(t, uint64(5), filtered.Index)
	must.SliceLen(t, 2, published.Events)
}

func TestEventBroker_SubscribeValidation(t *testing.T) {
	cases := []struct {
		name string
		req  *SubscribeRequest
	}{
		{name: "nil request", req: nil},
		{name: "no topics", req: &SubscribeRequest{Namespace: "default"}},
		{
			name: "no namespace",
			req:  &SubscribeRequest{Topics: map[structs.Topic][]string{structs.TopicJob: {"*"}}},
		},
		{
			name: "topic without keys",
			req: &SubscribeRequest{
				Topics:    map[structs.Topic][]string{structs.TopicJob: {}},
				Namespace: "default",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newTestBroker(t, 10)
			sub, err := b.Subscribe(tc.req)
			must.Error(t, err)
			must.Nil(t, sub)
			must.Eq(t, http.StatusBadRequest, structs.ErrorCode(err))
			must.Eq(t, 0, b.numSubscriptions())
		})
	}
}

// The caller's request may be reused after Subscribe without changing the subscription.
func TestEventBroker_SubscribeCopiesRequest(t *testing.T) {
	b := newTestBroker(t, 10)
	req := &SubscribeRequest{
		Topics:    map[structs.Topic][]string{structs.TopicJob: {"web"}},
		Namespace: "default",
	}
	sub := subscribe(t, b, req)
	req.Topics[structs.TopicJob][0] = "api"
	req.Topics[structs.TopicNode] = []string{"*"}
	req.Namespace = "*"

	publishIndexes(b, 1)
	b.Publish(batch(2, ev(structs.TopicJob, "default", "api"), ev(structs.TopicNode, "", "n1")))
	b.Publish(batch(3, ev(structs.TopicJob, "default", "web")))
	mustNextIndexes(t, sub, 1, 3)
}

func TestSubscribeRequest_StringOmitsToken(t *testing.T) {
	req := SubscribeRequest{
		Topics:          map[structs.Topic][]string{structs.TopicJob: {"*"}},
		Namespace:       "default",
		Token:           "secret-3f1c",
		TokenAccessorID: "accessor-9a2b",
	}
	for _, format := range []string{"%v", "%+v", "%s", "%#v"} {
		t.Run(format, func(t *testing.T) {
			for _, out := range []string{fmt.Sprintf(format, req), fmt.Sprintf(format, &req)} {
				must.StrNotContains(t, out, "secret-3f1c")
				must.StrContains(t, out, "accessor-9a2b")
			}
		})
	}
}
