package structs

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/shoenig/test/must"
)

// jsonKeys returns the top-level keys of a JSON object in document order.
func jsonKeys(t *testing.T, raw []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	must.NoError(t, err)
	must.Eq[json.Token](t, json.Delim('{'), tok)
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		must.NoError(t, err)
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		must.NoError(t, dec.Decode(&skip))
	}
	return keys
}

// The envelope's key order is what upstream Nomad 2.0.5 writes (see
// fixtures/upstream-nomad-2.0.5/event-stream-raw.ndjson); clients that read the stream as
// text rely on it as much as decoders rely on the names.
func TestEvent_EnvelopeJSON(t *testing.T) {
	ev := Event{
		Topic:     TopicJob,
		Type:      "JobRegistered",
		Key:       "web",
		Namespace: "default",
		Index:     14,
		Payload:   &JobEvent{Job: &Job{ID: "web"}},
	}
	raw, err := json.Marshal(ev)
	must.NoError(t, err)
	must.Eq(t, []string{"Topic", "Type", "Key", "Namespace", "FilterKeys", "Index", "Payload"},
		jsonKeys(t, raw))

	var decoded map[string]any
	must.NoError(t, json.Unmarshal(raw, &decoded))
	must.Nil(t, decoded["FilterKeys"])
	must.MapContainsKey(t, decoded, "FilterKeys")

	batch, err := json.Marshal(Events{Index: 14, Events: []Event{ev}})
	must.NoError(t, err)
	must.Eq(t, []string{"Index", "Events"}, jsonKeys(t, batch))
}

func TestJobEvent_JSON(t *testing.T) {
	cases := []struct {
		name     string
		payload  JobEvent
		wantKeys []string
	}{
		{
			name:     "plain stop omits the flags and the actor",
			payload:  JobEvent{Job: &Job{ID: "web", Stop: true}},
			wantKeys: []string{"Job"},
		},
		{
			name: "purge carries both flag names and the actor",
			payload: JobEvent{
				Job:     &Job{ID: "web"},
				Purge:   true,
				Deleted: true,
				Actor:   &Actor{AccessorID: "a-1", Name: "alice", Type: "client"},
			},
			wantKeys: []string{"Job", "Purge", "Deleted", "Actor"},
		},
		{
			name:     "register with an actor",
			payload:  JobEvent{Job: &Job{ID: "web"}, Actor: &Actor{Type: ActorTypeAnonymous}},
			wantKeys: []string{"Job", "Actor"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := json.Marshal(tc.payload)
			must.NoError(t, err)
			must.Eq(t, tc.wantKeys, jsonKeys(t, raw))

			var back JobEvent
			must.NoError(t, json.Unmarshal(raw, &back))
			must.Eq(t, tc.payload.Purge, back.Purge)
			must.Eq(t, tc.payload.Deleted, back.Deleted)
			must.Eq(t, tc.payload.Actor, back.Actor)
		})
	}
}
