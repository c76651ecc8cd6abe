package fsm

import (
	"fmt"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func testFSM(t *testing.T) *FSM {
	t.Helper()
	f, err := NewFSM(hclog.NewNullLogger(), state.Config{JobTrackedVersions: 6}, nil)
	must.NoError(t, err)
	return f
}

func applyEntry(t *testing.T, f *FSM, index uint64, mt structs.MessageType, req any) any {
	t.Helper()
	buf, err := structs.Encode(mt, req)
	must.NoError(t, err)
	return f.Apply(&raft.Log{Index: index, Type: raft.LogCommand, Data: buf})
}

func TestFSM_EveryMessageTypeHasAHandler(t *testing.T) {
	f := testFSM(t)
	for mt, info := range structs.MessageTypes {
		_, ok := f.handlers[mt]
		must.True(t, ok, must.Sprintf("message type %s (%d) has no FSM handler", info.Name, mt))
	}
	for mt := range f.handlers {
		_, ok := structs.MessageTypes[mt]
		must.True(t, ok, must.Sprintf("handler for %d is missing from structs.MessageTypes", mt))
	}
}

func TestFSM_UnknownMessageTypePanics(t *testing.T) {
	f := testFSM(t)
	must.Panic(t, func() {
		f.Apply(&raft.Log{Index: 5, Type: raft.LogCommand, Data: []byte{250, 0x80}})
	})
}

func TestFSM_CorruptEntryPanics(t *testing.T) {
	f := testFSM(t)
	must.Panic(t, func() {
		f.Apply(&raft.Log{Index: 5, Type: raft.LogCommand, Data: []byte{byte(structs.JobRegisterRequestType), 0xc1, 0xff}})
	})
}

func TestFSM_PurgeWritesRecordInSameTransaction(t *testing.T) {
	f := testFSM(t)
	job := mock.Job()
	must.Nil(t, applyEntry(t, f, 10, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job}))

	actor := &structs.Actor{AccessorID: "a-1", Name: "alice", Type: "client"}
	resp := applyEntry(t, f, 11, structs.JobDeregisterRequestType, &structs.JobDeregisterRequest{
		JobID: job.ID, Purge: true, Actor: actor, PurgeRecordID: "rec-1", PurgeTime: 1234,
		WriteRequest: structs.WriteRequest{Namespace: job.Namespace},
	})
	must.Nil(t, resp)

	got, err := f.State().JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.Nil(t, got)
	rec, err := f.State().PurgeRecordByID(nil, "rec-1")
	must.NoError(t, err)
	must.NotNil(t, rec)
	must.Eq(t, structs.PurgeReasonPurge, rec.Reason)
	must.Eq(t, actor, rec.Actor)
	must.Eq(t, int64(1234), rec.PurgeTime)
	must.Eq(t, uint64(11), rec.CreateIndex)
	must.Eq(t, job.ID, rec.Job.ID)
}

func TestFSM_PurgeWithoutRecordIDChangesNothing(t *testing.T) {
	f := testFSM(t)
	job := mock.Job()
	must.Nil(t, applyEntry(t, f, 10, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job}))
	resp := applyEntry(t, f, 11, structs.JobDeregisterRequestType, &structs.JobDeregisterRequest{
		JobID: job.ID, Purge: true, WriteRequest: structs.WriteRequest{Namespace: job.Namespace},
	})
	must.NotNil(t, resp)
	got, err := f.State().JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.NotNil(t, got)
	records, err := f.State().PurgeRecords(nil)
	must.NoError(t, err)
	must.SliceEmpty(t, records)
}

func TestFSM_EnforceIndexIsCheckedInTheTransaction(t *testing.T) {
	f := testFSM(t)
	job := mock.Job()
	must.Nil(t, applyEntry(t, f, 10, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, EnforceIndex: true}))
	// A second create-only register loses the check-and-set.
	resp := applyEntry(t, f, 11, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mock.Job(), EnforceIndex: true})
	must.NotNil(t, resp)
	must.Eq(t, 409, structs.ErrorCode(resp.(error)))
	resp = applyEntry(t, f, 12, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mock.Job(), EnforceIndex: true, JobModifyIndex: 10})
	must.Nil(t, resp)
}

func TestFSM_SnapshotRestoreRoundTrip(t *testing.T) {
	f := testFSM(t)
	job := mock.Job()
	must.Nil(t, applyEntry(t, f, 10, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job}))
	must.Nil(t, applyEntry(t, f, 11, structs.JobDeregisterRequestType, &structs.JobDeregisterRequest{
		JobID: job.ID, WriteRequest: structs.WriteRequest{Namespace: job.Namespace}}))

	snap, err := f.Snapshot()
	must.NoError(t, err)
	sink := &memSink{}
	must.NoError(t, snap.Persist(sink))

	f2 := testFSM(t)
	old := f2.State()
	must.NoError(t, f2.Restore(sink))
	select {
	case <-old.AbandonCh():
	default:
		t.Fatal("restore did not abandon the old store")
	}
	got, err := f2.State().JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.NotNil(t, got)
	must.True(t, got.Stop)
	must.Eq(t, uint64(1), got.Version)
}

// The answering writes return their answer, not nil, as the apply's response: the endpoints
// read the check-and-set outcome and the written row from it. A domain error is the response.
func TestFSM_AnswersReachTheCaller(t *testing.T) {
	f := testFSM(t)
	must.Eq[any](t, false, applyEntry(t, f, 10, structs.SchedulerConfigRequestType, &structs.SchedulerSetConfigRequest{
		Config: structs.SchedulerConfiguration{ModifyIndex: 5}, CAS: true}))
	must.Eq[any](t, true, applyEntry(t, f, 11, structs.SchedulerConfigRequestType, &structs.SchedulerSetConfigRequest{}))
	must.Eq[any](t, true, applyEntry(t, f, 12, structs.AutopilotRequestType, &structs.AutopilotSetConfigRequest{}))

	resp := applyEntry(t, f, 13, structs.VarApplyStateRequestType, &structs.VarApplyStateRequest{Op: structs.VarOpSet,
		Var: &structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{Namespace: structs.DefaultNamespace, Path: "a"},
			VariableData: structs.VariableData{Data: []byte("sealed"), KeyID: "key-1"}}})
	written, ok := resp.(*structs.VarApplyStateResponse)
	must.True(t, ok, must.Sprintf("response %#v", resp))
	must.NotNil(t, written.Written)
	must.Eq(t, uint64(13), written.Written.ModifyIndex)

	resp = applyEntry(t, f, 14, structs.VarApplyStateRequestType, &structs.VarApplyStateRequest{Op: structs.VarOpSet})
	err, ok := resp.(error)
	must.True(t, ok, must.Sprintf("response %#v", resp))
	must.Eq(t, 400, structs.ErrorCode(err))
}

// A server of an older release receives, during a rolling upgrade, entries a newer leader
// wrote. It must not apply what it may misread, nor skip it (its state would diverge): it
// stops, saying to upgrade it.
func TestFSM_RefusesEntryOfNewerSchema(t *testing.T) {
	f := testFSM(t)
	buf, err := structs.EncodeEntry(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mock.JobWithID("newer")})
	must.NoError(t, err)
	func() {
		defer func() {
			r := recover()
			must.NotNil(t, r, must.Sprint("the FSM applied an entry of a newer schema"))
			msg := r.(string)
			must.StrContains(t, msg, "index 42")
			must.StrContains(t, msg, "written by a newer release")
			must.StrContains(t, msg, "schema version 2")
			must.StrContains(t, msg, "upgrade this server")
		}()
		f.Apply(&raft.Log{Index: 42, Type: raft.LogCommand, Data: buf, Extensions: structs.EntryExtensionsAt(structs.SchemaVersion + 1)})
	}()
	got, err := f.State().JobByID(nil, "default", "newer")
	must.NoError(t, err)
	must.Nil(t, got)
}

// Entries written before the stamp (every data dir of release 0.1.0 and older) and stamped
// ones of this version apply alike.
func TestFSM_AppliesStampedAndUnstampedEntries(t *testing.T) {
	f := testFSM(t)
	for i, ext := range [][]byte{nil, structs.EntryExtensions(), structs.EntryExtensionsAt(structs.SchemaVersion)} {
		id := fmt.Sprintf("job-%d", i)
		buf, err := structs.EncodeEntry(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mock.JobWithID(id)})
		must.NoError(t, err)
		must.Nil(t, f.Apply(&raft.Log{Index: uint64(10 + i), Type: raft.LogCommand, Data: buf, Extensions: ext}))
		got, err := f.State().JobByID(nil, "default", id)
		must.NoError(t, err)
		must.NotNil(t, got, must.Sprintf("entry with extensions %x not applied", ext))
	}
}
