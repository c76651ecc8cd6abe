package eventsink

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/raft"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/nomad/fsm"
	"github.com/nomadfork/nomad/nomad/stream"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

const secret = "0123456789abcdef-secret"

func TestSign_MatchesHMACAndVerifies(t *testing.T) {
	body := []byte(`{"Index":7,"Events":[]}`)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	must.Eq(t, want, Sign(secret, body))
	must.True(t, Verify(secret, body, want))
	must.False(t, Verify("another-secret-0000", body, want))
	must.False(t, Verify(secret, []byte(`{"Index":8,"Events":[]}`), want))
	must.False(t, Verify(secret, body, want[len("sha256="):]), must.Sprint("the prefix names the hash"))
	must.False(t, Verify(secret, body, "sha256=zz"))
}

func TestBackoff_DoublesToTheCap(t *testing.T) {
	var got []time.Duration
	for i := 0; i < 10; i++ {
		got = append(got, backoff(i, DefaultMinBackoff, DefaultMaxBackoff))
	}
	must.Eq(t, []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second,
		8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second, 30 * time.Second}, got)
	must.Eq(t, 30*time.Second, backoff(1000, DefaultMinBackoff, DefaultMaxBackoff), must.Sprint("no overflow"))
}

// cluster is a one-server stand-in: an FSM whose commits publish to a broker, as the server's
// do, and an Apply that appends to its log.
type cluster struct {
	t      *testing.T
	fsm    *fsm.FSM
	broker *stream.EventBroker
	mu     sync.Mutex
	index  uint64
}

func newCluster(t *testing.T, bufferSize int64) *cluster {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c := &cluster{t: t, broker: stream.NewEventBroker(ctx, stream.EventBrokerConfig{EventBufferSize: bufferSize, WakeInterval: -1})}
	f, err := fsm.NewFSM(hclog.NewNullLogger(), state.Config{JobTrackedVersions: 6}, func(txn *state.Txn, changes memdb.Changes) {
		if events := state.EventsFromChanges(txn, changes); events != nil {
			c.broker.Publish(events)
		}
	})
	must.NoError(t, err)
	c.fsm = f
	return c
}

func (c *cluster) apply(mt structs.MessageType, req any) (uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	buf, err := structs.EncodeEntry(mt, req)
	if err != nil {
		return 0, err
	}
	c.index++
	if resp := c.fsm.Apply(&raft.Log{Index: c.index, Type: raft.LogCommand, Data: buf}); resp != nil {
		if err, ok := resp.(error); ok {
			return c.index, err
		}
	}
	return c.index, nil
}

func (c *cluster) mustApply(mt structs.MessageType, req any) uint64 {
	c.t.Helper()
	index, err := c.apply(mt, req)
	must.NoError(c.t, err)
	return index
}

var alice = &structs.Actor{AccessorID: "acc-alice", Name: "alice", Type: "client"}

func (c *cluster) register(id string) uint64 {
	return c.mustApply(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mock.JobWithID(id), Actor: alice})
}

func (c *cluster) purge(id string) uint64 {
	return c.mustApply(structs.JobDeregisterRequestType, &structs.JobDeregisterRequest{JobID: id, Purge: true, Actor: alice,
		PurgeRecordID: "rec-" + id, PurgeTime: 1, WriteRequest: structs.WriteRequest{Namespace: structs.DefaultNamespace}})
}

func (c *cluster) addSink(addr, filter string) {
	c.mustApply(structs.EventSinkUpsertRequestType, &structs.EventSinkUpsertRequest{Sink: &structs.EventSink{
		ID: "alerts", Type: structs.EventSinkTypeWebhook, Address: addr, Filter: filter, Secret: secret,
		Topics: map[structs.Topic][]string{structs.TopicJob: {"*"}, structs.TopicPurgeRecord: {"*"}}}})
}

func (c *cluster) sink() *structs.EventSink {
	s, err := c.fsm.State().EventSinkByID(nil, "alerts")
	must.NoError(c.t, err)
	return s
}

func (c *cluster) run(t *testing.T) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	m := New(Config{State: c.fsm.State, Broker: c.broker, Apply: c.apply, MinBackoff: 10 * time.Millisecond,
		MaxBackoff: 50 * time.Millisecond, FlushInterval: 50 * time.Millisecond})
	done := make(chan struct{})
	go func() { defer close(done); m.Run(ctx) }()
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	return stop
}

// receiver records what it acknowledged; fail decides, per request, to answer 503.
type receiver struct {
	t        *testing.T
	mu       sync.Mutex
	batches  []wireBatch
	attempts atomic.Int64
	badSigs  atomic.Int64
	fail     func(n int64) bool
}

type wireEvent struct {
	Topic   string
	Type    string
	Key     string
	Index   uint64
	Payload json.RawMessage
}

type wireBatch struct {
	Index  uint64
	Events []wireEvent
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	n := r.attempts.Add(1)
	body, _ := io.ReadAll(req.Body)
	if !Verify(secret, body, req.Header.Get(SignatureHeader)) {
		r.badSigs.Add(1)
	}
	if r.fail != nil && r.fail(n) {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	var b wireBatch
	if err := json.Unmarshal(body, &b); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.batches = append(r.batches, b)
	r.mu.Unlock()
}

func (r *receiver) got() []wireBatch {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]wireBatch(nil), r.batches...)
}

type jobPayload struct {
	Job     struct{ ID string }
	Purge   bool
	Deleted bool
	Actor   *structs.Actor
}

func purgesIn(t *testing.T, batches []wireBatch) map[string]jobPayload {
	out := map[string]jobPayload{}
	for _, b := range batches {
		for _, e := range b.Events {
			if e.Topic != "Job" || e.Type != "JobDeregistered" {
				continue
			}
			var p jobPayload
			must.NoError(t, json.Unmarshal(e.Payload, &p))
			if p.Purge {
				out[p.Job.ID] = p
			}
		}
	}
	return out
}

// A receiver that fails at first gets every batch, in order, once it answers 2xx; the
// failure is recorded on the sink and cleared by the next delivery, and the cursor is
// committed through the log.
func TestWorker_RetriesInOrderAndCommitsTheCursor(t *testing.T) {
	c := newCluster(t, 100)
	rcv := &receiver{t: t, fail: func(n int64) bool { return n <= 3 }}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	c.addSink(srv.URL, "")
	c.run(t)

	c.register("a")
	c.register("b")
	last := c.purge("a")

	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool { return c.sink().LatestIndex >= last }),
		wait.Timeout(10*time.Second), wait.Gap(10*time.Millisecond)))
	got := rcv.got()
	must.Eq(t, int64(0), rcv.badSigs.Load())
	must.Greater(t, int64(3), rcv.attempts.Load())
	var prev uint64
	for _, b := range got {
		must.Greater(t, prev, b.Index, must.Sprintf("batches out of order: %v", got))
		prev = b.Index
	}
	must.Eq(t, last, prev)
	p, ok := purgesIn(t, got)["a"]
	must.True(t, ok, must.Sprintf("purge not delivered: %v", got))
	must.True(t, p.Deleted)
	must.Eq(t, alice, p.Actor)
	must.Eq(t, "", c.sink().LastError, must.Sprint("a delivery clears the error"))
}

// While a receiver keeps failing, the sink says why; the cursor does not move.
func TestWorker_RecordsTheLastError(t *testing.T) {
	c := newCluster(t, 100)
	rcv := &receiver{t: t, fail: func(int64) bool { return true }}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	c.addSink(srv.URL, "")
	start := c.sink().LatestIndex
	c.run(t)
	c.register("a")
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool { return c.sink().LastError != "" }),
		wait.Timeout(5*time.Second), wait.Gap(10*time.Millisecond)))
	must.StrContains(t, c.sink().LastError, "503")
	must.StrNotContains(t, c.sink().LastError, secret)
	must.Eq(t, start, c.sink().LatestIndex)
}

// The filter selects events by their JSON form: only purges reach a sink that asks for them,
// and the cursor still moves past what it passed over.
func TestWorker_FilterSelects(t *testing.T) {
	c := newCluster(t, 100)
	rcv := &receiver{t: t}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	c.addSink(srv.URL, `Type == "JobDeregistered" and Payload.Purge == true`)
	c.run(t)
	c.register("a")
	c.register("b")
	c.purge("b")
	last := c.register("c")
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool { return c.sink().LatestIndex >= last }),
		wait.Timeout(10*time.Second), wait.Gap(10*time.Millisecond)))
	got := rcv.got()
	must.Len(t, 1, got, must.Sprintf("%v", got))
	must.Len(t, 1, got[0].Events)
	must.Eq(t, "JobDeregistered", got[0].Events[0].Type)
	must.MapContainsKey(t, purgesIn(t, got), "b")
}

// A receiver away longer than the buffer lasts is told so with a gap frame, then gets every
// purge it missed from the purge history (with Purge and Actor), then what is still buffered.
func TestWorker_GapResendsMissedPurges(t *testing.T) {
	c := newCluster(t, 3)
	rcv := &receiver{t: t}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	c.addSink(srv.URL, "")
	from := c.sink().LatestIndex
	for i := 0; i < 4; i++ {
		id := fmt.Sprintf("j%d", i)
		c.register(id)
		c.purge(id)
	}
	for i := 0; i < 6; i++ {
		c.register(fmt.Sprintf("late%d", i))
	}
	last := c.purge("late0")
	c.run(t)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool { return c.sink().LatestIndex >= last }),
		wait.Timeout(10*time.Second), wait.Gap(10*time.Millisecond)))
	got := rcv.got()
	must.Eq(t, int64(0), rcv.badSigs.Load())
	must.Eq(t, "Sink", got[0].Events[0].Topic, must.Sprintf("first delivery must be the gap frame: %v", got))
	must.Eq(t, "EventsLost", got[0].Events[0].Type)
	var gap structs.EventSinkGap
	must.NoError(t, json.Unmarshal(got[0].Events[0].Payload, &gap))
	must.Eq(t, from, gap.LastIndex)
	must.Greater(t, from+1, gap.OldestIndex)
	purges := purgesIn(t, got)
	for _, id := range []string{"j0", "j1", "j2", "j3", "late0"} {
		p, ok := purges[id]
		must.True(t, ok, must.Sprintf("purge of %s lost: %v", id, got))
		must.Eq(t, alice, p.Actor)
	}
	var prev uint64
	for _, b := range got[1:] {
		must.Greater(t, prev, b.Index, must.Sprintf("out of order: %v", got))
		prev = b.Index
	}
}

// After a restore the broker never saw the transactions the snapshot covers: the sink says so
// and re-sends the purges among them even though no new event comes.
func TestWorker_UnpublishedAfterRestoreIsAGap(t *testing.T) {
	c := newCluster(t, 100)
	rcv := &receiver{t: t}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	c.addSink(srv.URL, "")
	c.register("a")
	purgedAt := c.purge("a")
	// Stand-in for a restart: a fresh broker that was told the snapshot's index.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.broker = stream.NewEventBroker(ctx, stream.EventBrokerConfig{WakeInterval: -1})
	c.broker.MarkUnpublishedThrough(c.fsm.State().LatestIndex())
	c.run(t)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool { return c.sink().LatestIndex >= purgedAt }),
		wait.Timeout(10*time.Second), wait.Gap(10*time.Millisecond)))
	got := rcv.got()
	must.Eq(t, "EventsLost", got[0].Events[0].Type)
	must.MapContainsKey(t, purgesIn(t, got), "a")
}

// The FSM tells the broker hook the index of a restored snapshot.
func TestFSMRestore_MarksUnpublished(t *testing.T) {
	c := newCluster(t, 100)
	c.register("a")
	last := c.register("b")
	snap, err := c.fsm.Snapshot()
	must.NoError(t, err)
	sink := &memSink{}
	must.NoError(t, snap.Persist(sink))

	c2 := newCluster(t, 100)
	c2.fsm.SetRestoreHook(c2.broker.MarkUnpublishedThrough)
	must.NoError(t, c2.fsm.Restore(sink))
	must.Eq(t, last, c2.broker.UnpublishedThrough())
	c2.broker.MarkUnpublishedThrough(1)
	must.Eq(t, last, c2.broker.UnpublishedThrough(), must.Sprint("never moves back"))
}

type memSink struct {
	buf []byte
	pos int
}

func (m *memSink) Write(p []byte) (int, error) { m.buf = append(m.buf, p...); return len(p), nil }
func (m *memSink) Read(p []byte) (int, error) {
	if m.pos >= len(m.buf) {
		return 0, io.EOF
	}
	n := copy(p, m.buf[m.pos:])
	m.pos += n
	return n, nil
}
func (m *memSink) Close() error  { return nil }
func (m *memSink) Cancel() error { return nil }
func (m *memSink) ID() string    { return "mem" }
