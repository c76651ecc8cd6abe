package state

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// Actors used across the tests. None carries a secret: actors never do.
var (
	actorAlice = &structs.Actor{AccessorID: "7c1c0b4e-0000-4000-8000-00000000a11c", Name: "alice", Type: structs.ACLClientToken}
	actorBob   = &structs.Actor{AccessorID: "7c1c0b4e-0000-4000-8000-000000000b0b", Name: "bob", Type: structs.ACLManagementToken}
)

func ptrOf[T any](v T) *T { return &v }

// testStateStore returns an empty store with default settings.
func testStateStore(t *testing.T) *StateStore {
	t.Helper()
	return testStateStoreConfig(t, Config{})
}

func testStateStoreConfig(t *testing.T, config Config) *StateStore {
	t.Helper()
	s, err := NewStateStore(config)
	must.NoError(t, err)
	return s
}

// mockJob returns a canonical service job with one group. Every call builds fresh values, so a
// test may change the result without touching rows stored earlier (UpsertJobTxn stores the
// pointer it is given).
func mockJob(id string) *structs.Job {
	return &structs.Job{
		Region:      structs.DefaultRegion,
		Namespace:   structs.DefaultNamespace,
		ID:          id,
		Name:        id,
		Type:        structs.JobTypeService,
		Priority:    structs.JobDefaultPriority,
		Datacenters: []string{"dc1"},
		NodePool:    structs.DefaultNodePool,
		TaskGroups: []*api.TaskGroup{{
			Name:  ptrOf("web"),
			Count: ptrOf(1),
			Tasks: []*api.Task{{
				Name:   "server",
				Driver: "docker",
				Config: map[string]any{"image": "nginx:1.27"},
			}},
		}},
		Meta: map[string]string{"owner": "team-a"},
	}
}

// mockJobIn is mockJob in another namespace.
func mockJobIn(namespace, id string) *structs.Job {
	j := mockJob(id)
	j.Namespace = namespace
	return j
}

// mockEval returns a pending evaluation of job.
func mockEval(id string, job *structs.Job, trigger string) *structs.Evaluation {
	return &structs.Evaluation{
		ID:          id,
		Namespace:   job.Namespace,
		Priority:    job.Priority,
		Type:        job.Type,
		TriggeredBy: trigger,
		JobID:       job.ID,
		Status:      structs.EvalStatusPending,
	}
}

// applyTxn runs fn in one write transaction, as the FSM applies one Raft entry: it commits when
// fn succeeds and aborts otherwise.
func applyTxn(s *StateStore, msgType structs.MessageType, index uint64, meta *TxnMeta, fn func(txn *Txn) error) error {
	txn := s.WriteTxn(msgType, index, meta)
	defer txn.Abort()
	if err := fn(txn); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

// mustApply is applyTxn for writes that must succeed.
func mustApply(t *testing.T, s *StateStore, msgType structs.MessageType, index uint64, meta *TxnMeta, fn func(txn *Txn) error) {
	t.Helper()
	must.NoError(t, applyTxn(s, msgType, index, meta, fn))
}

// The apply helpers below build the request of the Raft entry of the same name and apply it
// with the function the FSM calls, so event and property tests exercise the transactions a
// real cluster commits. Record IDs and times are derived from the index, as a leader would
// fix them.

func applyRegister(s *StateStore, index uint64, actor *structs.Actor, job *structs.Job, eval *structs.Evaluation) error {
	return s.ApplyJobRegister(index, &structs.JobRegisterRequest{Job: job, Eval: eval, Actor: actor})
}

func applyStop(s *StateStore, index uint64, actor *structs.Actor, namespace, id string, eval *structs.Evaluation) error {
	return s.ApplyJobDeregister(index, &structs.JobDeregisterRequest{
		JobID: id, Eval: eval, Actor: actor, StopTime: int64(index) * 1_000_000_000,
		WriteRequest: structs.WriteRequest{Namespace: namespace},
	})
}

func applyPurge(s *StateStore, index uint64, actor *structs.Actor, namespace, id, recordID string, eval *structs.Evaluation) error {
	return s.ApplyJobDeregister(index, &structs.JobDeregisterRequest{
		JobID: id, Purge: true, Eval: eval, Actor: actor, PurgeRecordID: recordID,
		PurgeTime: int64(index) * 1_000_000_000, StopTime: int64(index) * 1_000_000_000,
		WriteRequest: structs.WriteRequest{Namespace: namespace},
	})
}

// applyBatchDeregister removes jobs as the job GC does; jobs already gone are skipped.
func applyBatchDeregister(s *StateStore, index uint64, jobs []structs.NamespacedID) error {
	req := &structs.JobBatchDeregisterRequest{PurgeTime: int64(index) * 1_000_000_000, Actor: structs.ActorJobGC}
	for _, id := range jobs {
		req.Jobs = append(req.Jobs, &structs.JobBatchDeregisterItem{Namespace: id.Namespace, JobID: id.ID, PurgeRecordID: "gc-" + id.String()})
	}
	return s.ApplyJobBatchDeregister(index, req)
}

// mockPurgeRecord is the record a purge at index writes, with the time a leader would fix.
func mockPurgeRecord(id string, job *structs.Job, reason string, actor *structs.Actor, index uint64) *structs.PurgeRecord {
	return PurgeRecordFor(job, nil, id, int64(index)*1_000_000_000, reason, actor)
}

// upsertJob registers job at index in its own transaction.
func upsertJob(t *testing.T, s *StateStore, index uint64, job *structs.Job) {
	t.Helper()
	must.NoError(t, applyRegister(s, index, nil, job, nil))
}

// upsertNamespaces creates namespaces at index.
func upsertNamespaces(t *testing.T, s *StateStore, index uint64, names ...string) {
	t.Helper()
	mustApply(t, s, structs.NamespaceUpsertRequestType, index, nil, func(txn *Txn) error {
		var nss []*structs.Namespace
		for _, name := range names {
			nss = append(nss, &structs.Namespace{Name: name, Description: name + " namespace"})
		}
		return s.UpsertNamespacesTxn(txn, nss)
	})
}

// jobVersions lists the version numbers stored for a job, newest first.
func jobVersions(t *testing.T, s *StateStore, namespace, id string) []uint64 {
	t.Helper()
	versions, err := s.JobVersionsByID(nil, namespace, id)
	must.NoError(t, err)
	out := []uint64{}
	for _, v := range versions {
		must.Eq(t, id, v.ID)
		out = append(out, v.Version)
	}
	return out
}

// mustCode asserts err carries the HTTP status code.
func mustCode(t must.T, code int, err error) {
	t.Helper()
	must.Error(t, err)
	must.Eq(t, code, structs.ErrorCode(err), must.Sprintf("error: %v", err))
}
