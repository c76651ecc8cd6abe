package fsm

import (
	"testing"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// The sink entries apply in order: a registration at its index, progress that never moves the
// cursor back, and a delete; none of them publishes events (the table is silent).
func TestFSM_EventSinkEntries(t *testing.T) {
	f := testFSM(t)
	sink := &structs.EventSink{ID: "alerts", Type: structs.EventSinkTypeWebhook, Address: "https://h.example/",
		Topics: map[structs.Topic][]string{structs.TopicJob: {"*"}}, Secret: "0123456789abcdef"}
	must.Nil(t, applyEntry(t, f, 20, structs.EventSinkUpsertRequestType, &structs.EventSinkUpsertRequest{Sink: sink}))
	must.Nil(t, applyEntry(t, f, 21, structs.EventSinkProgressRequestType, &structs.EventSinkProgressRequest{ID: "alerts", LatestIndex: 30, Delivered: true}))
	must.Nil(t, applyEntry(t, f, 22, structs.EventSinkProgressRequestType, &structs.EventSinkProgressRequest{ID: "alerts", LatestIndex: 25, LastError: "boom"}))
	got, err := f.State().EventSinkByID(nil, "alerts")
	must.NoError(t, err)
	must.Eq(t, uint64(30), got.LatestIndex)
	must.Eq(t, "boom", got.LastError)
	must.Eq(t, "0123456789abcdef", got.Secret, must.Sprint("the state keeps the secret for the next leader"))
	must.Eq(t, "", structs.MessageTypes[structs.EventSinkProgressRequestType].EventType)

	must.Nil(t, applyEntry(t, f, 23, structs.EventSinkDeleteRequestType, &structs.EventSinkDeleteRequest{ID: "alerts"}))
	got, err = f.State().EventSinkByID(nil, "alerts")
	must.NoError(t, err)
	must.Nil(t, got)
	resp := applyEntry(t, f, 24, structs.EventSinkDeleteRequestType, &structs.EventSinkDeleteRequest{ID: "alerts"})
	must.Eq(t, 404, structs.ErrorCode(resp.(error)))
}
