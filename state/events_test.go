package state

import (
	"encoding/json"
	"fmt"
	"sort"
	"testing"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestEventConverters_CoverEveryTable fails when a table has no entry in eventConverters: a new
// table must either publish events or be marked with nil as deliberately silent.
func TestEventConverters_CoverEveryTable(t *testing.T) {
	names := TableNames()
	sort.Strings(names)
	for _, table := range names {
		_, ok := eventConverters[table]
		must.True(t, ok, must.Sprintf("table %q has no entry in eventConverters (nil marks a table without events)", table))
	}
	for table := range eventConverters {
		must.MapContainsKey(t, tables, table, must.Sprintf("eventConverters names %q, which is not a registered table", table))
	}
}

// The payload views keep the fields a test states; comparing views instead of whole payloads
// keeps the wanted events short while still failing on what matters.
type jobEventView struct {
	ID, Namespace        string
	Stop                 bool
	Version, ModifyIndex uint64
	Purge, Deleted       bool
	Actor                *structs.Actor
}

type evalEventView struct{ ID, Namespace, JobID string }

type tokenEventView struct{ AccessorID, SecretID, Name, Type string }

type policyEventView struct{ Name, Description string }

type roleEventView struct{ ID, Name string }

type namespaceEventView struct{ Name, Description string }

func payloadView(payload any) any {
	switch p := payload.(type) {
	case *structs.JobEvent:
		v := jobEventView{Purge: p.Purge, Deleted: p.Deleted, Actor: p.Actor}
		if p.Job != nil {
			v.ID, v.Namespace, v.Stop, v.Version, v.ModifyIndex = p.Job.ID, p.Job.Namespace, p.Job.Stop, p.Job.Version, p.Job.ModifyIndex
		}
		return v
	case *structs.EvaluationEvent:
		return evalEventView{ID: p.Evaluation.ID, Namespace: p.Evaluation.Namespace, JobID: p.Evaluation.JobID}
	case *structs.ACLTokenEvent:
		return tokenEventView{AccessorID: p.ACLToken.AccessorID, SecretID: p.ACLToken.SecretID, Name: p.ACLToken.Name, Type: p.ACLToken.Type}
	case *structs.ACLPolicyEvent:
		return policyEventView{Name: p.ACLPolicy.Name, Description: p.ACLPolicy.Description}
	case *structs.ACLRoleEvent:
		return roleEventView{ID: p.ACLRole.ID, Name: p.ACLRole.Name}
	case *structs.NamespaceEvent:
		return namespaceEventView{Name: p.Namespace.Name, Description: p.Namespace.Description}
	case *structs.JobVersionEvent:
		return versionView(p)
	case *structs.PurgeRecordEvent:
		r := p.PurgeRecord
		return purgeRecordEventView{ID: r.ID, JobID: r.JobID, JobVersion: r.JobVersion, Reason: r.Reason, Actor: r.Actor}
	}
	// An unknown payload type is compared whole, so a new one fails until it gets a view.
	return payload
}

func eventView(e structs.Event) structs.Event {
	e.Payload = payloadView(e.Payload)
	return e
}

// wantJobEvent is a Job event; job names the fields the payload's job must have.
func wantJobEvent(typ string, index uint64, job *structs.Job, purge bool, actor *structs.Actor) structs.Event {
	if job.Namespace == "" {
		job.Namespace = structs.DefaultNamespace
	}
	return structs.Event{
		Topic: structs.TopicJob, Type: typ, Key: job.ID, Namespace: job.Namespace, Index: index,
		Payload: &structs.JobEvent{Job: job, Purge: purge, Deleted: purge, Actor: actor},
	}
}

type purgeRecordEventView struct {
	ID, JobID  string
	JobVersion uint64
	Reason     string
	Actor      *structs.Actor
}

// wantPurgeRecordEvent is the PurgeRecord event of writing (or removing) record id.
func wantPurgeRecordEvent(typ string, index uint64, id, jobID string, version uint64, reason string, actor *structs.Actor) structs.Event {
	return structs.Event{
		Topic: structs.TopicPurgeRecord, Type: typ, Key: id, Namespace: structs.DefaultNamespace,
		FilterKeys: []string{jobID}, Index: index,
		Payload: &structs.PurgeRecordEvent{PurgeRecord: &structs.PurgeRecordStub{ID: id, JobID: jobID, JobVersion: version, Reason: reason, Actor: actor}},
	}
}

func wantEvalEvent(typ string, index uint64, id, jobID string) structs.Event {
	return structs.Event{
		Topic: structs.TopicEvaluation, Type: typ, Key: id, Namespace: structs.DefaultNamespace,
		FilterKeys: []string{jobID, ""}, Index: index,
		Payload: &structs.EvaluationEvent{Evaluation: &structs.Evaluation{ID: id, Namespace: structs.DefaultNamespace, JobID: jobID}},
	}
}

// assertEvents compares captured batches with the wanted events: one batch per distinct Index,
// in order, every event of a batch at the batch's index.
func assertEvents(t *testing.T, want []structs.Event, got []*structs.Events) {
	t.Helper()
	var wantIndexes, gotIndexes []uint64
	for _, e := range want {
		if len(wantIndexes) == 0 || wantIndexes[len(wantIndexes)-1] != e.Index {
			wantIndexes = append(wantIndexes, e.Index)
		}
	}
	var gotViews []structs.Event
	for _, batch := range got {
		must.SliceNotEmpty(t, batch.Events, must.Sprintf("empty batch at index %d", batch.Index))
		gotIndexes = append(gotIndexes, batch.Index)
		for _, e := range batch.Events {
			must.Eq(t, batch.Index, e.Index)
			gotViews = append(gotViews, eventView(e))
		}
	}
	var wantViews []structs.Event
	for _, e := range want {
		wantViews = append(wantViews, eventView(e))
	}
	must.Eq(t, wantIndexes, gotIndexes, must.Sprint("batch indexes"))
	must.Eq(t, wantViews, gotViews)
}

// captureEvents installs a commit hook collecting every non-empty batch.
func captureEvents(s *StateStore) *[]*structs.Events {
	var got []*structs.Events
	s.SetCommitHook(func(txn *Txn, changes memdb.Changes) {
		if events := EventsFromChanges(txn, changes); events != nil {
			got = append(got, events)
		}
	})
	return &got
}

func registerWeb(s *StateStore) error { return applyRegister(s, 10, nil, mockJob("web"), nil) }

func TestEventsFromChanges(t *testing.T) {
	const (
		registered      = "JobRegistered"
		deregistered    = "JobDeregistered"
		batchDeregister = "JobBatchDeregistered"
	)
	aliceToken := func() *structs.ACLToken {
		return mockToken("acc-alice", "secret-alice", "alice", structs.ACLClientToken)
	}
	cases := []struct {
		Name       string
		Setup      func(s *StateStore) error
		Mutate     func(s *StateStore) error
		WantEvents []structs.Event
		// Check, when set, asserts on the store after the mutation.
		Check func(t *testing.T, s *StateStore)
	}{
		{
			Name: "register",
			Mutate: func(s *StateStore) error {
				return applyRegister(s, 10, actorAlice, mockJob("web"), mockEval("eval-1", mockJob("web"), structs.EvalTriggerJobRegister))
			},
			WantEvents: []structs.Event{
				wantJobEvent(registered, 10, &structs.Job{ID: "web", Version: 0, ModifyIndex: 10}, false, actorAlice),
				wantEvalEvent(registered, 10, "eval-1", "web"),
			},
		},
		{
			Name:  "update",
			Setup: registerWeb,
			Mutate: func(s *StateStore) error {
				job := mockJob("web")
				job.Priority = 70
				return applyRegister(s, 11, actorBob, job, mockEval("eval-2", job, structs.EvalTriggerJobRegister))
			},
			WantEvents: []structs.Event{
				wantJobEvent(registered, 11, &structs.Job{ID: "web", Version: 1, ModifyIndex: 11}, false, actorBob),
				wantEvalEvent(registered, 11, "eval-2", "web"),
			},
		},
		{
			Name:   "identical register",
			Setup:  registerWeb,
			Mutate: func(s *StateStore) error { return applyRegister(s, 11, actorAlice, mockJob("web"), nil) },
			WantEvents: []structs.Event{
				wantJobEvent(registered, 11, &structs.Job{ID: "web", Version: 0, ModifyIndex: 11}, false, actorAlice),
			},
		},
		{
			Name:  "register without actor",
			Setup: nil,
			Mutate: func(s *StateStore) error {
				return applyRegister(s, 10, nil, mockJob("web"), nil)
			},
			WantEvents: []structs.Event{
				wantJobEvent(registered, 10, &structs.Job{ID: "web", ModifyIndex: 10}, false, nil),
			},
		},
		{
			Name:  "stop",
			Setup: registerWeb,
			Mutate: func(s *StateStore) error {
				return applyStop(s, 11, actorAlice, structs.DefaultNamespace, "web", mockEval("eval-2", mockJob("web"), structs.EvalTriggerJobDeregister))
			},
			WantEvents: []structs.Event{
				wantJobEvent(deregistered, 11, &structs.Job{ID: "web", Stop: true, Version: 1, ModifyIndex: 11}, false, actorAlice),
				wantEvalEvent(deregistered, 11, "eval-2", "web"),
			},
		},
		{
			Name:  "purge",
			Setup: registerWeb,
			Mutate: func(s *StateStore) error {
				return applyPurge(s, 11, actorAlice, structs.DefaultNamespace, "web", "rec-1", mockEval("eval-2", mockJob("web"), structs.EvalTriggerJobDeregister))
			},
			// The payload is the job as it was before removal: index 10, not stopped.
			WantEvents: []structs.Event{
				wantJobEvent(deregistered, 11, &structs.Job{ID: "web", Version: 0, ModifyIndex: 10}, true, actorAlice),
				wantPurgeRecordEvent(deregistered, 11, "rec-1", "web", 0, structs.PurgeReasonPurge, actorAlice),
				wantEvalEvent(deregistered, 11, "eval-2", "web"),
			},
		},
		{
			Name:  "purge record is published without the job spec",
			Setup: registerWeb,
			Mutate: func(s *StateStore) error {
				return applyPurge(s, 11, actorBob, structs.DefaultNamespace, "web", "rec-1", nil)
			},
			WantEvents: []structs.Event{
				wantJobEvent(deregistered, 11, &structs.Job{ID: "web", Version: 0, ModifyIndex: 10}, true, actorBob),
				wantPurgeRecordEvent(deregistered, 11, "rec-1", "web", 0, structs.PurgeReasonPurge, actorBob),
			},
			Check: func(t *testing.T, s *StateStore) {
				rec, err := s.PurgeRecordByID(nil, "rec-1")
				must.NoError(t, err)
				must.NotNil(t, rec)
			},
		},
		{
			Name:  "stop then purge",
			Setup: registerWeb,
			Mutate: func(s *StateStore) error {
				if err := applyStop(s, 11, actorAlice, structs.DefaultNamespace, "web", nil); err != nil {
					return err
				}
				return applyPurge(s, 12, actorBob, structs.DefaultNamespace, "web", "rec-1", nil)
			},
			WantEvents: []structs.Event{
				wantJobEvent(deregistered, 11, &structs.Job{ID: "web", Stop: true, Version: 1, ModifyIndex: 11}, false, actorAlice),
				wantJobEvent(deregistered, 12, &structs.Job{ID: "web", Stop: true, Version: 1, ModifyIndex: 11}, true, actorBob),
				wantPurgeRecordEvent(deregistered, 12, "rec-1", "web", 1, structs.PurgeReasonPurge, actorBob),
			},
		},
		{
			Name: "batch deregister",
			Setup: func(s *StateStore) error {
				for i, id := range []string{"web", "api", "keep"} {
					if err := applyRegister(s, uint64(10+i), nil, mockJob(id), nil); err != nil {
						return err
					}
				}
				return applyStop(s, 13, actorAlice, structs.DefaultNamespace, "api", nil)
			},
			Mutate: func(s *StateStore) error {
				return applyBatchDeregister(s, 20, []structs.NamespacedID{
					{Namespace: structs.DefaultNamespace, ID: "web"},
					{Namespace: structs.DefaultNamespace, ID: "api"},
					{Namespace: structs.DefaultNamespace, ID: "already-gone"},
				})
			},
			WantEvents: []structs.Event{
				wantJobEvent(batchDeregister, 20, &structs.Job{ID: "web", Version: 0, ModifyIndex: 10}, true, structs.ActorJobGC),
				wantPurgeRecordEvent(batchDeregister, 20, "gc-default/web", "web", 0, structs.PurgeReasonGC, structs.ActorJobGC),
				wantJobEvent(batchDeregister, 20, &structs.Job{ID: "api", Stop: true, Version: 1, ModifyIndex: 13}, true, structs.ActorJobGC),
				wantPurgeRecordEvent(batchDeregister, 20, "gc-default/api", "api", 1, structs.PurgeReasonGC, structs.ActorJobGC),
			},
		},
		{
			Name:  "version tag on current version",
			Setup: registerWeb,
			Mutate: func(s *StateStore) error {
				return applyTxn(s, structs.JobVersionTagRequestType, 11, &TxnMeta{Actor: actorAlice}, func(txn *Txn) error {
					return s.TagJobVersionTxn(txn, structs.DefaultNamespace, "web", ptrOf(uint64(0)), "golden", &structs.JobVersionTag{Name: "golden"})
				})
			},
			WantEvents: []structs.Event{
				wantJobEvent("JobVersionTagged", 11, &structs.Job{ID: "web", Version: 0, ModifyIndex: 11}, false, actorAlice),
			},
		},
		{
			Name: "eval update",
			Mutate: func(s *StateStore) error {
				return applyTxn(s, structs.EvalUpdateRequestType, 10, nil, func(txn *Txn) error {
					return s.UpsertEvalsTxn(txn, []*structs.Evaluation{mockEval("eval-1", mockJob("web"), structs.EvalTriggerJobRegister)})
				})
			},
			WantEvents: []structs.Event{wantEvalEvent("EvaluationUpdated", 10, "eval-1", "web")},
		},
		{
			Name: "eval delete emits nothing",
			Setup: func(s *StateStore) error {
				return applyTxn(s, structs.EvalUpdateRequestType, 10, nil, func(txn *Txn) error {
					return s.UpsertEvalsTxn(txn, []*structs.Evaluation{mockEval("eval-1", mockJob("web"), structs.EvalTriggerJobRegister)})
				})
			},
			Mutate: func(s *StateStore) error {
				return applyTxn(s, structs.EvalDeleteRequestType, 11, nil, func(txn *Txn) error {
					return s.DeleteEvalsTxn(txn, []string{"eval-1"})
				})
			},
		},
		{
			Name: "purge record removed after retention",
			Setup: func(s *StateStore) error {
				if err := registerWeb(s); err != nil {
					return err
				}
				return applyPurge(s, 11, actorAlice, structs.DefaultNamespace, "web", "rec-1", nil)
			},
			Mutate: func(s *StateStore) error {
				return applyTxn(s, structs.PurgeRecordDeleteRequestType, 12, nil, func(txn *Txn) error {
					return s.DeletePurgeRecordsTxn(txn, []string{"rec-1"})
				})
			},
			WantEvents: []structs.Event{
				wantPurgeRecordEvent("PurgeRecordDeleted", 12, "rec-1", "web", 0, structs.PurgeReasonPurge, actorAlice),
			},
		},
		{
			Name: "ACL token upsert hides secret",
			Mutate: func(s *StateStore) error {
				return applyTxn(s, structs.ACLTokenUpsertRequestType, 10, &TxnMeta{Actor: actorBob}, func(txn *Txn) error {
					return s.UpsertACLTokensTxn(txn, []*structs.ACLToken{aliceToken()})
				})
			},
			WantEvents: []structs.Event{{
				Topic: structs.TopicACLToken, Type: "ACLTokenUpserted", Key: "acc-alice", Index: 10,
				Payload: &structs.ACLTokenEvent{ACLToken: &structs.ACLToken{AccessorID: "acc-alice", Name: "alice", Type: structs.ACLClientToken}},
			}},
			Check: func(t *testing.T, s *StateStore) {
				// The event's copy is sanitised; the stored token keeps its secret.
				tok, err := s.ACLTokenBySecretID(nil, "secret-alice")
				must.NoError(t, err)
				must.NotNil(t, tok)
			},
		},
		{
			Name: "ACL bootstrap hides secret",
			Mutate: func(s *StateStore) error {
				return applyTxn(s, structs.ACLTokenBootstrapRequestType, 10, nil, func(txn *Txn) error {
					return s.BootstrapACLTokenTxn(txn, 0, mockToken("acc-root", "secret-root", "Bootstrap Token", structs.ACLManagementToken))
				})
			},
			WantEvents: []structs.Event{{
				Topic: structs.TopicACLToken, Type: "ACLTokenUpserted", Key: "acc-root", Index: 10,
				Payload: &structs.ACLTokenEvent{ACLToken: &structs.ACLToken{AccessorID: "acc-root", Name: "Bootstrap Token", Type: structs.ACLManagementToken}},
			}},
		},
		{
			Name: "ACL token delete hides secret",
			Setup: func(s *StateStore) error {
				return applyTxn(s, structs.ACLTokenUpsertRequestType, 10, nil, func(txn *Txn) error {
					return s.UpsertACLTokensTxn(txn, []*structs.ACLToken{aliceToken()})
				})
			},
			Mutate: func(s *StateStore) error {
				return applyTxn(s, structs.ACLTokenDeleteRequestType, 11, nil, func(txn *Txn) error {
					return s.DeleteACLTokensTxn(txn, []string{"acc-alice"})
				})
			},
			WantEvents: []structs.Event{{
				Topic: structs.TopicACLToken, Type: "ACLTokenDeleted", Key: "acc-alice", Index: 11,
				Payload: &structs.ACLTokenEvent{ACLToken: &structs.ACLToken{AccessorID: "acc-alice", Name: "alice", Type: structs.ACLClientToken}},
			}},
		},
		{
			Name: "ACL policy upsert",
			Mutate: func(s *StateStore) error {
				return applyTxn(s, structs.ACLPolicyUpsertRequestType, 10, nil, func(txn *Txn) error {
					return s.UpsertACLPoliciesTxn(txn, []*structs.ACLPolicy{mockPolicy("readonly")})
				})
			},
			WantEvents: []structs.Event{{
				Topic: structs.TopicACLPolicy, Type: "ACLPolicyUpserted", Key: "readonly", Index: 10,
				Payload: &structs.ACLPolicyEvent{ACLPolicy: &structs.ACLPolicy{Name: "readonly", Description: "readonly policy"}},
			}},
		},
		{
			Name: "ACL policy delete",
			Setup: func(s *StateStore) error {
				return applyTxn(s, structs.ACLPolicyUpsertRequestType, 10, nil, func(txn *Txn) error {
					return s.UpsertACLPoliciesTxn(txn, []*structs.ACLPolicy{mockPolicy("readonly")})
				})
			},
			Mutate: func(s *StateStore) error {
				return applyTxn(s, structs.ACLPolicyDeleteRequestType, 11, nil, func(txn *Txn) error {
					return s.DeleteACLPoliciesTxn(txn, []string{"readonly"})
				})
			},
			WantEvents: []structs.Event{{
				Topic: structs.TopicACLPolicy, Type: "ACLPolicyDeleted", Key: "readonly", Index: 11,
				Payload: &structs.ACLPolicyEvent{ACLPolicy: &structs.ACLPolicy{Name: "readonly", Description: "readonly policy"}},
			}},
		},
		{
			Name: "ACL role upsert",
			Setup: func(s *StateStore) error {
				return applyTxn(s, structs.ACLPolicyUpsertRequestType, 10, nil, func(txn *Txn) error {
					return s.UpsertACLPoliciesTxn(txn, []*structs.ACLPolicy{mockPolicy("readonly")})
				})
			},
			Mutate: func(s *StateStore) error {
				return applyTxn(s, structs.ACLRoleUpsertRequestType, 11, nil, func(txn *Txn) error {
					return s.UpsertACLRolesTxn(txn, []*structs.ACLRole{mockRole("role-1", "dev", "readonly")})
				})
			},
			WantEvents: []structs.Event{{
				Topic: structs.TopicACLRole, Type: "ACLRoleUpserted", Key: "role-1", FilterKeys: []string{"dev"}, Index: 11,
				Payload: &structs.ACLRoleEvent{ACLRole: &structs.ACLRole{ID: "role-1", Name: "dev"}},
			}},
		},
		{
			Name: "namespace upsert",
			Mutate: func(s *StateStore) error {
				return applyTxn(s, structs.NamespaceUpsertRequestType, 10, &TxnMeta{Actor: actorBob}, func(txn *Txn) error {
					return s.UpsertNamespacesTxn(txn, []*structs.Namespace{{Name: "prod", Description: "production"}})
				})
			},
			WantEvents: []structs.Event{{
				Topic: structs.TopicNamespace, Type: "NamespaceUpserted", Key: "prod", Index: 10,
				Payload: &structs.NamespaceEvent{Namespace: &structs.Namespace{Name: "prod", Description: "production"}},
			}},
		},
		{
			Name: "namespace delete",
			Setup: func(s *StateStore) error {
				return applyTxn(s, structs.NamespaceUpsertRequestType, 10, nil, func(txn *Txn) error {
					return s.UpsertNamespacesTxn(txn, []*structs.Namespace{{Name: "prod", Description: "production"}})
				})
			},
			Mutate: func(s *StateStore) error {
				return applyTxn(s, structs.NamespaceDeleteRequestType, 11, nil, func(txn *Txn) error {
					return s.DeleteNamespacesTxn(txn, []string{"prod"})
				})
			},
			WantEvents: []structs.Event{{
				Topic: structs.TopicNamespace, Type: "NamespaceDeleted", Key: "prod", Index: 11,
				Payload: &structs.NamespaceEvent{Namespace: &structs.Namespace{Name: "prod", Description: "production"}},
			}},
		},
		{
			Name:  "failed transaction emits nothing",
			Setup: registerWeb,
			Mutate: func(s *StateStore) error {
				err := applyPurge(s, 11, actorAlice, structs.DefaultNamespace, "web", "", nil) // no record ID
				if err == nil {
					return fmt.Errorf("purge without record ID succeeded")
				}
				return nil
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			s := testStateStore(t)
			if tc.Setup != nil {
				must.NoError(t, tc.Setup(s))
			}
			got := captureEvents(s)
			must.NoError(t, tc.Mutate(s))
			assertEvents(t, tc.WantEvents, *got)
			if tc.Check != nil {
				tc.Check(t, s)
			}
		})
	}
}

// TestJobEvent_JSON checks the wire form of the purge flags: absent on a stop, both true on a
// purge.
func TestJobEvent_JSON(t *testing.T) {
	cases := []struct {
		name      string
		mutate    func(s *StateStore) error
		wantPurge bool
	}{
		{
			name:   "stop",
			mutate: func(s *StateStore) error { return applyStop(s, 11, actorAlice, structs.DefaultNamespace, "web", nil) },
		},
		{
			name: "purge",
			mutate: func(s *StateStore) error {
				return applyPurge(s, 11, actorAlice, structs.DefaultNamespace, "web", "rec-1", nil)
			},
			wantPurge: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStateStore(t)
			must.NoError(t, registerWeb(s))
			got := captureEvents(s)
			must.NoError(t, tc.mutate(s))
			must.Len(t, 1, *got)
			must.Eq(t, structs.TopicJob, (*got)[0].Events[0].Topic)

			raw, err := json.Marshal((*got)[0].Events[0])
			must.NoError(t, err)
			var decoded struct {
				Topic   string
				Type    string
				Payload map[string]any
			}
			must.NoError(t, json.Unmarshal(raw, &decoded))
			must.Eq(t, "Job", decoded.Topic)
			must.Eq(t, "JobDeregistered", decoded.Type)
			must.MapContainsKey(t, decoded.Payload, "Job")
			must.Eq[any](t, map[string]any{"AccessorID": actorAlice.AccessorID, "Name": "alice", "Type": "client"}, decoded.Payload["Actor"])
			if tc.wantPurge {
				must.Eq[any](t, true, decoded.Payload["Purge"])
				must.Eq[any](t, true, decoded.Payload["Deleted"])
			} else {
				must.MapNotContainsKey(t, decoded.Payload, "Purge")
				must.MapNotContainsKey(t, decoded.Payload, "Deleted")
			}
			must.StrNotContains(t, string(raw), "SecretID")
		})
	}
}

// The job event's flags come from two places: Purge from the request (the transaction's
// metadata), Deleted from the row. A write that removes a job row without a purge request (a
// future cascade, a restore over a record) must not be reported as a purge, and the reverse.
// TestJobEvents_PurgeInvariantThroughTheFSM (package nomad) drives the real FSM.
func TestJobEvents_PurgeFollowsTheRequestNotTheRow(t *testing.T) {
	cases := []struct {
		name        string
		purge       bool
		remove      bool
		wantPurge   bool
		wantDeleted bool
	}{
		{name: "row removed without a purge request", remove: true, wantDeleted: true},
		{name: "purge request that keeps the row", purge: true, wantPurge: true},
		{name: "purge request that removes the row", purge: true, remove: true, wantPurge: true, wantDeleted: true},
		{name: "neither"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStateStore(t)
			must.NoError(t, registerWeb(s))
			got := captureEvents(s)
			mustApply(t, s, structs.JobDeregisterRequestType, 11, &TxnMeta{Purge: tc.purge, Actor: actorAlice}, func(txn *Txn) error {
				if tc.remove {
					return s.DeleteJobTxn(txn, structs.DefaultNamespace, "web")
				}
				job, err := s.JobByIDTxn(txn, structs.DefaultNamespace, "web")
				if err != nil {
					return err
				}
				stopped := job.Copy()
				stopped.Stop = true
				return s.UpsertJobTxn(txn, stopped)
			})
			must.Len(t, 1, *got)
			payload := (*got)[0].Events[0].Payload.(*structs.JobEvent)
			must.Eq(t, tc.wantPurge, payload.Purge)
			must.Eq(t, tc.wantDeleted, payload.Deleted)
			must.Eq(t, actorAlice, payload.Actor)
		})
	}
}
