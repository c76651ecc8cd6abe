package nomad

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/nomad/stream"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestJobProtection_Endpoint: only protect-job (never write, never purge-job) sets protection;
// a protected job's purge is a 409 for every token, management included, and writes nothing;
// a stop still works; forced GC keeps it; the change is published with its actor.
func TestJobProtection_Endpoint(t *testing.T) {
	srv, mgmt := testACLServer(t, nil)
	registerJob(t, srv, mgmt, mock.Job())
	writer := clientToken(t, srv, mgmt, "writer", `namespace "default" { policy = "write" }`)
	protector := clientToken(t, srv, mgmt, "protector", `namespace "default" { capabilities = ["protect-job", "read-job"] }`)

	setProtection := func(token string, protected bool, reason string) error {
		var reply structs.JobProtectionResponse
		return srv.Endpoints.Job.SetProtection(&structs.JobProtectionRequest{JobID: "web", Protected: protected, Reason: reason,
			WriteRequest: structs.WriteRequest{AuthToken: token}}, &reply)
	}
	purge := func(token string) error {
		var reply structs.JobDeregisterResponse
		return srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{JobID: "web", Purge: true,
			WriteRequest: structs.WriteRequest{AuthToken: token}}, &reply)
	}

	err := setProtection(writer.SecretID, true, "billing")
	must.Eq(t, 403, structs.ErrorCode(err))
	must.StrHasPrefix(t, "Permission denied", err.Error())
	must.StrContains(t, err.Error(), "protect-job")

	must.Eq(t, 400, structs.ErrorCode(setProtection(protector.SecretID, true, "")))
	must.Eq(t, 400, structs.ErrorCode(setProtection(protector.SecretID, true, strings.Repeat("x", 257))))
	var missing structs.JobProtectionResponse
	err = srv.Endpoints.Job.SetProtection(&structs.JobProtectionRequest{JobID: "nope", Protected: true, Reason: "x",
		WriteRequest: structs.WriteRequest{AuthToken: protector.SecretID}}, &missing)
	must.Eq(t, 404, structs.ErrorCode(err))

	sub, err := srv.EventBroker().Subscribe(&stream.SubscribeRequest{
		Topics: map[structs.Topic][]string{structs.TopicJob: {"web"}}, Namespace: "default", Index: srv.raft.AppliedIndex(),
		Token: mgmt,
	})
	must.NoError(t, err)
	defer sub.Unsubscribe()
	must.NoError(t, setProtection(protector.SecretID, true, "billing depends on it"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	batch, err := sub.Next(ctx)
	must.NoError(t, err)
	must.Len(t, 1, batch.Events)
	must.Eq(t, structs.TypeJobProtectionChanged, batch.Events[0].Type)
	payload := batch.Events[0].Payload.(*structs.JobProtectionEvent)
	must.True(t, payload.Protection.Protected)
	must.Eq(t, protector.AccessorID, payload.Actor.AccessorID)

	var got structs.JobProtectionGetResponse
	must.NoError(t, srv.Endpoints.Job.GetProtection(&structs.JobSpecificRequest{JobID: "web",
		QueryOptions: structs.QueryOptions{AuthToken: protector.SecretID}}, &got))
	must.True(t, got.Protection.Protected)
	must.Eq(t, "billing depends on it", got.Protection.Reason)
	must.Eq(t, "protector", got.Protection.Actor.Name)
	must.Positive(t, got.Protection.ModifyTime)

	for name, token := range map[string]string{"management": mgmt, "writer": writer.SecretID} {
		t.Run("purge as "+name, func(t *testing.T) {
			// The scheduler may write evaluations meanwhile; what a purge writes must not move.
			indexes := func() []uint64 {
				return []uint64{srv.State().Index("jobs"), srv.State().Index("job_version"), srv.State().Index("purge_history")}
			}
			before := indexes()
			err := purge(token)
			must.Eq(t, 409, structs.ErrorCode(err))
			must.StrContains(t, err.Error(), "protected")
			must.StrContains(t, err.Error(), "billing depends on it")
			must.Eq(t, before, indexes())
		})
	}

	var stop structs.JobDeregisterResponse
	must.NoError(t, srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{JobID: "web",
		WriteRequest: structs.WriteRequest{AuthToken: mgmt}}, &stop))
	_, err = srv.runJobGC(true, nil)
	must.NoError(t, err)
	job, err := srv.State().JobByID(nil, "default", "web")
	must.NoError(t, err)
	must.NotNil(t, job)
	must.True(t, job.Stop)

	must.NoError(t, setProtection(protector.SecretID, false, ""))
	must.NoError(t, purge(writer.SecretID))
	job, err = srv.State().JobByID(nil, "default", "web")
	must.NoError(t, err)
	must.Nil(t, job)
}
