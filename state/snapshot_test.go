package state

import (
	"bytes"
	"github.com/hashicorp/nomad/api"
	"sort"
	"testing"
	"time"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// snapshotFixture writes at least one row into every table.
func snapshotFixture(t *testing.T) *StateStore {
	t.Helper()
	s := testStateStore(t)
	upsertNamespaces(t, s, 5, "prod")
	index := registerVersions(t, s, "web", 10, 3)
	mustApply(t, s, structs.JobVersionTagRequestType, index, nil, func(txn *Txn) error {
		tag := &structs.JobVersionTag{Name: "golden", Description: "known good", TaggedTime: 1_700_000_000}
		return s.TagJobVersionTxn(txn, structs.DefaultNamespace, "web", ptrOf(uint64(1)), tag.Name, tag)
	})
	must.NoError(t, applyRegister(s, 20, actorAlice, mockJobIn("prod", "api"), mockEval("eval-api", mockJobIn("prod", "api"), structs.EvalTriggerJobRegister)))
	upsertJob(t, s, 21, mockJob("old"))
	must.NoError(t, applyStop(s, 22, actorAlice, structs.DefaultNamespace, "old", nil))
	must.NoError(t, applyPurge(s, 23, actorBob, structs.DefaultNamespace, "old", "rec-old", mockEval("eval-old", mockJob("old"), structs.EvalTriggerJobDeregister)))

	mustApply(t, s, structs.ACLPolicyUpsertRequestType, 30, nil, func(txn *Txn) error {
		return s.UpsertACLPoliciesTxn(txn, []*structs.ACLPolicy{mockPolicy("readonly")})
	})
	mustApply(t, s, structs.ACLRoleUpsertRequestType, 31, nil, func(txn *Txn) error {
		return s.UpsertACLRolesTxn(txn, []*structs.ACLRole{mockRole("role-1", "dev", "readonly")})
	})
	mustApply(t, s, structs.ACLTokenBootstrapRequestType, 32, nil, func(txn *Txn) error {
		return s.BootstrapACLTokenTxn(txn, 0, mockToken("acc-root", "secret-root", "Bootstrap Token", structs.ACLManagementToken))
	})
	mustApply(t, s, structs.ACLTokenUpsertRequestType, 33, nil, func(txn *Txn) error {
		tok := mockToken("acc-alice", "secret-alice", "alice", structs.ACLClientToken)
		tok.Roles = []*structs.ACLTokenRoleLink{{ID: "role-1", Name: "dev"}}
		return s.UpsertACLTokensTxn(txn, []*structs.ACLToken{tok})
	})
	mustApply(t, s, structs.NodeRegisterRequestType, 34, nil, func(txn *Txn) error {
		return s.UpsertNodeTxn(txn, mockNode("node-1"))
	})
	web := currentJob(t, s, "web")
	mustApply(t, s, structs.ApplyPlanResultsRequestType, 35, nil, func(txn *Txn) error {
		alloc := mockAlloc("alloc-1", web, "node-1", 0)
		alloc.DeploymentID = "dep-web"
		return s.ApplyPlanResultsTxn(txn, &structs.ApplyPlanResultsRequest{Job: web, Deployment: mockDeployment("dep-web", web, 0),
			AllocsPlaced: []*structs.Allocation{alloc}})
	})
	// A root key's private half must survive the snapshot: a restored server signs with it.
	mustApply(t, s, structs.KeyringUpsertRootKeyRequestType, 36, nil, func(txn *Txn) error {
		return s.UpsertRootKeyTxn(txn, &structs.RootKey{KeyID: "key-1", Algorithm: structs.RootKeyAlgorithm,
			State: structs.RootKeyStateActive, PublicKey: []byte("pub"), PrivateKey: []byte("priv")})
	})
	mustApply(t, s, structs.OneTimeTokenUpsertRequestType, 37, nil, func(txn *Txn) error {
		return s.UpsertOneTimeTokenTxn(txn, &structs.OneTimeToken{OneTimeSecretID: "ott-1", AccessorID: "acc-root",
			ExpiresAt: time.Unix(1_800_000_000, 0).UTC()})
	})
	mustApply(t, s, structs.AutopilotRequestType, 38, nil, func(txn *Txn) error {
		_, err := s.SetAutopilotConfigTxn(txn, structs.DefaultAutopilotConfig(), false)
		return err
	})
	// A job registered with its source: the submission is kept per version.
	must.NoError(t, s.ApplyJobRegister(39, &structs.JobRegisterRequest{Job: mockJobIn("prod", "with-source"),
		Submission: &api.JobSubmission{Source: `job "with-source" {}`, Format: "hcl2", VariableFlags: map[string]string{"x": "1"}}}))
	mustApply(t, s, structs.ScalingEventRegisterRequestType, 40, nil, func(txn *Txn) error {
		return s.UpsertScalingEventTxn(txn, &structs.ScalingEventRequest{Namespace: "prod", JobID: "with-source", TaskGroup: "web",
			Event: &api.ScalingEvent{Message: "informative", Meta: map[string]any{"k": "v"}, Time: 40}})
	})
	mustApply(t, s, structs.VarApplyStateRequestType, 41, nil, func(txn *Txn) error {
		_, err := s.ApplyVariableTxn(txn, structs.VarOpSet, encVar("app/db", 0, "sealed"))
		return err
	})
	mustApply(t, s, structs.NodePoolUpsertRequestType, 42, nil, func(txn *Txn) error {
		return s.UpsertNodePoolsTxn(txn, []*structs.NodePool{{Name: "gpu", Meta: map[string]string{"a": "b"}}})
	})
	scaled := mockJob("scaled")
	scaled.TaskGroups[0].Scaling = &api.ScalingPolicy{ID: "policy-1", Max: ptrOf(int64(5)), Policy: map[string]any{"cooldown": "1m"}}
	upsertJob(t, s, 43, scaled)
	mustApply(t, s, structs.SchedulerConfigRequestType, 44, nil, func(txn *Txn) error {
		_, err := s.SetSchedulerConfigTxn(txn, &structs.SchedulerConfiguration{SchedulerAlgorithm: "spread"}, false)
		return err
	})
	mustApply(t, s, structs.ACLAuthMethodUpsertRequestType, 45, nil, func(txn *Txn) error {
		return s.UpsertACLAuthMethodsTxn(txn, []*structs.ACLAuthMethod{mockAuthMethod("corp", structs.ACLAuthMethodTypeOIDC, true)})
	})
	mustApply(t, s, structs.ACLBindingRuleUpsertRequestType, 46, nil, func(txn *Txn) error {
		return s.UpsertACLBindingRulesTxn(txn, []*structs.ACLBindingRule{{ID: "rule-1", AuthMethod: "corp", BindType: "management"}})
	})
	mustApply(t, s, structs.ServiceRegistrationUpsertRequestType, 47, nil, func(txn *Txn) error {
		return s.UpsertServiceRegistrationsTxn(txn, []*structs.ServiceRegistration{{
			ID: "_nomad-task-alloc-1-server-api-http", ServiceName: "api", Namespace: structs.DefaultNamespace,
			NodeID: "node-1", Datacenter: "dc1", JobID: "web", AllocID: "alloc-1", Tags: []string{"v1"}, Address: "10.0.0.1", Port: 8080,
		}})
	})
	// A periodic parent's child launched with its launch record, in one entry.
	nightly := mockJob("nightly")
	nightly.Type = structs.JobTypeBatch
	nightly.Periodic = &api.PeriodicConfig{Spec: ptrOf("0 3 * * *")}
	upsertJob(t, s, 48, nightly)
	launch := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	must.NoError(t, s.ApplyJobRegister(49, &structs.JobRegisterRequest{Job: nightly.PeriodicChild(launch),
		PeriodicLaunch: &structs.PeriodicLaunch{Namespace: structs.DefaultNamespace, ID: "nightly", Launch: launch}}))
	must.NoError(t, s.ApplyJobProtection(50, &structs.JobProtectionRequest{JobID: "web", Protected: true, Reason: "billing",
		Actor: actorAlice, ModifyTime: 50, WriteRequest: structs.WriteRequest{Namespace: structs.DefaultNamespace}}))
	mustApply(t, s, structs.EventSinkUpsertRequestType, 51, nil, func(txn *Txn) error {
		return s.UpsertEventSinkTxn(txn, &structs.EventSink{ID: "alerts", Type: structs.EventSinkTypeWebhook,
			Address: "https://hooks.example/nomad", Topics: map[structs.Topic][]string{structs.TopicJob: {"*"}},
			Filter: `Payload.Purge == true`, Secret: "0123456789abcdef"})
	})
	mustApply(t, s, structs.EventSinkProgressRequestType, 52, nil, func(txn *Txn) error {
		return s.UpdateEventSinkProgressTxn(txn, &structs.EventSinkProgressRequest{ID: "alerts", LatestIndex: 50,
			LastError: "receiver answered 503", LastErrorTime: 52})
	})
	// A finished allocation the GC collected leaves its job's tally.
	scaledJob := currentJob(t, s, "scaled")
	applyPlan(t, s, 53, &structs.ApplyPlanResultsRequest{Job: scaledJob, AllocsPlaced: []*structs.Allocation{mockAlloc("alloc-gc", scaledJob, "node-1", 0)}})
	applyClientUpdate(t, s, 54, clientStatus("alloc-gc", structs.AllocClientStatusFailed))
	must.NoError(t, s.ApplyAllocDelete(55, &structs.AllocDeleteRequest{Allocs: []string{"alloc-gc"}}))
	return s
}

// tableRows reads every row of a table through its id index.
func tableRows(t *testing.T, s *StateStore, table string) []any {
	t.Helper()
	iter, err := s.ReadTxn().Get(table, indexID)
	must.NoError(t, err)
	var rows []any
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		rows = append(rows, raw)
	}
	return rows
}

func TestStateSnapshot_PersistRestore(t *testing.T) {
	s := snapshotFixture(t)
	var buf bytes.Buffer
	must.NoError(t, s.Snapshot().Persist(&buf))

	restored, err := Restore(s.Config(), &buf)
	must.NoError(t, err)

	names := TableNames()
	sort.Strings(names)
	for _, table := range names {
		t.Run(table, func(t *testing.T) {
			want := tableRows(t, s, table)
			// A table without rows here would pass without proving it survives a restore.
			must.SliceNotEmpty(t, want, must.Sprintf("table %q has no rows in snapshotFixture: add some", table))
			must.Eq(t, want, tableRows(t, restored, table))
		})
	}

	// Secondary indexes are rebuilt and derived values read back the same.
	must.Eq(t, s.LatestIndex(), restored.LatestIndex())
	must.Eq(t, uint64(32), restored.ACLBootstrapIndex())
	tok, err := restored.ACLTokenBySecretID(nil, "secret-alice")
	must.NoError(t, err)
	must.NotNil(t, tok)
	role, err := restored.ACLRoleByName(nil, "dev")
	must.NoError(t, err)
	must.NotNil(t, role)
	evals, err := restored.EvalsByJob(nil, "prod", "api")
	must.NoError(t, err)
	must.Len(t, 1, evals)
	must.Eq(t, []uint64{2, 1, 0}, jobVersions(t, restored, structs.DefaultNamespace, "web"))
	allocs, err := restored.AllocsByNode(nil, "node-1")
	must.NoError(t, err)
	must.Len(t, 1, allocs)
	must.Eq(t, "web", allocs[0].Job.ID)
	node, err := restored.NodeBySecretID(nil, "secret-node-1")
	must.NoError(t, err)
	must.NotNil(t, node)

	// The restored store keeps working: versioning continues from the restored rows.
	upsertJob(t, restored, 40, mockJob("web"))
	job, err := restored.JobByID(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	must.Eq(t, uint64(3), job.Version)
}

func TestStateSnapshot_IsPointInTime(t *testing.T) {
	s := testStateStore(t)
	upsertJob(t, s, 10, mockJob("web"))
	snap := s.Snapshot()
	upsertJob(t, s, 11, mockJob("api"))

	var buf bytes.Buffer
	must.NoError(t, snap.Persist(&buf))
	restored, err := Restore(s.Config(), &buf)
	must.NoError(t, err)
	jobs, err := restored.Jobs(nil, structs.DefaultNamespace, "")
	must.NoError(t, err)
	must.Len(t, 1, jobs)
	must.Eq(t, "web", jobs[0].ID)
	must.Eq(t, uint64(10), restored.Index(tableJobs))
}

func TestRestore_UnknownTable(t *testing.T) {
	cases := []struct {
		name    string
		input   []byte
		wantErr string
	}{
		{name: "unknown table", input: mustEncodeHeader(t, "no_such_table"), wantErr: `unknown table "no_such_table"`},
		{name: "truncated row", input: mustEncodeHeader(t, tableJobs), wantErr: "restore row of jobs"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Restore(Config{}, bytes.NewReader(tc.input))
			must.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func mustEncodeHeader(t *testing.T, table string) []byte {
	t.Helper()
	raw, err := structs.Encode(0, &snapshotHeader{Table: table})
	must.NoError(t, err)
	return raw[1:] // drop the message type byte: a snapshot stream has none
}
