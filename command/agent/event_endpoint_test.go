package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// eventEnvelopeKeys are the keys of one event on the wire, in order, as upstream Nomad 2.0.5
// writes them (fixtures/upstream-nomad-2.0.5/event-stream-raw.ndjson).
var eventEnvelopeKeys = []string{"Topic", "Type", "Key", "Namespace", "FilterKeys", "Index", "Payload"}

// streamTimeout bounds every wait on an event stream; the agent answers in milliseconds, so
// reaching it means the event never came.
const streamTimeout = 10 * time.Second

// clientToken upserts a policy named name with rules and creates a client token holding it,
// through the official client as an operator would.
func clientToken(t *testing.T, ta *TestAgent, root, name, rules string) *api.ACLToken {
	t.Helper()
	c := ta.Client(root)
	_, err := c.ACLPolicies().Upsert(&api.ACLPolicy{Name: name, Rules: rules}, nil)
	must.NoError(t, err)
	tok, _, err := c.ACLTokens().Create(&api.ACLToken{Name: name, Type: "client", Policies: []string{name}}, nil)
	must.NoError(t, err)
	return tok
}

// nextIndex is the index of the next write: subscribing from it skips everything so far.
func nextIndex(ta *TestAgent) uint64 { return ta.Server().State().LatestIndex() + 1 }

// rawEventStream reads GET /v1/event/stream line by line, for what the official client hides:
// heartbeats, envelope keys and the final error line.
type rawEventStream struct {
	t     *testing.T
	lines <-chan string // closed when the body ends
}

// rawBatch is one non-heartbeat line, with its events kept as raw JSON.
type rawBatch struct {
	Index  uint64
	Events []json.RawMessage
}

// openRawEventStream opens a stream with query (already encoded). A refused request comes
// back as its status and body with a nil stream.
func openRawEventStream(t *testing.T, ta *TestAgent, token, query string) (int, string, *rawEventStream) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ta.URL()+"/v1/event/stream?"+query, nil)
	must.NoError(t, err)
	if token != "" {
		req.Header.Set("X-Nomad-Token", token)
	}
	resp, err := http.DefaultClient.Do(req)
	must.NoError(t, err)
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		must.NoError(t, err)
		return resp.StatusCode, string(body), nil
	}
	must.Eq(t, "application/json", resp.Header.Get("Content-Type"))
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	return resp.StatusCode, "", &rawEventStream{t: t, lines: lines}
}

// next returns the next line; ok is false when the stream ended.
func (s *rawEventStream) next() (line string, ok bool) {
	s.t.Helper()
	select {
	case line, ok = <-s.lines:
		return line, ok
	case <-time.After(streamTimeout):
		s.t.Fatalf("no line on the event stream within %s", streamTimeout)
		return "", false
	}
}

// nextBatch skips heartbeats and decodes the next batch line.
func (s *rawEventStream) nextBatch() (rawBatch, string) {
	s.t.Helper()
	for {
		line, ok := s.next()
		must.True(s.t, ok, must.Sprint("event stream ended while waiting for a batch"))
		if line == "{}" {
			continue
		}
		var b rawBatch
		must.NoError(s.t, json.Unmarshal([]byte(line), &b))
		must.SliceNotEmpty(s.t, b.Events, must.Sprintf("batch line without events: %s", line))
		return b, line
	}
}

// lastLine skips heartbeats and returns the final line before the stream ends; the stream
// must end within streamTimeout.
func (s *rawEventStream) lastLine() string {
	s.t.Helper()
	last := ""
	for {
		line, ok := s.next()
		if !ok {
			return last
		}
		if line != "{}" {
			last = line
		}
	}
}

// subscribe opens a stream through the official client.
func subscribe(t *testing.T, c *api.Client, topics map[api.Topic][]string, index uint64, namespace string) <-chan *api.Events {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	ch, err := c.EventStream().Stream(ctx, topics, index, &api.QueryOptions{Namespace: namespace})
	must.NoError(t, err)
	return ch
}

// collectEvents reads batches from ch until stop returns true for a received event, and
// returns every event received up to and including that one's batch.
func collectEvents(t *testing.T, ch <-chan *api.Events, stop func(api.Event) bool) []api.Event {
	t.Helper()
	timeout := time.After(streamTimeout)
	var out []api.Event
	for {
		select {
		case batch, ok := <-ch:
			must.True(t, ok, must.Sprintf("event stream closed after %d events", len(out)))
			must.NoError(t, batch.Err)
			for _, ev := range batch.Events {
				must.Eq(t, batch.Index, ev.Index, must.Sprint("an event's Index is its batch's"))
			}
			out = append(out, batch.Events...)
			if slices.ContainsFunc(batch.Events, stop) {
				return out
			}
		case <-timeout:
			t.Fatalf("awaited event not seen within %s; got %d events", streamTimeout, len(out))
		}
	}
}

// firstBatch returns the next batch from ch.
func firstBatch(t *testing.T, ch <-chan *api.Events) *api.Events {
	t.Helper()
	select {
	case batch, ok := <-ch:
		must.True(t, ok, must.Sprint("event stream closed"))
		must.NoError(t, batch.Err)
		return batch
	case <-time.After(streamTimeout):
		t.Fatalf("no batch within %s", streamTimeout)
		return nil
	}
}

// awaitStreamEnd waits until the official client's stream reports an error or closes.
func awaitStreamEnd(t *testing.T, ch <-chan *api.Events) {
	t.Helper()
	timeout := time.After(streamTimeout)
	for {
		select {
		case batch, ok := <-ch:
			if !ok || batch.Err != nil {
				return
			}
		case <-timeout:
			t.Fatalf("event stream still open after %s", streamTimeout)
		}
	}
}

// jobEventOf reports whether ev is a Job event of job id with event type typ.
func jobEventOf(id, typ string) func(api.Event) bool {
	return func(ev api.Event) bool { return ev.Topic == api.TopicJob && ev.Key == id && ev.Type == typ }
}

func isPurge(ev api.Event) bool { return ev.Payload["Purge"] == true }

func TestEventStream_Wire(t *testing.T) {
	ta := NewTestAgent(t, func(c *Config) { c.eventHeartbeat = 50 * time.Millisecond })

	t.Run("heartbeat at connect and while idle", func(t *testing.T) {
		status, _, s := openRawEventStream(t, ta, "", "topic=Job")
		must.Eq(t, http.StatusOK, status)
		for i := range 3 {
			line, ok := s.next()
			must.True(t, ok)
			must.Eq(t, "{}", line, must.Sprintf("line %d", i))
		}
	})

	t.Run("register line has upstream's envelope", func(t *testing.T) {
		status, _, s := openRawEventStream(t, ta, "", "topic=Job&index=0")
		must.Eq(t, http.StatusOK, status)
		first, ok := s.next()
		must.True(t, ok)
		must.Eq(t, "{}", first)

		_, _, err := ta.Client("").Jobs().Register(testJob("web"), nil)
		must.NoError(t, err)
		batch, line := s.nextBatch()
		must.Eq(t, []string{"Index", "Events"}, topLevelKeys(t, line))
		must.Len(t, 1, batch.Events)
		must.Eq(t, eventEnvelopeKeys, topLevelKeys(t, string(batch.Events[0])))

		var ev struct {
			Topic, Type, Key, Namespace string
			FilterKeys                  []string
			Index                       uint64
			Payload                     map[string]json.RawMessage
		}
		must.NoError(t, json.Unmarshal(batch.Events[0], &ev))
		must.Eq(t, "Job", ev.Topic)
		must.Eq(t, "JobRegistered", ev.Type)
		must.Eq(t, "web", ev.Key)
		must.Eq(t, "default", ev.Namespace)
		must.Nil(t, ev.FilterKeys)
		must.Eq(t, batch.Index, ev.Index)
		must.MapContainsKey(t, ev.Payload, "Job")
		// ACLs are off: no actor, and a register is no removal.
		must.MapNotContainsKeys(t, ev.Payload, []string{"Actor", "Purge", "Deleted"})
	})

	cases := []struct {
		name       string
		query      string
		wantStatus int
		wantPrefix string
	}{
		{name: "topic with two colons", query: "topic=Job:a:b", wantStatus: 400, wantPrefix: "Invalid topic query"},
		{name: "topic with an empty key", query: "topic=Job:", wantStatus: 400, wantPrefix: "Invalid topic query"},
		{name: "index not a number", query: "topic=Job&index=abc", wantStatus: 400, wantPrefix: "Unable to parse index"},
		{name: "negative index", query: "topic=Job&index=-1", wantStatus: 400, wantPrefix: "Unable to parse index"},
		{name: "10,000 topic/key pairs", query: manyTopics(10_000), wantStatus: 400, wantPrefix: "Invalid topic query: 10000 topic parameters, the limit is 1000"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body, _ := openRawEventStream(t, ta, "", tc.query)
			must.Eq(t, tc.wantStatus, status)
			must.StrHasPrefix(t, tc.wantPrefix, body)
		})
	}

	t.Run("POST is refused", func(t *testing.T) {
		res := doHTTP(t, ta, http.MethodPost, "/v1/event/stream", nil, nil)
		must.Eq(t, http.StatusMethodNotAllowed, res.status)
	})
}

func TestEventStream_SubscribeACL(t *testing.T) {
	ta, root := NewTestACLAgent(t, nil)
	reader := clientToken(t, ta, root, "reader", `namespace "default" { capabilities = ["read-job"] }`)
	lister := clientToken(t, ta, root, "lister", `namespace "default" { capabilities = ["list-jobs"] }`)
	nodeReader := clientToken(t, ta, root, "node-reader", `node { policy = "read" }`)
	everywhere := clientToken(t, ta, root, "everywhere", `namespace "*" { capabilities = ["read-job"] }`)

	cases := []struct {
		name       string
		token      string
		query      string
		wantStatus int
	}{
		{name: "read-job may follow jobs", token: reader.SecretID, query: "topic=Job", wantStatus: 200},
		{name: "read-job may follow evaluations by job", token: reader.SecretID, query: "topic=Evaluation:web", wantStatus: 200},
		{name: "read-job may follow the purge history", token: reader.SecretID, query: "topic=PurgeRecord", wantStatus: 200},
		{name: "purge history needs read-job", token: lister.SecretID, query: "topic=PurgeRecord", wantStatus: 403},
		{name: "management may follow everything", token: root, query: "", wantStatus: 200},
		{name: "management may follow ACL tokens", token: root, query: "topic=ACLToken", wantStatus: 200},
		{name: "node read may follow nodes", token: nodeReader.SecretID, query: "topic=Node", wantStatus: 200},
		{name: "a policy on namespace * may follow all namespaces", token: everywhere.SecretID, query: "topic=Job&namespace=*", wantStatus: 200},
		{name: "without read-job", token: lister.SecretID, query: "topic=Job", wantStatus: 403},
		{name: "read-job in another namespace", token: reader.SecretID, query: "topic=Job&namespace=other", wantStatus: 403},
		{name: "read-job in one namespace is not all namespaces", token: reader.SecretID, query: "topic=Job&namespace=*", wantStatus: 403},
		{name: "one denied topic denies the request", token: reader.SecretID, query: "topic=Job&topic=Node", wantStatus: 403},
		{name: "ACL tokens need management", token: reader.SecretID, query: "topic=ACLToken", wantStatus: 403},
		{name: "all topics need management", token: reader.SecretID, query: "", wantStatus: 403},
		{name: "anonymous", token: "", query: "topic=Job", wantStatus: 403},
		{name: "unknown token", token: "00000000-0000-0000-0000-000000000000", query: "topic=Job", wantStatus: 403},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body, s := openRawEventStream(t, ta, tc.token, tc.query)
			must.Eq(t, tc.wantStatus, status, must.Sprintf("body: %s", body))
			if tc.wantStatus != 200 {
				must.StrHasPrefix(t, "Permission denied", body)
				return
			}
			line, ok := s.next()
			must.True(t, ok)
			must.Eq(t, "{}", line)
		})
	}

	t.Run("official client gets the 403", func(t *testing.T) {
		_, err := ta.Client(lister.SecretID).EventStream().Stream(context.Background(),
			map[api.Topic][]string{api.TopicJob: {"*"}}, 0, nil)
		status, body := responseError(t, err)
		must.Eq(t, 403, status)
		must.StrHasPrefix(t, "Permission denied", body)
	})
}

func TestEventStream_JobEvents(t *testing.T) {
	ta, root := NewTestACLAgent(t, nil)
	rc := ta.Client(root)
	_, err := rc.Namespaces().Register(&api.Namespace{Name: "other"}, nil)
	must.NoError(t, err)
	purger := clientToken(t, ta, root, "purger", `namespace "default" { capabilities = ["submit-job", "read-job", "purge-job"] }`)
	deployer := clientToken(t, ta, root, "deployer", `namespace "default" { capabilities = ["submit-job", "read-job"] }`)
	pc := ta.Client(purger.SecretID)
	dc := ta.Client(deployer.SecretID)
	purgerActor := map[string]any{"AccessorID": purger.AccessorID, "Name": "purger", "Type": "client"}

	// Job "api" is written first, so a filter that let it through would show it before web.
	_, _, err = pc.Jobs().Register(testJob("api"), nil)
	must.NoError(t, err)
	jobTopic := map[api.Topic][]string{api.TopicJob: {"web"}}
	webStream := subscribe(t, pc, jobTopic, nextIndex(ta), "")
	_, _, err = pc.Jobs().Register(testJob("web"), nil)
	must.NoError(t, err)
	_, _, err = pc.Jobs().Deregister("web", false, nil)
	must.NoError(t, err)
	_, _, err = pc.Jobs().Deregister("web", true, nil)
	must.NoError(t, err)
	webEvents := collectEvents(t, webStream, isPurge)

	t.Run("register, one stop and a purge give three events", func(t *testing.T) {
		must.Len(t, 3, webEvents)
		var types []string
		for _, ev := range webEvents {
			must.Eq(t, "web", ev.Key)
			types = append(types, ev.Type)
		}
		must.Eq(t, []string{"JobRegistered", "JobDeregistered", "JobDeregistered"}, types)
	})

	t.Run("register carries the actor", func(t *testing.T) {
		reg := webEvents[0]
		must.Eq[any](t, purgerActor, reg.Payload["Actor"])
		must.MapNotContainsKeys(t, reg.Payload, []string{"Purge", "Deleted"})
	})

	t.Run("stop has no purge flags", func(t *testing.T) {
		stop := webEvents[1]
		must.MapNotContainsKeys(t, stop.Payload, []string{"Purge", "Deleted"})
		job, deleted, err := stop.DeregisteredJob()
		must.NoError(t, err)
		must.False(t, deleted)
		must.True(t, *job.Stop)
	})

	t.Run("purge is flagged with the purging token", func(t *testing.T) {
		purge := webEvents[2]
		must.Eq[any](t, true, purge.Payload["Purge"])
		must.Eq[any](t, true, purge.Payload["Deleted"])
		must.Eq[any](t, purgerActor, purge.Payload["Actor"])
		// Upstream 2.x consumers read the flag through DeregisteredJob.
		job, deleted, err := purge.DeregisteredJob()
		must.NoError(t, err)
		must.True(t, deleted)
		must.Eq(t, "web", *job.ID)
		must.True(t, *job.Stop, must.Sprint("the payload is the job as it was just before removal"))
	})

	t.Run("topic Job:web excludes job api", func(t *testing.T) {
		ch := subscribe(t, pc, jobTopic, 0, "")
		got := collectEvents(t, ch, isPurge)
		for _, ev := range got {
			must.Eq(t, "web", ev.Key)
		}
	})

	t.Run("evaluations carry the job ID as a filter key", func(t *testing.T) {
		ch := subscribe(t, pc, map[api.Topic][]string{api.TopicEvaluation: {"web"}}, 0, "")
		var got []api.Event
		for len(got) < 3 {
			got = append(got, firstBatch(t, ch).Events...)
		}
		must.Len(t, 3, got, must.Sprint("register, stop and purge each make one evaluation"))
		for _, ev := range got {
			must.Eq(t, api.TopicEvaluation, ev.Topic)
			must.SliceContains(t, ev.FilterKeys, "web")
			eval, err := ev.Evaluation()
			must.NoError(t, err)
			must.Eq(t, "web", eval.JobID)
			must.Eq(t, eval.ID, ev.Key)
		}
		must.Eq(t, []string{"JobRegistered", "JobDeregistered", "JobDeregistered"},
			[]string{got[0].Type, got[1].Type, got[2].Type})
	})

	t.Run("index resumes at the batch with that index", func(t *testing.T) {
		for _, want := range webEvents {
			ch := subscribe(t, pc, jobTopic, want.Index, "")
			batch := firstBatch(t, ch)
			must.Eq(t, want.Index, batch.Index)
			must.Eq(t, want.Type, batch.Events[0].Type)
		}
	})

	t.Run("namespace filter", func(t *testing.T) {
		start := nextIndex(ta)
		other := testJob("multi")
		other.Namespace = new("other")
		_, _, err := rc.Jobs().Register(other, nil)
		must.NoError(t, err)
		_, _, err = rc.Jobs().Register(testJob("multi"), nil)
		must.NoError(t, err)

		cases := []struct {
			name           string
			namespace      string
			wantNamespaces []string
		}{
			{name: "default sees default only", namespace: "default", wantNamespaces: []string{"default"}},
			{name: "star sees both", namespace: "*", wantNamespaces: []string{"other", "default"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				ch := subscribe(t, rc, map[api.Topic][]string{api.TopicJob: {"multi"}}, start, tc.namespace)
				var got []string
				for _, ev := range collectEvents(t, ch, func(ev api.Event) bool {
					job, err := ev.Job()
					return err == nil && *job.Namespace == "default"
				}) {
					job, err := ev.Job()
					must.NoError(t, err)
					got = append(got, *job.Namespace)
				}
				must.Eq(t, tc.wantNamespaces, got)
			})
		}
	})

	t.Run("denied purge publishes nothing and writes nothing", func(t *testing.T) {
		ch := subscribe(t, dc, map[api.Topic][]string{api.TopicJob: {"keep"}}, nextIndex(ta), "")
		_, _, err := dc.Jobs().Register(testJob("keep"), nil)
		must.NoError(t, err)
		before, _, err := dc.Jobs().Info("keep", nil)
		must.NoError(t, err)
		latest := ta.Server().State().LatestIndex()

		_, _, err = dc.Jobs().Deregister("keep", true, nil)
		status, body := responseError(t, err)
		must.Eq(t, 403, status)
		must.StrHasPrefix(t, "Permission denied: purge-job", body)
		must.Eq(t, latest, ta.Server().State().LatestIndex())
		after, _, err := dc.Jobs().Info("keep", nil)
		must.NoError(t, err)
		must.Eq(t, *before.ModifyIndex, *after.ModifyIndex)

		// A stop the deployer may do follows at once: nothing may come between it and the
		// register.
		_, _, err = dc.Jobs().Deregister("keep", false, nil)
		must.NoError(t, err)
		got := collectEvents(t, ch, jobEventOf("keep", "JobDeregistered"))
		must.Len(t, 2, got)
		must.Eq(t, "JobRegistered", got[0].Type)
		must.MapNotContainsKeys(t, got[1].Payload, []string{"Purge", "Deleted"})
	})
}

func TestEventStream_ClosedByServer(t *testing.T) {
	ta, root := NewTestACLAgent(t, func(c *Config) {
		c.ACL.TokenMinExpirationTTL = 100 * time.Millisecond
		c.eventHeartbeat = 50 * time.Millisecond
	})
	rc := ta.Client(root)
	readJob := `namespace "default" { capabilities = ["read-job"] }`
	// A bystander with its own token must outlive every closing below.
	bystander := clientToken(t, ta, root, "bystander", readJob)
	status, body, bystanderStream := openRawEventStream(t, ta, bystander.SecretID, "topic=Job:after&index="+strconv.FormatUint(nextIndex(ta), 10))
	must.Eq(t, http.StatusOK, status, must.Sprint(body))

	cases := []struct {
		name string
		// ttl, when set, makes the subscriber's token expire after it.
		ttl       time.Duration
		close     func(t *testing.T, tok *api.ACLToken)
		wantError string
	}{
		{
			name: "token deleted",
			close: func(t *testing.T, tok *api.ACLToken) {
				_, err := rc.ACLTokens().Delete(tok.AccessorID, nil)
				must.NoError(t, err)
			},
		},
		{
			name: "policy no longer grants read-job",
			close: func(t *testing.T, tok *api.ACLToken) {
				_, err := rc.ACLPolicies().Upsert(&api.ACLPolicy{
					Name: tok.Policies[0], Rules: `namespace "default" { capabilities = ["list-jobs"] }`,
				}, nil)
				must.NoError(t, err)
			},
		},
		{
			name:      "token expired",
			ttl:       time.Second,
			close:     func(*testing.T, *api.ACLToken) {},
			wantError: "ACL token expired",
		},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := "subscriber-" + string(rune('a'+i))
			_, err := rc.ACLPolicies().Upsert(&api.ACLPolicy{Name: name, Rules: readJob}, nil)
			must.NoError(t, err)
			tok, _, err := rc.ACLTokens().Create(&api.ACLToken{
				Name: name, Type: "client", Policies: []string{name}, ExpirationTTL: tc.ttl,
			}, nil)
			must.NoError(t, err)

			status, body, raw := openRawEventStream(t, ta, tok.SecretID, "topic=Job")
			must.Eq(t, http.StatusOK, status, must.Sprint(body))
			line, ok := raw.next()
			must.True(t, ok)
			must.Eq(t, "{}", line)
			official := subscribe(t, ta.Client(tok.SecretID), map[api.Topic][]string{api.TopicJob: {"*"}}, nextIndex(ta), "")

			tc.close(t, tok)

			var last struct{ Error string }
			lastLine := raw.lastLine()
			must.NoError(t, json.Unmarshal([]byte(lastLine), &last), must.Sprintf("last line %q", lastLine))
			must.StrContains(t, last.Error, "client should resubscribe")
			must.StrContains(t, last.Error, tc.wantError)
			awaitStreamEnd(t, official)
		})
	}

	t.Run("other subscriptions stay open", func(t *testing.T) {
		_, _, err := rc.Jobs().Register(testJob("after"), nil)
		must.NoError(t, err)
		batch, _ := bystanderStream.nextBatch()
		must.Len(t, 1, batch.Events)
	})
}

func TestEventStream_ACLTokenHasNoSecret(t *testing.T) {
	ta, root := NewTestACLAgent(t, nil)
	status, body, s := openRawEventStream(t, ta, root, "topic=ACLToken&index="+strconv.FormatUint(nextIndex(ta), 10))
	must.Eq(t, http.StatusOK, status, must.Sprint(body))
	tok := clientToken(t, ta, root, "watched", `namespace "default" { capabilities = ["read-job"] }`)

	batch, line := s.nextBatch()
	must.StrNotContains(t, line, tok.SecretID)
	must.Len(t, 1, batch.Events)
	var ev struct {
		Topic, Type, Key string
		Payload          struct{ ACLToken map[string]any }
	}
	must.NoError(t, json.Unmarshal(batch.Events[0], &ev))
	must.Eq(t, "ACLToken", ev.Topic)
	must.Eq(t, "ACLTokenUpserted", ev.Type)
	must.Eq(t, tok.AccessorID, ev.Key)
	must.Eq[any](t, tok.AccessorID, ev.Payload.ACLToken["AccessorID"])
	if secret, ok := ev.Payload.ACLToken["SecretID"]; ok {
		must.Eq[any](t, "", secret)
	}
}

func TestEventStream_GCEvent(t *testing.T) {
	ta := NewTestAgent(t, nil)
	c := ta.Client("")
	_, _, err := c.Jobs().Register(testJob("old"), nil)
	must.NoError(t, err)
	_, _, err = c.Jobs().Deregister("old", false, nil)
	must.NoError(t, err)
	ch := subscribe(t, c, map[api.Topic][]string{api.TopicJob: {"old"}}, nextIndex(ta), "")

	must.NoError(t, c.System().GarbageCollect())

	got := collectEvents(t, ch, isPurge)
	must.Len(t, 1, got)
	ev := got[0]
	must.Eq(t, "JobBatchDeregistered", ev.Type)
	must.Eq[any](t, true, ev.Payload["Purge"])
	must.Eq[any](t, true, ev.Payload["Deleted"])
	must.Eq[any](t, map[string]any{"Type": "system", "Name": "job-gc"}, ev.Payload["Actor"])
}

// manyTopics is a query naming n Job keys.
func manyTopics(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("topic=Job:k%d", i)
	}
	return strings.Join(parts, "&")
}
