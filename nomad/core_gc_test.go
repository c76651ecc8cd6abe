package nomad

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// A forced GC is done by the GC but asked for by a token: the purge record and the
// JobBatchDeregistered event name both, through the Raft entry and the real FSM, and neither
// carries the token's secret. A scheduled run names the GC alone.
func TestSecurity_ForcedGCRecordsRequestingToken(t *testing.T) {
	srv, mgmt := TestACLServer(t, nil)
	token, err := srv.State().ACLTokenBySecretID(nil, mgmt)
	must.NoError(t, err)
	want := &structs.Actor{AccessorID: token.AccessorID, Name: token.Name, Type: structs.ACLManagementToken}

	registerJob(t, srv, mgmt, mock.JobWithID("forced"))
	var dr structs.JobDeregisterResponse
	must.NoError(t, srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{JobID: "forced",
		WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: mgmt}}, &dr))

	sub, err := srv.Endpoints.Event.Subscribe(&EventStreamRequest{Topics: map[structs.Topic][]string{structs.TopicJob: {"*"}},
		Index: srv.State().LatestIndex() + 1, AuthToken: mgmt})
	must.NoError(t, err)
	defer sub.Unsubscribe()

	var gr structs.GenericResponse
	must.NoError(t, srv.Endpoints.System.GarbageCollect(&structs.WriteRequest{AuthToken: mgmt}, &gr))

	records, err := srv.State().PurgeRecords(nil)
	must.NoError(t, err)
	must.Len(t, 1, records)
	must.Eq(t, structs.ActorJobGC, records[0].Actor)
	must.Eq(t, want, records[0].ForcedBy)
	must.Eq(t, want, records[0].Stub().ForcedBy)
	raw, err := json.Marshal(records[0])
	must.NoError(t, err)
	must.StrNotContains(t, string(raw), mgmt)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	batch, err := sub.Next(ctx)
	must.NoError(t, err)
	must.Eq(t, "JobBatchDeregistered", batch.Events[0].Type)
	payload := batch.Events[0].Payload.(*structs.JobEvent)
	must.Eq(t, structs.ActorJobGC, payload.Actor)
	must.Eq(t, want, payload.ForcedBy)
	raw, err = json.Marshal(batch)
	must.NoError(t, err)
	must.StrNotContains(t, string(raw), mgmt)
	must.StrContains(t, string(raw), `"ForcedBy":{"AccessorID":"`+token.AccessorID)

	// A scheduled run has no requester to name.
	registerJob(t, srv, mgmt, mock.JobWithID("scheduled"))
	must.NoError(t, srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{JobID: "scheduled",
		WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: mgmt}}, &dr))
	_, err = srv.runJobGC(true, nil)
	must.NoError(t, err)
	records, err = srv.State().PurgeRecords(nil)
	must.NoError(t, err)
	for _, r := range records {
		if r.JobID == "scheduled" {
			must.Nil(t, r.ForcedBy)
			raw, err := json.Marshal(r.Stub())
			must.NoError(t, err)
			must.False(t, strings.Contains(string(raw), "ForcedBy"))
		}
	}
}
