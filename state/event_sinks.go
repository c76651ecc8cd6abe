package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

// tableEventSinks holds the registered event sinks with their delivery cursors. It is in
// snapshots like every table, so a restarted or new leader resumes each sink where the last
// acknowledged delivery left it.
const tableEventSinks = "event_sinks"

func init() {
	registerTable(tableEventSinks, &structs.EventSink{}, idIndex(field("ID")))
}

// UpsertEventSinkTxn registers a sink or replaces one's configuration. A new sink's cursor is
// the index it is registered at; a replaced sink keeps its cursor and last error.
func (s *StateStore) UpsertEventSinkTxn(txn *Txn, sink *structs.EventSink) error {
	if sink == nil || sink.ID == "" {
		return structs.BadRequest("missing sink ID")
	}
	c := *sink
	c.CreateIndex, c.ModifyIndex = txn.Index, txn.Index
	c.LatestIndex, c.LastError, c.LastErrorTime, c.LastDeliveryTime = txn.Index, "", 0, 0
	prev, err := eventSinkTxn(txn.Txn, nil, sink.ID)
	if err != nil {
		return err
	}
	if prev != nil {
		c.CreateIndex = prev.CreateIndex
		c.LatestIndex, c.LastError, c.LastErrorTime, c.LastDeliveryTime = prev.LatestIndex, prev.LastError, prev.LastErrorTime, prev.LastDeliveryTime
	}
	if err := txn.Insert(tableEventSinks, &c); err != nil {
		return fmt.Errorf("state: event sink insert: %w", err)
	}
	return txn.bumpIndex(tableEventSinks)
}

// DeleteEventSinkTxn removes a sink; an unknown ID is a 404.
func (s *StateStore) DeleteEventSinkTxn(txn *Txn, id string) error {
	prev, err := eventSinkTxn(txn.Txn, nil, id)
	if err != nil {
		return err
	}
	if prev == nil {
		return structs.NewErrCode(404, "event sink not found")
	}
	if err := txn.Delete(tableEventSinks, prev); err != nil {
		return fmt.Errorf("state: event sink delete: %w", err)
	}
	return txn.bumpIndex(tableEventSinks)
}

// UpdateEventSinkProgressTxn records a sink's delivery. The cursor only moves forward: a
// leader that lost its term may still commit a stale cursor, which must not undo a newer
// one. A sink deleted meanwhile is left deleted.
func (s *StateStore) UpdateEventSinkProgressTxn(txn *Txn, req *structs.EventSinkProgressRequest) error {
	prev, err := eventSinkTxn(txn.Txn, nil, req.ID)
	if err != nil || prev == nil {
		return err
	}
	c := *prev
	c.LatestIndex = max(prev.LatestIndex, req.LatestIndex)
	if req.Delivered {
		c.LastError, c.LastErrorTime = "", 0
		if req.DeliveryTime != 0 {
			c.LastDeliveryTime = req.DeliveryTime
		}
	}
	if req.LastError != "" {
		c.LastError, c.LastErrorTime = req.LastError, req.LastErrorTime
	}
	// ModifyIndex stays the configuration's: progress is not a change of the sink.
	if err := txn.Insert(tableEventSinks, &c); err != nil {
		return fmt.Errorf("state: event sink progress: %w", err)
	}
	return txn.bumpIndex(tableEventSinks)
}

func eventSinkTxn(txn *memdb.Txn, ws memdb.WatchSet, id string) (*structs.EventSink, error) {
	return first[*structs.EventSink](txn, ws, "event sink lookup", tableEventSinks, indexID, id)
}

// EventSinkByID reads one sink, with its secret; nil when unknown.
func (s *StateStore) EventSinkByID(ws memdb.WatchSet, id string) (*structs.EventSink, error) {
	return eventSinkTxn(s.db.Txn(false), ws, id)
}

// EventSinks lists every sink by ID, with their secrets.
func (s *StateStore) EventSinks(ws memdb.WatchSet) ([]*structs.EventSink, error) {
	return list[*structs.EventSink](s.db.Txn(false), ws, "event sink list", tableEventSinks, indexID)
}
