package nomad

import (
	"context"
	"testing"
	"time"

	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/nomad/stream"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func registerJob(t *testing.T, srv *Server, token string, job *structs.Job) *structs.JobRegisterResponse {
	t.Helper()
	var reply structs.JobRegisterResponse
	must.NoError(t, srv.Endpoints.Job.Register(&structs.JobRegisterRequest{
		Job: job, WriteRequest: structs.WriteRequest{Namespace: job.Namespace, AuthToken: token},
	}, &reply))
	return &reply
}

// clientToken creates a policy with rules and a client token holding it.
func clientToken(t *testing.T, srv *Server, mgmt, name, rules string) *structs.ACLToken {
	t.Helper()
	var gr structs.GenericResponse
	must.NoError(t, srv.Endpoints.ACL.UpsertPolicies(&structs.ACLPolicyUpsertRequest{
		Policies:     []*structs.ACLPolicy{{Name: name, Rules: rules}},
		WriteRequest: structs.WriteRequest{AuthToken: mgmt},
	}, &gr))
	var tr structs.ACLTokenUpsertResponse
	must.NoError(t, srv.Endpoints.ACL.UpsertTokens(&structs.ACLTokenUpsertRequest{
		Tokens:       []*structs.ACLToken{{Name: name, Type: structs.ACLClientToken, Policies: []string{name}}},
		WriteRequest: structs.WriteRequest{AuthToken: mgmt},
	}, &tr))
	return tr.Tokens[0]
}

func TestJobEndpoint_DeregisterACL(t *testing.T) {
	srv, mgmt := testACLServer(t, nil)
	policies := map[string]string{
		"deployer": `namespace "default" { capabilities = ["list-jobs", "read-job", "submit-job", "scale-job"] }`,
		"stopper":  `namespace "default" { capabilities = ["deregister-job"] }`,
		"purger":   `namespace "default" { capabilities = ["purge-job"] }`,
		"writer":   `namespace "default" { policy = "write" }`,
		"reader":   `namespace "default" { policy = "read" }`,
		"other":    `namespace "other" { policy = "write" }`,
	}
	tokens := map[string]string{"management": mgmt, "anonymous": ""}
	for name, rules := range policies {
		tokens[name] = clientToken(t, srv, mgmt, name, rules).SecretID
	}

	cases := []struct {
		name      string
		token     string
		purge     bool
		wantAllow bool
	}{
		{name: "deployer stops", token: "deployer", wantAllow: true},
		{name: "deployer cannot purge", token: "deployer", purge: true},
		{name: "stopper stops", token: "stopper", wantAllow: true},
		{name: "stopper cannot purge", token: "stopper", purge: true},
		{name: "purger stops", token: "purger", wantAllow: true},
		{name: "purger purges", token: "purger", purge: true, wantAllow: true},
		{name: "write policy purges", token: "writer", purge: true, wantAllow: true},
		{name: "reader cannot stop", token: "reader"},
		{name: "other namespace cannot stop", token: "other"},
		{name: "anonymous cannot purge", token: "anonymous", purge: true},
		{name: "management purges", token: "management", purge: true, wantAllow: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := mock.Job()
			registerJob(t, srv, mgmt, job)
			before := srv.State().LatestIndex()
			stored, err := srv.State().JobByID(nil, job.Namespace, job.ID)
			must.NoError(t, err)

			var reply structs.JobDeregisterResponse
			err = srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{
				JobID: job.ID, Purge: tc.purge,
				WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: tokens[tc.token]},
			}, &reply)
			if tc.wantAllow {
				must.NoError(t, err)
				return
			}
			must.Error(t, err)
			must.Eq(t, 403, structs.ErrorCode(err))
			must.StrHasPrefix(t, "Permission denied", err.Error())
			// A denied request writes nothing: not even an index bump.
			must.Eq(t, before, srv.State().LatestIndex())
			after, err := srv.State().JobByID(nil, job.Namespace, job.ID)
			must.NoError(t, err)
			must.Eq(t, stored, after)
		})
	}
}

func TestJobEndpoint_DeniedPurgeNamesCapability(t *testing.T) {
	srv, mgmt := testACLServer(t, nil)
	tok := clientToken(t, srv, mgmt, "deployer", `namespace "default" { capabilities = ["submit-job"] }`)
	registerJob(t, srv, mgmt, mock.Job())
	var reply structs.JobDeregisterResponse
	err := srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{
		JobID: "web", Purge: true, WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: tok.SecretID},
	}, &reply)
	must.EqError(t, err, `Permission denied: purge-job capability required in namespace "default"`)
	must.StrNotContains(t, err.Error(), tok.SecretID)
}

func TestJobEndpoint_UnknownAndExpiredTokens(t *testing.T) {
	srv, mgmt := testACLServer(t, nil)
	registerJob(t, srv, mgmt, mock.Job())
	var reply structs.SingleJobResponse
	err := srv.Endpoints.Job.GetJob(&structs.JobSpecificRequest{JobID: "web",
		QueryOptions: structs.QueryOptions{Namespace: "default", AuthToken: "5b2b8b2c-0000-4000-8000-000000000000"}}, &reply)
	must.EqError(t, err, "Permission denied: ACL token not found")
	must.Eq(t, 403, structs.ErrorCode(err))
}

func TestJobEndpoint_StopThenPurgeEvents(t *testing.T) {
	srv, mgmt := testACLServer(t, nil)
	purger := clientToken(t, srv, mgmt, "purger", `namespace "default" { capabilities = ["purge-job", "submit-job"] }`)
	sub, err := srv.Endpoints.Event.Subscribe(&EventStreamRequest{
		Topics: map[structs.Topic][]string{structs.TopicJob: {"web"}}, Namespace: "default",
		Index: srv.State().LatestIndex() + 1, AuthToken: mgmt,
	})
	must.NoError(t, err)
	defer sub.Unsubscribe()

	registerJob(t, srv, purger.SecretID, mock.Job())
	for _, purge := range []bool{false, true} {
		var reply structs.JobDeregisterResponse
		must.NoError(t, srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{JobID: "web", Purge: purge,
			WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: purger.SecretID}}, &reply))
	}

	want := []struct {
		typ   string
		purge bool
	}{{"JobRegistered", false}, {"JobDeregistered", false}, {"JobDeregistered", true}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, w := range want {
		batch, err := sub.Next(ctx)
		must.NoError(t, err)
		must.Len(t, 1, batch.Events)
		ev := batch.Events[0]
		must.Eq(t, w.typ, ev.Type)
		payload := ev.Payload.(*structs.JobEvent)
		must.Eq(t, w.purge, payload.Purge)
		must.Eq(t, w.purge, payload.Deleted)
		must.Eq(t, purger.AccessorID, payload.Actor.AccessorID)
		must.Eq(t, "purger", payload.Actor.Name)
	}
}

func TestJobEndpoint_ScaleToZeroKeepsJobAndGCKeepsIt(t *testing.T) {
	srv := testServer(t, nil)
	registerJob(t, srv, "", mock.Job())
	zero := int64(0)
	var reply structs.JobRegisterResponse
	must.NoError(t, srv.Endpoints.Job.Scale(&structs.JobScaleRequest{JobID: "web", Count: &zero,
		Target: map[string]string{"Group": "web"}, WriteRequest: structs.WriteRequest{Namespace: "default"}}, &reply))
	_, err := srv.runJobGC(true, nil)
	must.NoError(t, err)
	job, err := srv.State().JobByID(nil, "default", "web")
	must.NoError(t, err)
	must.NotNil(t, job)
	must.Eq(t, 0, *job.TaskGroups[0].Count)
}

func TestJobGC_RemovesStoppedJobsWithRecordsButKeepsTagged(t *testing.T) {
	srv := testServer(t, func(c *Config) { c.JobGCThreshold = time.Hour })
	for _, id := range []string{"stopped", "tagged", "running"} {
		registerJob(t, srv, "", mock.JobWithID(id))
	}
	var tr structs.JobTagResponse
	must.NoError(t, srv.Endpoints.Job.TagVersion(&structs.JobTagRequest{JobID: "tagged", Name: "golden",
		WriteRequest: structs.WriteRequest{Namespace: "default"}}, &tr))
	for _, id := range []string{"stopped", "tagged"} {
		var dr structs.JobDeregisterResponse
		must.NoError(t, srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{JobID: id,
			WriteRequest: structs.WriteRequest{Namespace: "default"}}, &dr))
	}
	// Within the threshold nothing goes.
	n, err := srv.runJobGC(false, nil)
	must.NoError(t, err)
	must.Eq(t, 0, n)

	sub, err := srv.Endpoints.Event.Subscribe(&EventStreamRequest{Topics: map[structs.Topic][]string{structs.TopicJob: {"*"}},
		Index: srv.State().LatestIndex() + 1})
	must.NoError(t, err)
	defer sub.Unsubscribe()

	n, err = srv.runJobGC(true, nil)
	must.NoError(t, err)
	must.Eq(t, 1, n)
	for id, wantKept := range map[string]bool{"stopped": false, "tagged": true, "running": true} {
		job, err := srv.State().JobByID(nil, "default", id)
		must.NoError(t, err)
		must.Eq(t, wantKept, job != nil, must.Sprintf("job %s", id))
	}
	records, err := srv.State().PurgeRecords(nil)
	must.NoError(t, err)
	must.Len(t, 1, records)
	must.Eq(t, structs.PurgeReasonGC, records[0].Reason)
	must.Eq(t, structs.ActorJobGC, records[0].Actor)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	batch, err := sub.Next(ctx)
	must.NoError(t, err)
	must.Eq(t, "JobBatchDeregistered", batch.Events[0].Type)
	p := batch.Events[0].Payload.(*structs.JobEvent)
	must.True(t, p.Purge)
	must.Eq(t, "job-gc", p.Actor.Name)
	must.Eq(t, "system", p.Actor.Type)
}

func TestPurgeHistory_RestoreAndConflict(t *testing.T) {
	srv := testServer(t, nil)
	registerJob(t, srv, "", mock.Job())
	var dr structs.JobDeregisterResponse
	must.NoError(t, srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{JobID: "web", Purge: true,
		WriteRequest: structs.WriteRequest{Namespace: "default"}}, &dr))
	var list structs.PurgeRecordListResponse
	must.NoError(t, srv.Endpoints.PurgeRecord.List(&structs.PurgeRecordListRequest{QueryOptions: structs.QueryOptions{Namespace: "*"}}, &list))
	must.Len(t, 1, list.Records)

	var rr structs.JobRegisterResponse
	must.NoError(t, srv.Endpoints.PurgeRecord.Restore(&structs.PurgeRecordRestoreRequest{ID: list.Records[0].ID}, &rr))
	must.NotEq(t, "", rr.EvalID)
	job, err := srv.State().JobByID(nil, "default", "web")
	must.NoError(t, err)
	must.NotNil(t, job)
	must.Eq(t, uint64(0), job.Version)

	err = srv.Endpoints.PurgeRecord.Restore(&structs.PurgeRecordRestoreRequest{ID: list.Records[0].ID}, &rr)
	must.Eq(t, 409, structs.ErrorCode(err))
}

func TestPurgeHistory_Retention(t *testing.T) {
	srv := testServer(t, func(c *Config) {
		c.PurgeHistoryRetention = 50 * time.Millisecond
		c.ReapInterval = 20 * time.Millisecond
	})
	registerJob(t, srv, "", mock.Job())
	var dr structs.JobDeregisterResponse
	must.NoError(t, srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{JobID: "web", Purge: true,
		WriteRequest: structs.WriteRequest{Namespace: "default"}}, &dr))
	waitFor(t, 5*time.Second, func() bool {
		records, err := srv.State().PurgeRecords(nil)
		return err == nil && len(records) == 0
	})
}

func TestACL_ExpiredTokenRefusedThenReaped(t *testing.T) {
	srv, mgmt := testACLServer(t, func(c *Config) {
		c.ACLTokenMinExpirationTTL = time.Millisecond
		c.ReapInterval = 20 * time.Millisecond
	})
	clientToken(t, srv, mgmt, "reader", `namespace "default" { policy = "read" }`)
	var tr structs.ACLTokenUpsertResponse
	must.NoError(t, srv.Endpoints.ACL.UpsertTokens(&structs.ACLTokenUpsertRequest{
		Tokens:       []*structs.ACLToken{{Name: "short", Type: structs.ACLClientToken, Policies: []string{"reader"}, ExpirationTTL: 30 * time.Millisecond}},
		WriteRequest: structs.WriteRequest{AuthToken: mgmt},
	}, &tr))
	tok := tr.Tokens[0]
	sub, err := srv.Endpoints.Event.Subscribe(&EventStreamRequest{Topics: map[structs.Topic][]string{structs.TopicJob: {"*"}}, AuthToken: tok.SecretID})
	must.NoError(t, err)
	waitFor(t, 5*time.Second, func() bool {
		_, _, err := srv.resolveACL(tok.SecretID)
		return err != nil
	})
	waitFor(t, 5*time.Second, func() bool {
		got, err := srv.State().ACLTokenByAccessorID(nil, tok.AccessorID)
		return err == nil && got == nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = sub.Next(ctx)
	must.ErrorIs(t, err, stream.ErrSubscriptionClosed)
}

func waitFor(t testing.TB, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
