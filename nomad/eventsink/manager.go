package eventsink

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"time"

	"github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/nomad/stream"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// Config is what a Manager needs from the server.
type Config struct {
	// State returns the current store (a snapshot restore replaces it).
	State func() *state.StateStore
	// Broker is the server's event broker.
	Broker *stream.EventBroker
	// Apply commits a Raft entry; the leader's raftApply.
	Apply  func(t structs.MessageType, req any) (uint64, error)
	Logger hclog.Logger
	// Client posts the batches; nil uses one with timeouts that follows no redirects.
	Client *http.Client
	// MinBackoff and MaxBackoff bound the wait between retries; 0 uses the defaults.
	MinBackoff, MaxBackoff time.Duration
	// FlushInterval is how often a cursor that moved over batches the sink did not select is
	// committed; 0 uses 5s.
	FlushInterval time.Duration
	Now           func() time.Time
}

// Manager runs one worker per registered sink for one leadership term.
type Manager struct {
	cfg    Config
	logger hclog.Logger
}

// New returns a manager; Run starts it.
func New(cfg Config) *Manager {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Client == nil {
		cfg.Client = NewHTTPClient()
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = DefaultMinBackoff
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = 5 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Manager{cfg: cfg, logger: cfg.Logger}
}

// NewHTTPClient is the delivery client: every phase of a request is bounded, so a receiver
// that accepts the connection and never answers cannot hold a sink forever, and a redirect
// is a failure (following it would send the signed body somewhere not registered).
func NewHTTPClient() *http.Client {
	return &http.Client{
		Timeout: 15 * time.Second,
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   5 * time.Second,
			ResponseHeaderTimeout: 10 * time.Second,
			IdleConnTimeout:       90 * time.Second,
			MaxIdleConnsPerHost:   2,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

type running struct {
	sink   *structs.EventSink
	cancel context.CancelFunc
	done   chan struct{}
}

// Run keeps one worker per sink in the state until ctx ends, restarting a sink's worker when
// its delivery configuration changes; it returns after every worker has stopped.
func (m *Manager) Run(ctx context.Context) {
	if m.cfg.Broker == nil {
		// Without a broker there is nothing to deliver; the server refuses no sink for
		// it, but says why nothing arrives.
		m.logger.Warn("event broker disabled: event sinks deliver nothing")
		<-ctx.Done()
		return
	}
	// The client's kept-alive connections belong to this term too: their goroutines end here
	// rather than an idle timeout later.
	defer m.cfg.Client.CloseIdleConnections()
	workers := map[string]*running{}
	stop := func(id string) {
		w := workers[id]
		w.cancel()
		<-w.done
		delete(workers, id)
	}
	defer func() {
		for id := range workers {
			stop(id)
		}
	}()
	for ctx.Err() == nil {
		store := m.cfg.State()
		ws := memdb.NewWatchSet()
		ws.Add(store.AbandonCh())
		sinks, err := store.EventSinks(ws)
		if err != nil {
			m.logger.Error("reading event sinks failed", "error", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		seen := map[string]bool{}
		for _, sink := range sinks {
			seen[sink.ID] = true
			if w, ok := workers[sink.ID]; ok {
				if w.sink.SameDelivery(sink) {
					continue
				}
				stop(sink.ID)
			}
			wctx, cancel := context.WithCancel(ctx)
			w := &running{sink: sink, cancel: cancel, done: make(chan struct{})}
			workers[sink.ID] = w
			go func() {
				defer close(w.done)
				m.newWorker(sink).run(wctx)
			}()
		}
		for id := range workers {
			if !seen[id] {
				stop(id)
			}
		}
		_ = ws.WatchCtx(ctx)
	}
}

// worker delivers one sink. Its fields are owned by its goroutine.
type worker struct {
	m      *Manager
	sink   *structs.EventSink
	logger hclog.Logger
	// cursor is the last index delivered or passed over; committed the last one recorded
	// through Raft; lastError the error last recorded.
	cursor    uint64
	committed uint64
	lastError string
	started   bool
}

func (m *Manager) newWorker(sink *structs.EventSink) *worker {
	// The logger names the sink and its address, never its secret.
	return &worker{m: m, sink: sink, logger: m.logger.With("sink_id", sink.ID, "address", sink.Address)}
}

// errSinkGone ends a session whose sink was deleted; the manager stops the worker.
var errSinkGone = errors.New("event sink no longer registered")

func (w *worker) run(ctx context.Context) {
	sel, err := newSelector(w.sink)
	if err != nil {
		// Validated at registration; a filter that no longer compiles is recorded on the
		// sink rather than retried.
		w.recordError(fmt.Sprintf("filter: %v", err))
		<-ctx.Done()
		return
	}
	failures := 0
	for ctx.Err() == nil {
		err := w.session(ctx, sel)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, stream.ErrSlowSubscriber) {
			// The gap was sent; resubscribe from the new cursor at once.
			failures = 0
			continue
		}
		w.logger.Warn("event sink delivery interrupted", "error", err)
		wait := backoff(failures, w.m.cfg.MinBackoff, w.m.cfg.MaxBackoff)
		failures++
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
}

// session delivers from the committed cursor until an error: the subscription was closed,
// or the sink is gone.
func (w *worker) session(ctx context.Context, sel *selector) error {
	sink, err := w.m.cfg.State().EventSinkByID(nil, w.sink.ID)
	if err != nil {
		return err
	}
	if sink == nil {
		return errSinkGone
	}
	if !w.started || sink.LatestIndex > w.cursor {
		w.cursor = sink.LatestIndex
		w.started = true
	}
	w.committed, w.lastError = sink.LatestIndex, sink.LastError

	broker := w.m.cfg.Broker
	if floor := broker.UnpublishedThrough(); w.cursor < floor {
		if err := w.deliverGap(ctx, sel, w.cursor, floor+1,
			"the events were applied before this server's restart or snapshot restore and never reached its event broker"); err != nil {
			return err
		}
	}
	sub, err := broker.Subscribe(&stream.SubscribeRequest{Topics: sink.Topics, Namespace: structs.AllNamespacesSentinel, Index: w.cursor})
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	for {
		nctx, cancel := context.WithTimeout(ctx, w.m.cfg.FlushInterval)
		batch, err := sub.Next(nctx)
		cancel()
		if gap := sub.TakeGap(); gap != nil {
			if gerr := w.deliverGap(ctx, sel, gap.LastIndex, gap.OldestIndex, gap.Reason); gerr != nil {
				return gerr
			}
		}
		if err != nil {
			if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
				w.commit(false)
				continue
			}
			return err
		}
		if batch.Index <= w.cursor {
			continue
		}
		events := sel.apply(batch)
		if len(events) == 0 {
			w.cursor = batch.Index
			continue
		}
		if err := w.post(ctx, structs.Events{Index: batch.Index, Events: events}); err != nil {
			return err
		}
		w.cursor = batch.Index
		w.commit(true)
	}
}

// deliverGap tells the receiver that the events after last and before oldest are lost, then
// re-sends the purges among them from the purge history, oldest first; the cursor then
// stands before oldest.
func (w *worker) deliverGap(ctx context.Context, sel *selector, last, oldest uint64, reason string) error {
	if oldest <= last+1 {
		return nil
	}
	w.logger.Warn("event sink missed events; re-sending purges from the purge history",
		"last_index", last, "oldest_index", oldest, "reason", reason)
	frame := structs.Events{Index: last, Events: []structs.Event{{
		Topic: structs.TopicSink, Type: structs.TypeEventsLost, Key: w.sink.ID, Index: last,
		Payload: &structs.EventSinkGap{LastIndex: last, OldestIndex: oldest, Reason: reason},
	}}}
	if err := w.post(ctx, frame); err != nil {
		return err
	}
	records, err := w.m.cfg.State().PurgeRecords(nil)
	if err != nil {
		return err
	}
	sort.Slice(records, func(i, j int) bool {
		if records[i].CreateIndex != records[j].CreateIndex {
			return records[i].CreateIndex < records[j].CreateIndex
		}
		return records[i].ID < records[j].ID
	})
	for _, rec := range records {
		if rec.CreateIndex <= last || rec.CreateIndex >= oldest {
			continue
		}
		ev := purgeEvent(rec)
		if !sel.selects(&ev) {
			continue
		}
		if err := w.post(ctx, structs.Events{Index: rec.CreateIndex, Events: []structs.Event{ev}}); err != nil {
			return err
		}
		w.cursor = max(w.cursor, rec.CreateIndex)
		w.commit(true)
	}
	w.cursor = max(w.cursor, oldest-1)
	w.commit(true)
	return nil
}

// post delivers one batch, retrying in place until the receiver acknowledges it or ctx ends:
// nothing after it is sent before, so the receiver sees batches in order.
func (w *worker) post(ctx context.Context, batch structs.Events) error {
	body, err := json.Marshal(&batch)
	if err != nil {
		// An event that cannot be encoded would block the sink forever; it is reported
		// and passed over.
		w.logger.Error("encoding a batch for an event sink failed; skipping it", "index", batch.Index, "error", err)
		w.recordError(fmt.Sprintf("encoding the batch at index %d: %v", batch.Index, err))
		return nil
	}
	signature := Sign(w.sink.Secret, body)
	for attempt := 0; ; attempt++ {
		err := w.send(ctx, body, signature, batch.Index)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		w.logger.Debug("event sink delivery failed; retrying", "index", batch.Index, "attempt", attempt+1, "error", err)
		w.recordError(err.Error())
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff(attempt, w.m.cfg.MinBackoff, w.m.cfg.MaxBackoff)):
		}
	}
}

// IndexHeader carries the batch's index, so a receiver can see it without parsing the body.
const IndexHeader = "X-Nomad-Index"

func (w *worker) send(ctx context.Context, body []byte, signature string, index uint64) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.sink.Address, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SignatureHeader, signature)
	req.Header.Set(IndexHeader, fmt.Sprint(index))
	req.Header.Set("User-Agent", "nomad-event-sink")
	resp, err := w.m.cfg.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("receiver answered %s", resp.Status)
	}
	return nil
}

// commit records the cursor through Raft: after a delivery always (it clears the last
// error), otherwise only when it moved. A failure is logged, not retried: the cursor is
// committed again with the next delivery, and meanwhile a restart re-sends a little more.
func (w *worker) commit(delivered bool) {
	if !delivered && w.cursor <= w.committed {
		return
	}
	req := &structs.EventSinkProgressRequest{ID: w.sink.ID, LatestIndex: w.cursor, Delivered: delivered}
	if delivered {
		req.DeliveryTime = w.m.cfg.Now().UnixNano()
	}
	if _, err := w.m.cfg.Apply(structs.EventSinkProgressRequestType, req); err != nil {
		w.logger.Warn("committing an event sink's cursor failed", "index", w.cursor, "error", err)
		return
	}
	w.committed = w.cursor
	if delivered {
		w.lastError = ""
	}
}

// recordError records a failed attempt on the sink, once per distinct error, so a receiver
// that is down for a day costs one Raft entry, not one per retry.
func (w *worker) recordError(msg string) {
	if len(msg) > structs.EventSinkErrorMax {
		msg = msg[:structs.EventSinkErrorMax]
	}
	if msg == w.lastError {
		return
	}
	req := &structs.EventSinkProgressRequest{ID: w.sink.ID, LatestIndex: w.committed, LastError: msg, LastErrorTime: w.m.cfg.Now().UnixNano()}
	if _, err := w.m.cfg.Apply(structs.EventSinkProgressRequestType, req); err != nil {
		w.logger.Warn("recording an event sink's error failed", "error", err)
		return
	}
	w.lastError = msg
}
