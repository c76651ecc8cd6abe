package state

import (
	"testing"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func testSink(id string) *structs.EventSink {
	return &structs.EventSink{ID: id, Type: structs.EventSinkTypeWebhook, Address: "http://127.0.0.1:1/hook",
		Topics: map[structs.Topic][]string{structs.TopicJob: {"*"}}, Secret: "0123456789abcdef"}
}

// A new sink starts at its registration index; a replacement keeps the cursor and the last
// error; progress never moves the cursor back, and a delivery clears the error.
func TestEventSinks_CursorLifecycle(t *testing.T) {
	s := testStateStore(t)
	mustApply(t, s, structs.EventSinkUpsertRequestType, 10, nil, func(txn *Txn) error {
		return s.UpsertEventSinkTxn(txn, testSink("a"))
	})
	got, err := s.EventSinkByID(nil, "a")
	must.NoError(t, err)
	must.Eq(t, uint64(10), got.LatestIndex)
	must.Eq(t, uint64(10), got.CreateIndex)

	progress := func(index uint64, req *structs.EventSinkProgressRequest) {
		t.Helper()
		mustApply(t, s, structs.EventSinkProgressRequestType, index, nil, func(txn *Txn) error {
			return s.UpdateEventSinkProgressTxn(txn, req)
		})
	}
	progress(11, &structs.EventSinkProgressRequest{ID: "a", LatestIndex: 40, Delivered: true, DeliveryTime: 7})
	progress(12, &structs.EventSinkProgressRequest{ID: "a", LatestIndex: 30, LastError: "503", LastErrorTime: 8})
	got, _ = s.EventSinkByID(nil, "a")
	must.Eq(t, uint64(40), got.LatestIndex, must.Sprint("a stale cursor must not move it back"))
	must.Eq(t, "503", got.LastError)
	must.Eq(t, uint64(10), got.ModifyIndex, must.Sprint("progress is not a configuration change"))

	replaced := testSink("a")
	replaced.Address = "https://elsewhere.example/"
	mustApply(t, s, structs.EventSinkUpsertRequestType, 13, nil, func(txn *Txn) error {
		return s.UpsertEventSinkTxn(txn, replaced)
	})
	got, _ = s.EventSinkByID(nil, "a")
	must.Eq(t, uint64(40), got.LatestIndex)
	must.Eq(t, "503", got.LastError)
	must.Eq(t, uint64(10), got.CreateIndex)
	must.Eq(t, uint64(13), got.ModifyIndex)
	must.Eq(t, "https://elsewhere.example/", got.Address)

	progress(14, &structs.EventSinkProgressRequest{ID: "a", LatestIndex: 41, Delivered: true})
	got, _ = s.EventSinkByID(nil, "a")
	must.Eq(t, "", got.LastError)
	must.Eq(t, uint64(41), got.LatestIndex)

	// Progress for a sink deleted meanwhile does not bring it back.
	mustApply(t, s, structs.EventSinkDeleteRequestType, 15, nil, func(txn *Txn) error {
		return s.DeleteEventSinkTxn(txn, "a")
	})
	progress(16, &structs.EventSinkProgressRequest{ID: "a", LatestIndex: 50, Delivered: true})
	got, _ = s.EventSinkByID(nil, "a")
	must.Nil(t, got)
	err = applyTxn(s, structs.EventSinkDeleteRequestType, 17, nil, func(txn *Txn) error { return s.DeleteEventSinkTxn(txn, "a") })
	must.Eq(t, 404, structs.ErrorCode(err))
}
