package nomad

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/nomad/eventsink"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestEventSink_ResumesAfterLeaderChange: the cursor lives in Raft, so when the leader goes
// away the new one delivers from the last acknowledged batch: a purge made before the change
// arrives once acknowledged, and one made after it arrives from the new leader.
func TestEventSink_ResumesAfterLeaderChange(t *testing.T) {
	servers := testCluster(t, 3)
	const secret = "leader-change-secret-0123"
	var mu sync.Mutex
	var purged []string
	var indexes []uint64
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !eventsink.Verify(secret, body, r.Header.Get(eventsink.SignatureHeader)) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var batch struct {
			Index  uint64
			Events []struct {
				Type    string
				Payload struct {
					Purge bool
					Job   struct{ ID string }
				}
			}
		}
		must.NoError(t, json.Unmarshal(body, &batch))
		mu.Lock()
		defer mu.Unlock()
		indexes = append(indexes, batch.Index)
		for _, e := range batch.Events {
			if e.Type == "JobDeregistered" && e.Payload.Purge {
				purged = append(purged, e.Payload.Job.ID)
			}
		}
	}))
	defer rcv.Close()
	delivered := func(id string) bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(purged, id)
	}

	leader := leaderOf(servers)
	must.NoError(t, leader.Endpoints.EventSink.Upsert(&structs.EventSinkUpsertRequest{Sink: &structs.EventSink{
		ID: "alerts", Type: structs.EventSinkTypeWebhook, Address: rcv.URL, Secret: secret,
		Topics: map[structs.Topic][]string{structs.TopicJob: {"*"}}, Filter: `Payload.Purge == true`,
	}}, &structs.GenericResponse{}))
	purge := func(srv *Server, id string) {
		t.Helper()
		var reg structs.JobRegisterResponse
		must.NoError(t, srv.Endpoints.Job.Register(&structs.JobRegisterRequest{Job: mock.JobWithID(id),
			WriteRequest: structs.WriteRequest{Namespace: "default"}}, &reg))
		must.NoError(t, srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{JobID: id, Purge: true,
			WriteRequest: structs.WriteRequest{Namespace: "default"}}, &structs.JobDeregisterResponse{}))
	}
	purge(leader, "before")
	waitFor(t, 15*time.Second, func() bool { return delivered("before") })
	// The acknowledgement is committed before the leader goes.
	waitFor(t, 10*time.Second, func() bool {
		s, err := leader.State().EventSinkByID(nil, "alerts")
		return err == nil && s.LatestIndex > 0 && s.LastDeliveryTime != 0
	})

	must.NoError(t, leader.Shutdown())
	var rest []*Server
	for _, s := range servers {
		if s != leader {
			rest = append(rest, s)
		}
	}
	waitFor(t, 20*time.Second, func() bool { return leaderOf(rest) != nil })
	next := leaderOf(rest)
	purge(next, "after")
	waitFor(t, 20*time.Second, func() bool { return delivered("after") })

	mu.Lock()
	defer mu.Unlock()
	must.True(t, slices.IsSorted(indexes), must.Sprintf("batches out of order: %v", indexes))
	var got structs.EventSinkResponse
	must.NoError(t, next.Endpoints.EventSink.Get(&structs.EventSinkSpecificRequest{ID: "alerts"}, &got))
	must.Eq(t, "", got.Sink.Secret, must.Sprint("reads never carry the secret"))
}
