package stream

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/nomadfork/nomad/structs"
)

// bufferItem is one published batch in a singly linked list that only grows at the tail.
// Everything but next is immutable once the item is reachable. next is set once, and ready is
// closed right after, so a reader that finds next nil can wait on ready; later next is cut
// back to nil when the successor is dropped (see eventBuffer). So "ready closed but next nil"
// means the successor is gone.
type bufferItem struct {
	events structs.Events
	// seq numbers items 1, 2, 3 … in publish order. Raft indexes cannot serve: they have
	// gaps, and a dropped item must be recognisable by position alone.
	seq   uint64
	next  atomic.Pointer[bufferItem]
	ready chan struct{}

	// views holds this batch as each subscriber view sees it (filtered, and encoded as JSON
	// when a stream asks), made by the first subscriber of that view to read it, so a
	// thousand subscribers of one view cost one filtering and one encoding. It lives and dies
	// with the item: bounded by the buffer's length times the number of distinct views.
	// firstView is the first view made, read without the lock: usually every subscriber has
	// the same one, and a thousand of them must not queue on viewsMu for each batch.
	firstView atomic.Pointer[batchView]
	viewsMu   sync.Mutex
	views     map[string]*batchView
}

// batchView is one view of a batch: the events that pass it (pass false when none does),
// and their JSON line once encoded.
type batchView struct {
	key        string
	filterOnce sync.Once
	events     structs.Events
	pass       bool

	encodeOnce sync.Once
	line       []byte
	err        error
}

func (it *bufferItem) view(f *eventFilter) *batchView {
	if v := it.firstView.Load(); v != nil && v.key == f.view {
		return v
	}
	it.viewsMu.Lock()
	defer it.viewsMu.Unlock()
	if v := it.firstView.Load(); v == nil {
		v = &batchView{key: f.view}
		it.firstView.Store(v)
		return v
	} else if v.key == f.view {
		return v
	}
	if it.views == nil {
		it.views = make(map[string]*batchView)
	}
	v, ok := it.views[f.view]
	if !ok {
		v = &batchView{key: f.view}
		it.views[f.view] = v
	}
	return v
}

// filteredFor returns the events of the batch that pass f, and whether any does.
func (it *bufferItem) filteredFor(f *eventFilter) (structs.Events, bool) {
	if f.everything {
		return it.events, true
	}
	v := it.view(f)
	v.filterOnce.Do(func() { v.events, v.pass = f.apply(it.events) })
	return v.events, v.pass
}

// encodedFor returns the batch as f sees it, encoded as one JSON line, or nil when no event
// passes f. Concurrent callers with the same view wait for one encoding.
func (it *bufferItem) encodedFor(f *eventFilter) ([]byte, error) {
	events, pass := it.filteredFor(f)
	if !pass {
		return nil, nil
	}
	v := it.view(f)
	v.encodeOnce.Do(func() {
		buf, err := json.Marshal(&events)
		if err != nil {
			v.err = fmt.Errorf("encoding events at index %d: %w", it.events.Index, err)
			return
		}
		v.line = append(buf, '\n')
	})
	return v.line, v.err
}

// closedCh is the ready channel of items created already linked (head markers).
var closedCh = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// eventBuffer retains the newest maxLen batches.
//
// head is a marker item that is never delivered: its next is the oldest retained batch, and
// its seq and events.Index are those of the newest batch dropped so far (0 before any drop).
// Subscribers start from the marker, and compare the seq of the item they are about to read
// with head's seq to tell whether it was dropped. Dropping allocates a new marker instead of
// editing the old one, because subscribers may hold the old marker as their cursor.
//
// Dropping an item also cuts the links into it (from its dropped predecessor and from the
// previous marker). A subscriber that stopped reading then pins only the item it holds, not
// every batch published since: without the cut, memory would grow with each stalled stream.
//
// The list is read without locks; mu only serialises writers (Publish) with each other, so a
// publish costs O(1) whatever the subscribers do.
type eventBuffer struct {
	mu          sync.Mutex
	tail        *bufferItem // guarded by mu
	lastDropped *bufferItem // guarded by mu; its next is the oldest retained item
	head        atomic.Pointer[bufferItem]
	length      atomic.Int64
	maxLen      int64
}

func newEventBuffer(maxLen int64) *eventBuffer {
	marker := &bufferItem{ready: make(chan struct{})}
	b := &eventBuffer{tail: marker, maxLen: maxLen}
	b.head.Store(marker)
	return b
}

// append links events after the tail and drops the oldest batch when over the bound.
func (b *eventBuffer) append(events structs.Events) {
	b.mu.Lock()
	defer b.mu.Unlock()

	item := &bufferItem{events: events, seq: b.tail.seq + 1, ready: make(chan struct{})}
	// Store before close: a reader woken by ready must find next set.
	b.tail.next.Store(item)
	close(b.tail.ready)
	b.tail = item

	n := b.length.Load() + 1
	if n <= b.maxLen {
		b.length.Store(n)
		return
	}
	// Over the bound means at least two batches are retained (maxLen >= 1), so the oldest one
	// has a successor for the new marker to point at.
	oldMarker := b.head.Load()
	oldest := oldMarker.next.Load()
	marker := &bufferItem{
		events: structs.Events{Index: oldest.events.Index},
		seq:    oldest.seq,
		ready:  closedCh,
	}
	marker.next.Store(oldest.next.Load())
	// The new head is visible before any link is cut, so a reader that finds a cut link
	// also finds the head that explains it.
	b.head.Store(marker)
	oldMarker.next.Store(nil)
	if b.lastDropped != nil {
		b.lastDropped.next.Store(nil)
	}
	b.lastDropped = oldest
	// Stored once, after the drop, so Len never reports more than maxLen.
	b.length.Store(n - 1)
}

func (b *eventBuffer) len() int { return int(b.length.Load()) }

// oldestIndex is the Index of the oldest retained batch; with none retained, the one after the
// newest dropped (the next to come).
func (b *eventBuffer) oldestIndex() uint64 {
	head := b.head.Load()
	if next := head.next.Load(); next != nil {
		return next.events.Index
	}
	return head.events.Index + 1
}
