package nomad

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// exposedJob is a batch job whose task exposes its default identity to the task.
func exposedJob(id string) *structs.Job {
	job := mock.BatchJob(id)
	job.TaskGroups[0].Tasks[0].Identity = &api.WorkloadIdentity{Env: true, File: true}
	return job
}

// bindPolicy writes a policy bound to the workload identities of job jobID.
func bindPolicy(t *testing.T, srv *Server, mgmt, name, rules, jobID string) {
	t.Helper()
	var gr structs.GenericResponse
	must.NoError(t, srv.Endpoints.ACL.UpsertPolicies(&structs.ACLPolicyUpsertRequest{
		Policies:     []*structs.ACLPolicy{{Name: name, Rules: rules, JobACL: &structs.JobACL{Namespace: "default", JobID: jobID}}},
		WriteRequest: structs.WriteRequest{AuthToken: mgmt},
	}, &gr))
}

// identityOf places an allocation of the stored job id on node and signs its task's default
// identity, returning the JWT and the claims' job ID.
func identityOf(t *testing.T, srv *Server, node *structs.Node, id, allocID string) (string, string) {
	t.Helper()
	stored, err := srv.State().JobByID(nil, "default", id)
	must.NoError(t, err)
	must.NotNil(t, stored)
	testPlaceAllocs(t, srv, stored, &structs.Allocation{ID: allocID, Name: id + ".web[0]", NodeID: node.ID, TaskGroup: "web", Job: stored})
	wi := signOne(t, srv, node, allocID, "default").JWT
	claims, _, err := srv.verifyWorkloadIdentity(srv.State(), wi, now())
	must.NoError(t, err)
	return wi, claims.JobID
}

// Issue 32 item 1: what only the server sets for the children it launches is refused from a
// submitter, on register (new job or update) and plan, with a 400 naming the field and
// nothing written.
func TestSecurity_ServerOwnedJobFieldsRefused(t *testing.T) {
	srv, mgmt := testACLServer(t, nil)
	registerJob(t, srv, mgmt, exposedJob("cleaner"))
	registerJob(t, srv, mgmt, exposedJob("mine"))
	dev := clientToken(t, srv, mgmt, "dev", `namespace "default" { capabilities = ["submit-job", "read-job", "list-jobs"] }`)

	cases := []struct {
		name      string
		id        string
		mutate    func(*structs.JobRegisterRequest)
		plan      bool
		wantField string
	}{
		{name: "new job naming a parent", id: "spoof", wantField: "ParentID",
			mutate: func(r *structs.JobRegisterRequest) { r.Job.ParentID = "cleaner" }},
		{name: "update setting a parent", id: "mine", wantField: "ParentID",
			mutate: func(r *structs.JobRegisterRequest) { r.Job.ParentID = "cleaner" }},
		{name: "dispatched", id: "spoof", wantField: "Dispatched",
			mutate: func(r *structs.JobRegisterRequest) { r.Job.Dispatched = true }},
		{name: "idempotency token", id: "spoof", wantField: "DispatchIdempotencyToken",
			mutate: func(r *structs.JobRegisterRequest) { r.Job.DispatchIdempotencyToken = "tok" }},
		{name: "periodic launch record", id: "spoof", wantField: "PeriodicLaunch",
			mutate: func(r *structs.JobRegisterRequest) {
				r.PeriodicLaunch = &structs.PeriodicLaunch{Namespace: "default", ID: "cleaner"}
			}},
		{name: "scaling event", id: "mine", wantField: "Scaling",
			mutate: func(r *structs.JobRegisterRequest) { r.Scaling = &structs.ScalingEventRequest{} }},
		{name: "plan naming a parent", id: "spoof", plan: true, wantField: "ParentID",
			mutate: func(r *structs.JobRegisterRequest) { r.Job.ParentID = "cleaner" }},
		{name: "plan dispatched", id: "mine", plan: true, wantField: "Dispatched",
			mutate: func(r *structs.JobRegisterRequest) { r.Job.Dispatched = true }},
	}
	for _, tc := range cases {
		for _, token := range []struct{ name, secret string }{{"developer", dev.SecretID}, {"management", mgmt}} {
			t.Run(tc.name+" by "+token.name, func(t *testing.T) {
				before := srv.State().Index("jobs")
				req := &structs.JobRegisterRequest{Job: exposedJob(tc.id),
					WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: token.secret}}
				tc.mutate(req)
				var err error
				if tc.plan {
					var reply structs.JobPlanResponse
					err = srv.Endpoints.Job.Plan(&structs.JobPlanRequest{Job: req.Job, WriteRequest: req.WriteRequest}, &reply)
				} else {
					var reply structs.JobRegisterResponse
					err = srv.Endpoints.Job.Register(req, &reply)
				}
				mustCode(t, 400, err)
				must.StrContains(t, err.Error(), tc.wantField+" is set by the server only")
				must.Eq(t, before, srv.State().Index("jobs"))
				stored, err := srv.State().JobByID(nil, "default", tc.id)
				must.NoError(t, err)
				if stored != nil {
					must.Eq(t, "", stored.ParentID)
					must.False(t, stored.Dispatched)
				}
			})
		}
	}
}

// Issue 32 item 1: the children the server launches carry their parent's identity and so its
// bound policies; a job that merely names a parent (as one stored before submitters were
// refused could) carries its own.
func TestSecurity_ChildIdentityFromServer(t *testing.T) {
	srv, mgmt := testACLServer(t, nil)
	node := mock.Node("n1")
	registerNode(t, srv, node, mgmt)
	_, err := putVariable(srv, mgmt, structs.VarOpSet, newVar("shared/db", map[string]string{"k": "v"}))
	must.NoError(t, err)

	dispatchParent := exposedJob("cleaner")
	dispatchParent.ParameterizedJob = &api.ParameterizedJobConfig{}
	registerJob(t, srv, mgmt, dispatchParent)
	periodicParent := exposedJob("nightly")
	periodicParent.Periodic = &api.PeriodicConfig{Spec: new("0 3 * * *"), SpecType: new("cron"), Enabled: new(true)}
	registerJob(t, srv, mgmt, periodicParent)
	for _, parent := range []string{"cleaner", "nightly"} {
		bindPolicy(t, srv, mgmt, parent+"-reads-shared", varPolicy("default", "shared/*", `"read"`), parent)
	}

	dispatch := func(t *testing.T) string {
		var reply structs.JobDispatchResponse
		must.NoError(t, srv.Endpoints.Job.Dispatch(&structs.JobDispatchRequest{JobID: "cleaner",
			WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: mgmt}}, &reply))
		return reply.DispatchedJobID
	}
	force := func(t *testing.T) string {
		var reply structs.PeriodicForceResponse
		must.NoError(t, srv.Endpoints.Job.PeriodicForce(&structs.JobPeriodicForceRequest{JobID: "nightly",
			WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: mgmt}}, &reply))
		eval, err := srv.State().EvalByID(nil, reply.EvalID)
		must.NoError(t, err)
		return eval.JobID
	}
	forged := func(t *testing.T) string {
		// What an older server stored for a submitted ParentID.
		job := exposedJob("evil")
		job.ParentID = "cleaner"
		must.NoError(t, srv.State().UpsertJob(structs.JobRegisterRequestType, srv.State().LatestIndex()+1, job))
		return "evil"
	}

	cases := []struct {
		name      string
		child     func(*testing.T) string
		allocID   string
		wantJobID string
		wantRead  bool
	}{
		{name: "dispatched child", child: dispatch, allocID: "c1000000-0000-0000-0000-000000000001", wantJobID: "cleaner", wantRead: true},
		{name: "periodic child", child: force, allocID: "c1000000-0000-0000-0000-000000000002", wantJobID: "nightly", wantRead: true},
		{name: "stored forged parent", child: forged, allocID: "c1000000-0000-0000-0000-000000000003", wantJobID: "evil"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := tc.child(t)
			wi, jobID := identityOf(t, srv, node, id, tc.allocID)
			must.Eq(t, tc.wantJobID, jobID)
			_, err := readVar(srv, wi, "default", "shared/db")
			if tc.wantRead {
				must.NoError(t, err)
			} else {
				must.ErrorContains(t, err, "Permission denied")
			}
		})
	}
}

// A revert brings back a spec, never a parent: a dispatched child's revert stays its parent's
// child, and a version holding a forged parent comes back without it.
func TestSecurity_RevertKeepsServerParent(t *testing.T) {
	srv, mgmt := testACLServer(t, nil)
	parent := exposedJob("cleaner")
	parent.ParameterizedJob = &api.ParameterizedJobConfig{}
	registerJob(t, srv, mgmt, parent)
	var dr structs.JobDispatchResponse
	must.NoError(t, srv.Endpoints.Job.Dispatch(&structs.JobDispatchRequest{JobID: "cleaner",
		WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: mgmt}}, &dr))
	child := dr.DispatchedJobID

	registerJob(t, srv, mgmt, exposedJob("mine"))
	forged := exposedJob("mine")
	forged.ParentID = "cleaner"
	forged.Meta = map[string]string{"v": "forged"}
	must.NoError(t, srv.State().UpsertJob(structs.JobRegisterRequestType, srv.State().LatestIndex()+1, forged))
	registerJob(t, srv, mgmt, exposedJob("mine"))

	cases := []struct {
		name       string
		jobID      string
		prepare    func(t *testing.T)
		version    uint64
		wantParent string
	}{
		{name: "dispatched child", jobID: child, wantParent: "cleaner", prepare: func(t *testing.T) {
			var reply structs.JobRegisterResponse
			must.NoError(t, srv.Endpoints.Job.Scale(&structs.JobScaleRequest{JobID: child, Target: map[string]string{"Group": "web"},
				Count: new(int64(2)), Message: "more", WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: mgmt}}, &reply))
		}},
		{name: "forged version", jobID: "mine", version: 1, wantParent: "", prepare: func(*testing.T) {}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.prepare(t)
			var reply structs.JobRegisterResponse
			must.NoError(t, srv.Endpoints.Job.Revert(&structs.JobRevertRequest{JobID: tc.jobID, JobVersion: tc.version,
				WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: mgmt}}, &reply))
			stored, err := srv.State().JobByID(nil, "default", tc.jobID)
			must.NoError(t, err)
			must.Eq(t, tc.wantParent, stored.ParentID)
			must.Eq(t, tc.wantParent != "", stored.Dispatched)
		})
	}
}

const janitorRules = `namespace "default" { capabilities = ["purge-job", "read-job", "list-jobs"] }`

// Issue 31, steps 1 to 4: a developer who may submit but not purge cannot make a job purge
// for them. Step 3, registering a job behind the identity an operator bound purge-job to, is
// refused with the 403 naming the policy, and the victim stays. So are an update, a revert
// and a restore of such a job, for every kind of binding and every right, while a token that
// holds the rights passes.
func TestSecurity_IdentityLaunderingRefused(t *testing.T) {
	srv, mgmt := testACLServer(t, nil)
	registerJob(t, srv, mgmt, exposedJob("victim"))
	dev := clientToken(t, srv, mgmt, "dev",
		`namespace "default" { capabilities = ["submit-job", "read-job", "list-jobs", "alloc-exec", "dispatch-job"] }`).SecretID
	writer := clientToken(t, srv, mgmt, "writer", `namespace "default" { policy = "write" }`).SecretID

	// Step 1: the operator binds purge-job to the janitor's identity.
	bindPolicy(t, srv, mgmt, "janitor", janitorRules, "janitor")
	// Step 2: the developer cannot purge.
	var dr structs.JobDeregisterResponse
	err := srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{JobID: "victim", Purge: true,
		WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: dev}}, &dr)
	mustCode(t, 403, err)
	// Step 3: nor register the job that could.
	var rr structs.JobRegisterResponse
	err = srv.Endpoints.Job.Register(&structs.JobRegisterRequest{Job: exposedJob("janitor"),
		WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: dev}}, &rr)
	mustCode(t, 403, err)
	must.Eq(t, "Permission denied: job janitor's identity would hold purge-job through policy janitor; your token does not", err.Error())
	// Step 4 does not happen.
	for _, id := range []string{"victim", "janitor"} {
		job, err := srv.State().JobByID(nil, "default", id)
		must.NoError(t, err)
		must.Eq(t, id == "victim", job != nil, must.Sprint(id))
	}

	register := func(token string, job *structs.Job) error {
		var reply structs.JobRegisterResponse
		return srv.Endpoints.Job.Register(&structs.JobRegisterRequest{Job: job,
			WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: token}}, &reply)
	}
	withMeta := func(id, v string) *structs.Job {
		job := exposedJob(id)
		job.Meta = map[string]string{"v": v}
		return job
	}
	cases := []struct {
		name string
		// setup runs as the operator; bind is the policy bound to job id.
		id       string
		rules    string
		bind     *structs.JobACL
		setup    func(t *testing.T)
		act      func(token string) error
		wantHeld string
	}{
		{name: "update", id: "janitor-u", rules: janitorRules,
			setup:    func(t *testing.T) { registerJob(t, srv, mgmt, withMeta("janitor-u", "ops")) },
			act:      func(token string) error { return register(token, withMeta("janitor-u", "dev")) },
			wantHeld: "purge-job"},
		{name: "revert", id: "janitor-r", rules: janitorRules,
			setup: func(t *testing.T) {
				registerJob(t, srv, mgmt, withMeta("janitor-r", "0"))
				registerJob(t, srv, mgmt, withMeta("janitor-r", "1"))
			},
			act: func(token string) error {
				var reply structs.JobRegisterResponse
				return srv.Endpoints.Job.Revert(&structs.JobRevertRequest{JobID: "janitor-r", JobVersion: 0,
					WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: token}}, &reply)
			},
			wantHeld: "purge-job"},
		{name: "restore", id: "janitor-p", rules: janitorRules,
			setup: func(t *testing.T) {
				registerJob(t, srv, mgmt, exposedJob("janitor-p"))
				var reply structs.JobDeregisterResponse
				must.NoError(t, srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{JobID: "janitor-p", Purge: true,
					WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: mgmt}}, &reply))
			},
			act: func(token string) error {
				records, err := srv.State().PurgeRecords(nil)
				if err != nil {
					return err
				}
				id := ""
				for _, r := range records {
					if r.JobID == "janitor-p" {
						id = r.ID
					}
				}
				var reply structs.JobRegisterResponse
				return srv.Endpoints.PurgeRecord.Restore(&structs.PurgeRecordRestoreRequest{ID: id,
					WriteRequest: structs.WriteRequest{AuthToken: token}}, &reply)
			},
			wantHeld: "purge-job"},
		{name: "group and task binding", id: "janitor-t", rules: janitorRules,
			bind:     &structs.JobACL{Namespace: "default", JobID: "janitor-t", Group: "web", Task: "server"},
			act:      func(token string) error { return register(token, exposedJob("janitor-t")) },
			wantHeld: "purge-job"},
		{name: "another namespace", id: "janitor-n", rules: `namespace "*" { capabilities = ["read-job"] }`,
			act:      func(token string) error { return register(token, exposedJob("janitor-n")) },
			wantHeld: `read-job in namespace "*"`},
		{name: "variables", id: "janitor-v", rules: varPolicy("default", "shared/*", `"read"`),
			act:      func(token string) error { return register(token, exposedJob("janitor-v")) },
			wantHeld: `list on variables "shared/*" in namespace "default", read on variables "shared/*" in namespace "default"`},
		{name: "node write", id: "janitor-w", rules: `node { policy = "write" }`,
			act:      func(token string) error { return register(token, exposedJob("janitor-w")) },
			wantHeld: "node read, node write"},
		{name: "the job's own variables", id: "janitor-s",
			setup: func(t *testing.T) {
				_, err := putVariable(srv, mgmt, structs.VarOpSet, newVar("nomad/jobs/janitor-s", map[string]string{"k": "secret"}))
				must.NoError(t, err)
			},
			act:      func(token string) error { return register(token, exposedJob("janitor-s")) },
			wantHeld: `read of variable "nomad/jobs/janitor-s" in namespace "default"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.rules != "" {
				if tc.bind != nil {
					var gr structs.GenericResponse
					must.NoError(t, srv.Endpoints.ACL.UpsertPolicies(&structs.ACLPolicyUpsertRequest{
						Policies:     []*structs.ACLPolicy{{Name: tc.id, Rules: tc.rules, JobACL: tc.bind}},
						WriteRequest: structs.WriteRequest{AuthToken: mgmt}}, &gr))
				} else {
					bindPolicy(t, srv, mgmt, tc.id, tc.rules, tc.id)
				}
			}
			if tc.setup != nil {
				tc.setup(t)
			}
			before := srv.State().Index("jobs")
			err := tc.act(dev)
			mustCode(t, 403, err)
			want := "Permission denied: job " + tc.id + "'s identity would hold " + tc.wantHeld
			if tc.rules != "" {
				want += " through policy " + tc.id
			}
			must.Eq(t, want+"; your token does not", err.Error())
			must.Eq(t, before, srv.State().Index("jobs"))

			// A token holding the rights passes (the writer lacks node write and the
			// variables, so management stands in there).
			token := writer
			if tc.name == "node write" || tc.name == "variables" || tc.name == "the job's own variables" || tc.name == "another namespace" {
				token = mgmt
			}
			must.NoError(t, tc.act(token))
		})
	}

	t.Run("a job nothing is bound to", func(t *testing.T) {
		must.NoError(t, register(dev, exposedJob("plain")))
	})
}

// Issue 31: a janitor registered by the operator (a management token) still purges with its
// identity; a developer may not exec into it, since the command would run beside its token,
// but may exec into a job whose identity holds nothing more than the developer.
func TestSecurity_PrivilegedIdentityWorksAndExecRefused(t *testing.T) {
	srv, mgmt := testACLServer(t, nil)
	node := mock.Node("n1")
	registerNode(t, srv, node, mgmt)
	registerJob(t, srv, mgmt, exposedJob("victim"))
	registerJob(t, srv, mgmt, exposedJob("janitor"))
	registerJob(t, srv, mgmt, exposedJob("plain"))
	bindPolicy(t, srv, mgmt, "janitor", janitorRules, "janitor")
	dev := clientToken(t, srv, mgmt, "dev",
		`namespace "default" { capabilities = ["submit-job", "read-job", "list-jobs", "alloc-exec"] }`).SecretID
	wi, _ := identityOf(t, srv, node, "janitor", "d1000000-0000-0000-0000-000000000001")
	identityOf(t, srv, node, "plain", "d1000000-0000-0000-0000-000000000002")

	cases := []struct {
		name    string
		token   string
		allocID string
		want    string
	}{
		{name: "developer into the janitor", token: dev, allocID: "d1000000-0000-0000-0000-000000000001",
			want: "Permission denied: allocation d1000000-0000-0000-0000-000000000001: job janitor's identity holds purge-job through policy janitor; your token does not"},
		{name: "developer into a plain job", token: dev, allocID: "d1000000-0000-0000-0000-000000000002"},
		{name: "management into the janitor", token: mgmt, allocID: "d1000000-0000-0000-0000-000000000001"},
		// An allocation this server does not hold (a stale read, or one collected) cannot
		// have its identities checked, so only management goes on.
		{name: "developer into an unknown allocation", token: dev, allocID: "d1000000-0000-0000-0000-00000000000f",
			want: "Permission denied: allocation d1000000-0000-0000-0000-00000000000f is not known to this server, so the rights of its identities cannot be checked; retry"},
		{name: "management into an unknown allocation", token: mgmt, allocID: "d1000000-0000-0000-0000-00000000000f"},
	}
	for _, tc := range cases {
		t.Run("exec "+tc.name, func(t *testing.T) {
			err := srv.Endpoints.ACL.Authorize(&structs.ACLAuthorizeRequest{Check: structs.ACLCheckAllocExec,
				Namespace: "default", AllocID: tc.allocID, QueryOptions: structs.QueryOptions{AuthToken: tc.token, AllowStale: true}},
				&structs.ACLAuthorizeResponse{})
			if tc.want == "" {
				must.NoError(t, err)
				return
			}
			mustCode(t, 403, err)
			must.Eq(t, tc.want, err.Error())
		})
	}

	t.Run("the janitor purges", func(t *testing.T) {
		var reply structs.JobDeregisterResponse
		must.NoError(t, srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{JobID: "victim", Purge: true,
			WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: wi}}, &reply))
		job, err := srv.State().JobByID(nil, "default", "victim")
		must.NoError(t, err)
		must.Nil(t, job)
	})
}

// tokenRef is the on-behalf-of form of the token whose secret is given.
func tokenRef(t *testing.T, srv *Server, secret string) *structs.OnBehalfOf {
	t.Helper()
	token, err := srv.State().ACLTokenBySecretID(nil, secret)
	must.NoError(t, err)
	must.NotNil(t, token)
	return &structs.OnBehalfOf{AccessorID: token.AccessorID, Name: token.Name}
}

// Issue 31 "on behalf of" and issue 32 item 4: a purge made with a workload identity is
// recorded, in the purge history and the event, with the identity, its allocation and the
// token that registered the job version it runs; no secret appears in either.
func TestSecurity_PurgeRecordNamesOnBehalfOf(t *testing.T) {
	srv, mgmt := testACLServer(t, nil)
	node := mock.Node("n1")
	registerNode(t, srv, node, mgmt)
	registerJob(t, srv, mgmt, exposedJob("victim"))
	registerJob(t, srv, mgmt, exposedJob("janitor"))
	bindPolicy(t, srv, mgmt, "janitor", janitorRules, "janitor")
	const allocID = "e1000000-0000-0000-0000-000000000001"
	wi, _ := identityOf(t, srv, node, "janitor", allocID)

	sub, err := srv.Endpoints.Event.Subscribe(&EventStreamRequest{
		Topics: map[structs.Topic][]string{structs.TopicJob: {"victim"}}, Namespace: "default",
		Index: srv.State().LatestIndex(), AuthToken: mgmt,
	})
	must.NoError(t, err)
	t.Cleanup(sub.Unsubscribe)

	var reply structs.JobDeregisterResponse
	must.NoError(t, srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{JobID: "victim", Purge: true,
		WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: wi}}, &reply))

	want := &structs.Actor{Type: structs.ActorTypeWorkloadIdentity, Name: "global:default:janitor:web:server:default",
		AllocID: allocID, OnBehalfOf: tokenRef(t, srv, mgmt)}
	must.NotEq(t, "", want.OnBehalfOf.AccessorID)

	var list structs.PurgeRecordListResponse
	must.NoError(t, srv.Endpoints.PurgeRecord.List(&structs.PurgeRecordListRequest{
		QueryOptions: structs.QueryOptions{Namespace: "default", AuthToken: mgmt}}, &list))
	must.SliceLen(t, 1, list.Records)
	must.Eq(t, want, list.Records[0].Actor)
	var one structs.SinglePurgeRecordResponse
	must.NoError(t, srv.Endpoints.PurgeRecord.GetRecord(&structs.PurgeRecordSpecificRequest{ID: list.Records[0].ID,
		QueryOptions: structs.QueryOptions{AuthToken: mgmt}}, &one))
	must.Eq(t, want, one.Record.Actor)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var event *structs.JobEvent
	for event == nil || !event.Purge {
		batch, err := sub.Next(ctx)
		must.NoError(t, err)
		for _, e := range batch.Events {
			if p, ok := e.Payload.(*structs.JobEvent); ok && e.Type == "JobDeregistered" {
				event = p
			}
		}
	}
	must.Eq(t, want, event.Actor)

	for name, v := range map[string]any{"record": one.Record, "list": list.Records, "event": event} {
		raw, err := json.Marshal(v)
		must.NoError(t, err)
		must.StrNotContains(t, string(raw), wi, must.Sprint(name))
		must.StrNotContains(t, string(raw), mgmt, must.Sprint(name))
	}
}

// Who registered a version is the server's record: a value sent with the job is replaced, a
// scale keeps the version's registrant, a revert is the reverter's, a dispatched child carries
// its parent's, and a version a workload identity registers names the token behind it.
func TestSecurity_SubmittedByIsTheServers(t *testing.T) {
	srv, mgmt := testACLServer(t, nil)
	node := mock.Node("n1")
	registerNode(t, srv, node, mgmt)
	writer := clientToken(t, srv, mgmt, "writer", `namespace "default" { policy = "write" }`).SecretID
	scaler := clientToken(t, srv, mgmt, "scaler", `namespace "default" { capabilities = ["scale-job", "read-job"] }`).SecretID

	forged := exposedJob("web")
	forged.SubmittedBy = &structs.OnBehalfOf{AccessorID: "forged", Name: "someone else"}
	registerJob(t, srv, writer, forged)

	parent := exposedJob("cleaner")
	parent.ParameterizedJob = &api.ParameterizedJobConfig{}
	registerJob(t, srv, writer, parent)
	var dr structs.JobDispatchResponse
	must.NoError(t, srv.Endpoints.Job.Dispatch(&structs.JobDispatchRequest{JobID: "cleaner",
		WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: mgmt}}, &dr))

	registerJob(t, srv, mgmt, exposedJob("deployer"))
	bindPolicy(t, srv, mgmt, "deployer", `namespace "default" { policy = "write" }`, "deployer")
	deployerWI, _ := identityOf(t, srv, node, "deployer", "f1000000-0000-0000-0000-000000000001")

	cases := []struct {
		name  string
		jobID string
		act   func(t *testing.T)
		want  *structs.OnBehalfOf
	}{
		{name: "sent with the job", jobID: "web", act: func(*testing.T) {}, want: tokenRef(t, srv, writer)},
		{name: "scale keeps it", jobID: "web", want: tokenRef(t, srv, writer), act: func(t *testing.T) {
			var reply structs.JobRegisterResponse
			must.NoError(t, srv.Endpoints.Job.Scale(&structs.JobScaleRequest{JobID: "web", Target: map[string]string{"Group": "web"},
				Count: new(int64(3)), Message: "more", WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: scaler}}, &reply))
		}},
		{name: "revert is the reverter's", jobID: "web", want: tokenRef(t, srv, mgmt), act: func(t *testing.T) {
			var reply structs.JobRegisterResponse
			must.NoError(t, srv.Endpoints.Job.Revert(&structs.JobRevertRequest{JobID: "web", JobVersion: 0,
				WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: mgmt}}, &reply))
		}},
		{name: "dispatched child", jobID: dr.DispatchedJobID, act: func(*testing.T) {}, want: tokenRef(t, srv, writer)},
		{name: "registered by a workload identity", jobID: "built", want: tokenRef(t, srv, mgmt), act: func(t *testing.T) {
			registerJob(t, srv, deployerWI, exposedJob("built"))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.act(t)
			stored, err := srv.State().JobByID(nil, "default", tc.jobID)
			must.NoError(t, err)
			must.Eq(t, tc.want, stored.SubmittedBy)
		})
	}
}

// Issue 32 item 4 beyond purges: every write a workload identity makes is recorded with its
// allocation and the token on whose behalf it acted (one resolution of the identity's actor
// serves every write): a job it registers, a job it stops, and a version whose tag it removes
// (and that then leaves history) all name them in their events.
func TestSecurity_IdentityWritesNameAllocAndOnBehalfOf(t *testing.T) {
	srv, mgmt := testACLServer(t, func(c *Config) { c.JobTrackedVersions = 1 })
	node := mock.Node("n1")
	registerNode(t, srv, node, mgmt)
	writer := clientToken(t, srv, mgmt, "writer", `namespace "default" { policy = "write" }`).SecretID
	registerJob(t, srv, mgmt, exposedJob("victim"))
	registerJob(t, srv, mgmt, exposedJob("tagged"))
	var tr structs.JobTagResponse
	must.NoError(t, srv.Endpoints.Job.TagVersion(&structs.JobTagRequest{JobID: "tagged", Name: "keep", Version: new(uint64(0)),
		WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: mgmt}}, &tr))
	withMeta := exposedJob("tagged")
	withMeta.Meta = map[string]string{"v": "1"}
	registerJob(t, srv, mgmt, withMeta)

	// The operator binds write to the deployer and has a writer register it.
	bindPolicy(t, srv, mgmt, "deployer", `namespace "default" { policy = "write" }`, "deployer")
	registerJob(t, srv, writer, exposedJob("deployer"))
	const allocID = "f2000000-0000-0000-0000-000000000001"
	wi, _ := identityOf(t, srv, node, "deployer", allocID)
	want := &structs.Actor{Type: structs.ActorTypeWorkloadIdentity, Name: "global:default:deployer:web:server:default",
		AllocID: allocID, OnBehalfOf: tokenRef(t, srv, writer)}

	sub, err := srv.Endpoints.Event.Subscribe(&EventStreamRequest{
		Topics: map[structs.Topic][]string{structs.TopicJob: {"built", "victim", "tagged"}}, Namespace: "default",
		Index: srv.State().LatestIndex() + 1, AuthToken: mgmt,
	})
	must.NoError(t, err)
	t.Cleanup(sub.Unsubscribe)

	registerJob(t, srv, wi, exposedJob("built"))
	var dr structs.JobDeregisterResponse
	must.NoError(t, srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{JobID: "victim",
		WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: wi}}, &dr))
	must.NoError(t, srv.Endpoints.Job.TagVersion(&structs.JobTagRequest{JobID: "tagged", Name: "keep", Unset: true,
		WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: wi}}, &tr))

	// With one tracked version, the stop's new version pushes the victim's first out too.
	wantTypes := []string{"built JobRegistered", "victim JobDeregistered", "victim " + structs.TypeJobVersionPruned,
		"tagged " + structs.TypeJobVersionUntagged, "tagged " + structs.TypeJobVersionPruned}
	var got []string
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for len(got) < len(wantTypes) {
		batch, err := sub.Next(ctx)
		must.NoError(t, err)
		for _, e := range batch.Events {
			var actor *structs.Actor
			switch p := e.Payload.(type) {
			case *structs.JobEvent:
				actor = p.Actor
			case *structs.JobVersionEvent:
				actor = p.Actor
			default:
				continue
			}
			got = append(got, e.Key+" "+e.Type)
			must.Eq(t, want, actor, must.Sprint(e.Key, " ", e.Type))
			raw, err := json.Marshal(e.Payload)
			must.NoError(t, err)
			must.StrNotContains(t, string(raw), wi)
			must.StrNotContains(t, string(raw), writer)
		}
	}
	must.Eq(t, wantTypes, got)
}
