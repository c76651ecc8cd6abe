package command

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// Batches shaped like the agent's NDJSON: a stop, then a purge by alice, then
// a registration, each at its own index.
const (
	batchStop = `{"Index":10,"Events":[{"Topic":"Job","Type":"JobDeregistered","Key":"web","Namespace":"default",` +
		`"Index":10,"Payload":{"Job":{"ID":"web","Namespace":"default","Stop":true}}}]}`
	batchPurge = `{"Index":11,"Events":[{"Topic":"Job","Type":"JobDeregistered","Key":"web","Namespace":"default",` +
		`"Index":11,"Payload":{"Job":{"ID":"web","Namespace":"default","Stop":true},"Purge":true,"Deleted":true,` +
		`"Actor":{"AccessorID":"7c1c2a3e","Name":"alice","Type":"client"}}}]}`
	batchEval = `{"Index":11,"Events":[{"Topic":"Evaluation","Type":"EvaluationUpdated","Key":"e1","Namespace":"default",` +
		`"Index":11,"Payload":{"Evaluation":{"ID":"e1","Namespace":"default"}}}]}`
	batchGC = `{"Index":12,"Events":[{"Topic":"Job","Type":"JobBatchDeregistered","Key":"old","Namespace":"batch",` +
		`"Index":12,"Payload":{"Job":{"ID":"old","Namespace":"batch"},"Deleted":true,` +
		`"Actor":{"Name":"job-gc","Type":"system"}}}]}`
	batchForcedGC = `{"Index":14,"Events":[{"Topic":"Job","Type":"JobBatchDeregistered","Key":"old","Namespace":"batch",` +
		`"Index":14,"Payload":{"Job":{"ID":"old","Namespace":"batch"},"Purge":true,"Deleted":true,` +
		`"Actor":{"Name":"job-gc","Type":"system"},"ForcedBy":{"AccessorID":"9a01ffff","Name":"olga","Type":"management"}}}]}`
	batchRegister = `{"Index":13,"Events":[{"Topic":"Job","Type":"JobRegistered","Key":"api","Namespace":"default",` +
		`"Index":13,"Payload":{"Job":{"ID":"api","Namespace":"default"}}}]}`
)

// streamServer answers the n-th subscription (0-based) with lines[n], then
// either ends the response (dropping the stream) or, for the last script,
// holds it open until the client goes away.
type streamServer struct {
	mu      sync.Mutex
	scripts [][]string
	indexes []string
	topics  [][]string
}

func (s *streamServer) handle(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	n := len(s.indexes)
	s.indexes = append(s.indexes, r.URL.Query().Get("index"))
	s.topics = append(s.topics, r.URL.Query()["topic"])
	s.mu.Unlock()

	w.Header().Set("Content-Type", "application/json")
	flusher := w.(http.Flusher)
	io.WriteString(w, "{}\n")
	flusher.Flush()
	if n < len(s.scripts) {
		for _, l := range s.scripts[n] {
			io.WriteString(w, l+"\n")
		}
		flusher.Flush()
	}
	if n >= len(s.scripts)-1 {
		<-r.Context().Done()
	}
}

func (s *streamServer) seen() ([]string, [][]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.indexes...), append([][]string(nil), s.topics...)
}

func TestEventStream(t *testing.T) {
	cases := []struct {
		name        string
		args        []string
		scripts     [][]string
		wantLines   int
		wantIndexes []string
		wantTopics  []string
		check       func(t *testing.T, lines []string)
	}{
		{
			name: "purged keeps only removals and reconnects from the last index",
			args: []string{"-purged"},
			// The first subscription drops after index 11; the second replays 11,
			// which must not print twice.
			scripts:     [][]string{{batchStop, batchPurge}, {batchPurge, batchGC, batchRegister}},
			wantLines:   2,
			wantIndexes: []string{"0", "11"},
			wantTopics:  []string{"Job:*"},
			check: func(t *testing.T, lines []string) {
				must.StrContains(t, lines[0], " index=11 topic=Job type=JobDeregistered namespace=default key=web purge=true actor=alice accessor=7c1c2a3e")
				must.StrContains(t, lines[1], " index=12 topic=Job type=JobBatchDeregistered namespace=batch key=old purge=true actor=job-gc")
				_, err := time.Parse(time.RFC3339, strings.Fields(lines[0])[0])
				must.NoError(t, err)
			},
		},
		{
			name:        "type filter and json",
			args:        []string{"-json", "-type", "JobRegistered", "-topic", "Job", "-topic", "Evaluation:web", "-index", "5"},
			scripts:     [][]string{{batchStop, batchEval, batchRegister}},
			wantLines:   1,
			wantIndexes: []string{"5"},
			check: func(t *testing.T, lines []string) {
				var e map[string]any
				must.NoError(t, json.Unmarshal([]byte(lines[0]), &e))
				must.Eq[any](t, "JobRegistered", e["Type"])
				must.Eq[any](t, "api", e["Key"])
				must.Eq[any](t, "default", e["Namespace"])
				must.Eq[any](t, float64(13), e["Index"])
			},
		},
		{
			name:        "a forced GC names the token that forced it",
			args:        []string{"-purged"},
			scripts:     [][]string{{batchForcedGC}},
			wantLines:   1,
			wantIndexes: []string{"0"},
			check: func(t *testing.T, lines []string) {
				must.StrContains(t, lines[0], " key=old purge=true actor=job-gc forced_by=olga forced_by_accessor=9a01ffff")
			},
		},
		{
			name:        "everything",
			scripts:     [][]string{{batchStop, batchEval}},
			wantLines:   2,
			wantIndexes: []string{"0"},
			check: func(t *testing.T, lines []string) {
				must.StrContains(t, lines[0], "type=JobDeregistered namespace=default key=web")
				must.StrNotContains(t, lines[0], "purge")
				must.StrContains(t, lines[1], "topic=Evaluation type=EvaluationUpdated")
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ss := &streamServer{scripts: tc.scripts}
			fa := newFakeAgent(t, map[string]route{"GET /v1/event/stream": ss.handle})

			ui := cli.NewMockUi()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cmd := &EventStreamCommand{Meta: Meta{Ui: ui}, ctx: ctx, backoff: 10 * time.Millisecond}
			done := make(chan int, 1)
			go func() { done <- cmd.Run(append([]string{"-address=" + fa.srv.URL}, tc.args...)) }()

			lines := func() []string {
				return strings.Split(strings.TrimSpace(ui.OutputWriter.String()), "\n")
			}
			must.Wait(t, wait.InitialSuccess(
				wait.BoolFunc(func() bool {
					idx, _ := ss.seen()
					return len(idx) == len(tc.wantIndexes) && len(lines()) == tc.wantLines && lines()[0] != ""
				}),
				wait.Timeout(5*time.Second),
				wait.Gap(10*time.Millisecond),
			), must.Func(func() string {
				idx, _ := ss.seen()
				return fmt.Sprintf("indexes %v, output %q, errors %q", idx, ui.OutputWriter.String(), ui.ErrorWriter.String())
			}))
			cancel()
			select {
			case code := <-done:
				must.Eq(t, 0, code)
			case <-time.After(5 * time.Second):
				t.Fatal("command did not stop on cancel")
			}

			idx, topics := ss.seen()
			must.Eq(t, tc.wantIndexes, idx)
			if tc.wantTopics != nil {
				must.Eq(t, tc.wantTopics, topics[0])
			}
			got := lines()
			must.Len(t, tc.wantLines, got, must.Sprint(got))
			tc.check(t, got)
		})
	}
}

func TestEventStream_PermissionDeniedIsFinal(t *testing.T) {
	fa := newFakeAgent(t, map[string]route{
		"GET /v1/event/stream": textError(403, "Permission denied"),
	})
	ui := cli.NewMockUi()
	cmd := &EventStreamCommand{Meta: Meta{Ui: ui}, ctx: context.Background(), backoff: time.Millisecond}
	code := cmd.Run([]string{"-address=" + fa.srv.URL, "-topic", "*"})
	must.Eq(t, 1, code)
	must.Eq(t, "Error subscribing to events: Unexpected response code: 403 (Permission denied)\n", ui.ErrorWriter.String())
	must.Len(t, 1, fa.find("GET", "/v1/event/stream"))
}

func TestParseTopics(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		want    map[api.Topic][]string
		wantErr bool
	}{
		{name: "none", args: nil, want: map[api.Topic][]string{}},
		{name: "bare topic", args: []string{"Job"}, want: map[api.Topic][]string{"Job": {"*"}}},
		{name: "keys merge", args: []string{"Job:web", "Job:api", "Node"},
			want: map[api.Topic][]string{"Job": {"web", "api"}, "Node": {"*"}}},
		{name: "two colons", args: []string{"Job:a:b"}, wantErr: true},
		{name: "empty topic", args: []string{":web"}, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseTopics(tc.args)
			if tc.wantErr {
				must.Error(t, err)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.want, got)
		})
	}
}

// TestEventStream_GapsArePrintedAndSkipped: the agent's gap frames (a start older than its
// buffer, a reader that fell behind) are printed as warnings naming the lost indexes, and the
// command resubscribes from the oldest index the agent still holds.
func TestEventStream_GapsArePrintedAndSkipped(t *testing.T) {
	ss := &streamServer{scripts: [][]string{
		{`{"Index":0,"Gap":{"LastIndex":4,"OldestIndex":9,"Reason":"index not retained"}}`, batchStop,
			`{"Index":0,"Gap":{"LastIndex":10,"OldestIndex":13,"Reason":"subscriber fell behind"}}`,
			`{"Error":"subscriber fell behind the event buffer and missed events; resubscribe from the last index received"}`},
		{batchRegister},
	}}
	fa := newFakeAgent(t, map[string]route{"GET /v1/event/stream": ss.handle})
	ui := cli.NewMockUi()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := &EventStreamCommand{Meta: Meta{Ui: ui}, ctx: ctx, backoff: 10 * time.Millisecond}
	done := make(chan int, 1)
	go func() { done <- cmd.Run([]string{"-address=" + fa.srv.URL, "-index", "5"}) }()
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return strings.Count(ui.OutputWriter.String(), "\n") == 2
	}), wait.Timeout(5*time.Second), wait.Gap(10*time.Millisecond)), must.Func(func() string {
		return fmt.Sprintf("output %q, errors %q", ui.OutputWriter.String(), ui.ErrorWriter.String())
	}))
	cancel()
	must.Eq(t, 0, <-done)

	idx, _ := ss.seen()
	must.Eq(t, []string{"5", "13"}, idx, must.Sprint("resubscribed from the oldest index the agent holds"))
	warnings := ui.ErrorWriter.String()
	must.StrContains(t, warnings, "Events from index 5 to 8 are no longer held by the agent (index not retained) and were not printed; resuming at index 9")
	must.StrContains(t, warnings, "Events from index 11 to 12 are no longer held by the agent (subscriber fell behind)")
	out := ui.OutputWriter.String()
	must.StrContains(t, out, "index=10 ")
	must.StrContains(t, out, "index=13 ")
}

// TestSecurity_PurgeFeedLinesCannotBeForged: a job ID or token name holding a newline (job IDs
// may, as upstream) is quoted, so one event is one line of the purge alert feed.
func TestSecurity_PurgeFeedLinesCannotBeForged(t *testing.T) {
	e := api.Event{Topic: api.TopicJob, Type: "JobDeregistered", Key: "web\n2026-12-03T00:00:00Z index=9 topic=Job type=JobDeregistered key=db purge=true actor=olga",
		Index: 7, Payload: map[string]any{"Purge": true,
			"Actor": map[string]any{"Name": "mallory\x1b[2K\roperator", "AccessorID": "a1"}}}
	line := formatEventLine(e, time.Unix(0, 0))
	must.StrNotContains(t, line, "\n")
	must.StrNotContains(t, line, "\x1b")
	must.StrNotContains(t, line, "\r")
	must.StrContains(t, line, `key="web\n2026`)
}
