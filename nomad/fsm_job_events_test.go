package nomad

import (
	"context"
	"fmt"
	"github.com/nomadfork/nomad/nomad/fsm"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/raft"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/nomad/stream"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
	"pgregory.net/rapid"
)

// jobEventSeen is what a subscriber learns from one Job event.
type jobEventSeen struct {
	Type    string
	JobID   string
	Purge   bool
	Deleted bool
}

// jobEventsOf runs op on srv and returns the Job events it published, read from the broker up
// to a fence write, so a write that publishes nothing is seen to publish nothing.
func jobEventsOf(t *testing.T, srv *Server, op func() error, wantErrCode int) []jobEventSeen {
	t.Helper()
	sub, err := srv.EventBroker().Subscribe(&stream.SubscribeRequest{
		Topics:    map[structs.Topic][]string{structs.TopicJob: {"*"}},
		Namespace: structs.AllNamespacesSentinel,
		Index:     srv.raft.AppliedIndex(),
	})
	must.NoError(t, err)
	defer sub.Unsubscribe()

	err = op()
	if wantErrCode != 0 {
		must.Eq(t, wantErrCode, structs.ErrorCode(err), must.Sprintf("error %v", err))
	} else {
		must.NoError(t, err)
	}
	register(t, srv, mock.JobWithID("fence"))

	var seen []jobEventSeen
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		batch, err := sub.Next(ctx)
		must.NoError(t, err)
		for _, e := range batch.Events {
			payload := e.Payload.(*structs.JobEvent)
			if payload.Job.ID == "fence" {
				return seen
			}
			seen = append(seen, jobEventSeen{Type: e.Type, JobID: payload.Job.ID, Purge: payload.Purge, Deleted: payload.Deleted})
		}
	}
}

func register(t *testing.T, srv *Server, job *structs.Job) {
	t.Helper()
	var reply structs.JobRegisterResponse
	must.NoError(t, srv.Endpoints.Job.Register(&structs.JobRegisterRequest{Job: job,
		WriteRequest: structs.WriteRequest{Namespace: job.Namespace}}, &reply))
}

func deregister(srv *Server, id string, purge bool) error {
	var reply structs.JobDeregisterResponse
	return srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{JobID: id, Purge: purge,
		WriteRequest: structs.WriteRequest{Namespace: structs.DefaultNamespace}}, &reply)
}

// Every write that can keep or remove a job row, through the endpoints, Raft and the real FSM:
// Purge is what the request said, Deleted is whether the row is gone.
func TestJobEvents_PurgeIsTheRequestsFlag(t *testing.T) {
	web := func() *structs.Job { return mock.Job() }
	cases := []struct {
		name    string
		setup   func(t *testing.T, srv *Server)
		op      func(srv *Server) error
		errCode int
		want    []jobEventSeen
	}{
		{
			name: "register",
			op: func(srv *Server) error {
				var reply structs.JobRegisterResponse
				return srv.Endpoints.Job.Register(&structs.JobRegisterRequest{Job: web(),
					WriteRequest: structs.WriteRequest{Namespace: structs.DefaultNamespace}}, &reply)
			},
			want: []jobEventSeen{{Type: "JobRegistered", JobID: "web"}},
		},
		{
			name:  "stop",
			setup: func(t *testing.T, srv *Server) { register(t, srv, web()) },
			op:    func(srv *Server) error { return deregister(srv, "web", false) },
			want:  []jobEventSeen{{Type: "JobDeregistered", JobID: "web"}},
		},
		{
			name: "stop of a stopped job",
			setup: func(t *testing.T, srv *Server) {
				register(t, srv, web())
				must.NoError(t, deregister(srv, "web", false))
			},
			op:   func(srv *Server) error { return deregister(srv, "web", false) },
			want: []jobEventSeen{{Type: "JobDeregistered", JobID: "web"}},
		},
		{
			name:  "purge",
			setup: func(t *testing.T, srv *Server) { register(t, srv, web()) },
			op:    func(srv *Server) error { return deregister(srv, "web", true) },
			want:  []jobEventSeen{{Type: "JobDeregistered", JobID: "web", Purge: true, Deleted: true}},
		},
		{
			// A 404 (unlike upstream's 200) that writes nothing: no event, no purge record.
			name: "purge of a missing job",
			op: func(srv *Server) error {
				if err := deregister(srv, "web", true); structs.ErrorCode(err) != 404 {
					return fmt.Errorf("want a 404, got %v", err)
				}
				return nil
			},
		},
		{
			name: "forced GC of a stopped job",
			setup: func(t *testing.T, srv *Server) {
				register(t, srv, web())
				must.NoError(t, deregister(srv, "web", false))
			},
			op: func(srv *Server) error {
				var reply structs.GenericResponse
				return srv.Endpoints.System.GarbageCollect(&structs.WriteRequest{}, &reply)
			},
			want: []jobEventSeen{{Type: "JobBatchDeregistered", JobID: "web", Purge: true, Deleted: true}},
		},
		{
			name: "restore of a purged job",
			setup: func(t *testing.T, srv *Server) {
				register(t, srv, web())
				must.NoError(t, deregister(srv, "web", true))
			},
			op: func(srv *Server) error {
				records, err := srv.State().PurgeRecords(nil)
				if err != nil {
					return err
				}
				var reply structs.JobRegisterResponse
				return srv.Endpoints.PurgeRecord.Restore(&structs.PurgeRecordRestoreRequest{ID: records[0].ID}, &reply)
			},
			want: []jobEventSeen{{Type: "JobRegistered", JobID: "web"}},
		},
		{
			name: "revert",
			setup: func(t *testing.T, srv *Server) {
				register(t, srv, web())
				changed := web()
				changed.Meta = map[string]string{"rev": "2"}
				register(t, srv, changed)
			},
			op: func(srv *Server) error {
				var reply structs.JobRegisterResponse
				return srv.Endpoints.Job.Revert(&structs.JobRevertRequest{JobID: "web", JobVersion: 0,
					WriteRequest: structs.WriteRequest{Namespace: structs.DefaultNamespace}}, &reply)
			},
			want: []jobEventSeen{{Type: "JobRegistered", JobID: "web"}},
		},
		{
			name:  "scale",
			setup: func(t *testing.T, srv *Server) { register(t, srv, web()) },
			op: func(srv *Server) error {
				count := int64(3)
				job, err := srv.State().JobByID(nil, structs.DefaultNamespace, "web")
				if err != nil {
					return err
				}
				var reply structs.JobRegisterResponse
				return srv.Endpoints.Job.Scale(&structs.JobScaleRequest{JobID: "web", Count: &count,
					Target:       map[string]string{"Group": *job.TaskGroups[0].Name},
					WriteRequest: structs.WriteRequest{Namespace: structs.DefaultNamespace}}, &reply)
			},
			want: []jobEventSeen{{Type: "JobRegistered", JobID: "web"}},
		},
		{
			name: "namespace delete with a job is refused",
			setup: func(t *testing.T, srv *Server) {
				var reply structs.GenericResponse
				must.NoError(t, srv.Endpoints.Namespace.Upsert(&structs.NamespaceUpsertRequest{
					Namespaces: []*structs.Namespace{{Name: "team"}}}, &reply))
				job := web()
				job.Namespace = "team"
				register(t, srv, job)
			},
			op: func(srv *Server) error {
				var reply structs.GenericResponse
				return srv.Endpoints.Namespace.Delete(&structs.NamespaceDeleteRequest{Namespaces: []string{"team"}}, &reply)
			},
			errCode: 400,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := testServer(t, nil)
			if tc.setup != nil {
				tc.setup(t, srv)
			}
			got := jobEventsOf(t, srv, func() error { return tc.op(srv) }, tc.errCode)
			must.Eq(t, tc.want, got)
			for _, e := range got {
				job, err := srv.State().JobByID(nil, structs.DefaultNamespace, e.JobID)
				must.NoError(t, err)
				must.Eq(t, e.Deleted, job == nil, must.Sprintf("Deleted of %s says whether its row is gone", e.JobID))
			}
		})
	}
}

// TestJobEvents_PurgeInvariantThroughTheFSM drives random register/stop/purge/GC entries
// through FSM.Apply, encoded as the leader encodes them, and checks every Job event: Purge is
// the request's flag, Deleted says whether the row is gone, Actor is the request's.
func TestJobEvents_PurgeInvariantThroughTheFSM(t *testing.T) {
	ids := []string{"web", "web2", "api"}
	actors := []*structs.Actor{nil, {AccessorID: "a-1", Name: "alice", Type: "client"}, {AccessorID: "b-1", Name: "bob", Type: "management"}}
	ops := []string{"register", "stop", "purge", "gc"}

	rapid.Check(t, func(rt *rapid.T) {
		var got []*structs.Events
		machine, err := fsm.NewFSM(hclog.NewNullLogger(), state.Config{JobTrackedVersions: 2}, func(txn *state.Txn, changes memdb.Changes) {
			if events := state.EventsFromChanges(txn, changes); events != nil {
				got = append(got, events)
			}
		})
		must.NoError(rt, err)
		index := uint64(1)
		apply := func(t structs.MessageType, req any) any {
			index++
			data, err := structs.EncodeEntry(t, req)
			must.NoError(rt, err)
			return machine.Apply(&raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: data})
		}
		nanos := func() int64 { return int64(index) * 1_000_000_000 }
		must.Nil(rt, apply(structs.NamespaceUpsertRequestType, &structs.NamespaceUpsertRequest{
			Namespaces: []*structs.Namespace{{Name: structs.DefaultNamespace}}}))
		got = nil
		exists := map[string]bool{}

		steps := rapid.IntRange(1, 25).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			op := rapid.SampledFrom(ops).Draw(rt, "op")
			id := rapid.SampledFrom(ids).Draw(rt, "id")
			actor := rapid.SampledFrom(actors).Draw(rt, "actor")
			before := len(got)

			var resp any
			wantPurge, emits := false, false
			switch op {
			case "register":
				job := mock.JobWithID(id)
				job.Priority = rapid.IntRange(49, 51).Draw(rt, "priority") // repeats are identical re-registers
				resp = apply(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Actor: actor})
				emits, exists[id] = true, true
			case "stop", "purge":
				wantPurge = op == "purge"
				resp = apply(structs.JobDeregisterRequestType, &structs.JobDeregisterRequest{
					JobID: id, Purge: wantPurge, Actor: actor, PurgeRecordID: fmt.Sprintf("rec-%d", index+1),
					PurgeTime: nanos(), StopTime: nanos(), WriteRequest: structs.WriteRequest{Namespace: structs.DefaultNamespace},
				})
				if exists[id] {
					emits = true
					exists[id] = exists[id] && !wantPurge
				}
			case "gc":
				wantPurge, actor = true, structs.ActorJobGC
				victims := rapid.SliceOfNDistinct(rapid.SampledFrom(ids), 1, len(ids), rapid.ID[string]).Draw(rt, "victims")
				req := &structs.JobBatchDeregisterRequest{PurgeTime: nanos(), Actor: actor}
				for _, v := range victims {
					req.Jobs = append(req.Jobs, &structs.JobBatchDeregisterItem{Namespace: structs.DefaultNamespace, JobID: v, PurgeRecordID: fmt.Sprintf("gc-%d-%s", index+1, v)})
					emits = emits || exists[v]
					exists[v] = false
				}
				resp = apply(structs.JobBatchDeregisterRequestType, req)
			}
			if op == "register" || op == "gc" || emits {
				must.Nil(rt, resp, must.Sprintf("%s %s", op, id))
			} else {
				must.Eq(rt, 404, structs.ErrorCode(resp.(error)))
			}

			if !emits {
				must.Eq(rt, before, len(got), must.Sprintf("%s %s published", op, id))
				continue
			}
			must.Eq(rt, before+1, len(got), must.Sprintf("%s %s published one batch", op, id))
			batch := got[len(got)-1]
			must.Eq(rt, index, batch.Index)
			for _, e := range batch.Events {
				if e.Topic != structs.TopicJob {
					continue
				}
				payload, ok := e.Payload.(*structs.JobEvent)
				if !ok {
					// A JobVersionPruned beside a register: versions, not the job row.
					must.Eq(rt, structs.TypeJobVersionPruned, e.Type, must.Sprintf("%s %s", op, e.Key))
					continue
				}
				row, err := machine.State().JobByID(nil, e.Namespace, e.Key)
				must.NoError(rt, err)
				must.Eq(rt, row == nil, payload.Deleted, must.Sprintf("%s %s: Deleted is the row's removal", op, e.Key))
				must.Eq(rt, wantPurge, payload.Purge, must.Sprintf("%s %s: Purge is the request's flag", op, e.Key))
				must.Eq(rt, actor, payload.Actor, must.Sprintf("%s %s: Actor", op, e.Key))
			}
		}
		for _, id := range ids {
			job, err := machine.State().JobByID(nil, structs.DefaultNamespace, id)
			must.NoError(rt, err)
			must.Eq(rt, exists[id], job != nil, must.Sprintf("job %s", id))
		}
	})
}
