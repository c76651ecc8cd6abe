package state

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func encVar(path string, modifyIndex uint64, data string) *structs.VariableEncrypted {
	return &structs.VariableEncrypted{
		VariableMetadata: structs.VariableMetadata{Namespace: "default", Path: path, ModifyIndex: modifyIndex, ModifyTime: 1000 + int64(modifyIndex)},
		VariableData:     structs.VariableData{Data: []byte(data), KeyID: "key-1"},
	}
}

func withLock(v *structs.VariableEncrypted, id string) *structs.VariableEncrypted {
	v.Lock = &structs.VariableLock{ID: id, TTL: 15 * time.Second}
	return v
}

// applyVar runs one variable write through the method the FSM calls.
func applyVar(t *testing.T, s *StateStore, index uint64, op structs.VarOp, v *structs.VariableEncrypted) *structs.VarApplyStateResponse {
	t.Helper()
	resp, err := s.ApplyVariable(index, &structs.VarApplyStateRequest{Op: op, Var: v, Actor: actorAlice})
	must.NoError(t, err)
	return resp
}

func TestApplyVariableTxn(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, s *StateStore) // writes at indexes below 100
		op    structs.VarOp
		v     *structs.VariableEncrypted
		// wantConflict: the check fails and the response carries the row at this
		// ModifyIndex (0 = the variable did not exist).
		wantConflict bool
		conflictAt   uint64
		// want is the row afterwards (nil: no row), checked on Path, indexes, data and lock.
		want *structs.VariableEncrypted
	}{
		{
			name: "set creates", op: structs.VarOpSet, v: encVar("a", 0, "one"),
			want: &structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{Path: "a", CreateIndex: 100, ModifyIndex: 100},
				VariableData: structs.VariableData{Data: []byte("one")}},
		},
		{
			name:  "set updates, keeping the create index",
			setup: func(t *testing.T, s *StateStore) { applyVar(t, s, 10, structs.VarOpSet, encVar("a", 0, "one")) },
			op:    structs.VarOpSet, v: encVar("a", 0, "two"),
			want: &structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{Path: "a", CreateIndex: 10, ModifyIndex: 100},
				VariableData: structs.VariableData{Data: []byte("two")}},
		},
		{
			name:  "cas at the current index",
			setup: func(t *testing.T, s *StateStore) { applyVar(t, s, 10, structs.VarOpSet, encVar("a", 0, "one")) },
			op:    structs.VarOpCAS, v: encVar("a", 10, "two"),
			want: &structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{Path: "a", CreateIndex: 10, ModifyIndex: 100},
				VariableData: structs.VariableData{Data: []byte("two")}},
		},
		{
			name:  "cas at a stale index conflicts",
			setup: func(t *testing.T, s *StateStore) { applyVar(t, s, 10, structs.VarOpSet, encVar("a", 0, "one")) },
			op:    structs.VarOpCAS, v: encVar("a", 9, "two"), wantConflict: true, conflictAt: 10,
			want: &structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{Path: "a", CreateIndex: 10, ModifyIndex: 10},
				VariableData: structs.VariableData{Data: []byte("one")}},
		},
		{
			name:  "cas 0 on an existing variable conflicts",
			setup: func(t *testing.T, s *StateStore) { applyVar(t, s, 10, structs.VarOpSet, encVar("a", 0, "one")) },
			op:    structs.VarOpCAS, v: encVar("a", 0, "two"), wantConflict: true, conflictAt: 10,
			want: &structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{Path: "a", CreateIndex: 10, ModifyIndex: 10},
				VariableData: structs.VariableData{Data: []byte("one")}},
		},
		{
			name: "cas on a missing variable conflicts with an empty one",
			op:   structs.VarOpCAS, v: encVar("a", 5, "two"), wantConflict: true, conflictAt: 0,
		},
		{
			name:  "delete",
			setup: func(t *testing.T, s *StateStore) { applyVar(t, s, 10, structs.VarOpSet, encVar("a", 0, "one")) },
			op:    structs.VarOpDelete, v: encVar("a", 0, ""),
		},
		{
			name: "delete of a missing variable is a no-op",
			op:   structs.VarOpDelete, v: encVar("a", 0, ""),
		},
		{
			name:  "delete-cas at a stale index conflicts",
			setup: func(t *testing.T, s *StateStore) { applyVar(t, s, 10, structs.VarOpSet, encVar("a", 0, "one")) },
			op:    structs.VarOpDeleteCAS, v: encVar("a", 3, ""), wantConflict: true, conflictAt: 10,
			want: &structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{Path: "a", CreateIndex: 10, ModifyIndex: 10},
				VariableData: structs.VariableData{Data: []byte("one")}},
		},
		{
			name: "lock acquire keeps the data when none is sent",
			setup: func(t *testing.T, s *StateStore) {
				applyVar(t, s, 10, structs.VarOpSet, encVar("a", 0, "one"))
			},
			op: structs.VarOpLockAcquire, v: withLock(encVar("a", 0, ""), "L1"),
			want: withLock(&structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{Path: "a", CreateIndex: 10, ModifyIndex: 100},
				VariableData: structs.VariableData{Data: []byte("one")}}, "L1"),
		},
		{
			name: "lock acquire on a locked variable conflicts",
			setup: func(t *testing.T, s *StateStore) {
				applyVar(t, s, 10, structs.VarOpLockAcquire, withLock(encVar("a", 0, "one"), "L1"))
			},
			op: structs.VarOpLockAcquire, v: withLock(encVar("a", 0, "two"), "L2"), wantConflict: true, conflictAt: 10,
			want: withLock(&structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{Path: "a", CreateIndex: 10, ModifyIndex: 10},
				VariableData: structs.VariableData{Data: []byte("one")}}, "L1"),
		},
		{
			name: "a locked variable refuses a write without its lock",
			setup: func(t *testing.T, s *StateStore) {
				applyVar(t, s, 10, structs.VarOpLockAcquire, withLock(encVar("a", 0, "one"), "L1"))
			},
			op: structs.VarOpSet, v: encVar("a", 0, "two"), wantConflict: true, conflictAt: 10,
			want: withLock(&structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{Path: "a", CreateIndex: 10, ModifyIndex: 10},
				VariableData: structs.VariableData{Data: []byte("one")}}, "L1"),
		},
		{
			name: "the lock holder writes and keeps the lock",
			setup: func(t *testing.T, s *StateStore) {
				applyVar(t, s, 10, structs.VarOpLockAcquire, withLock(encVar("a", 0, "one"), "L1"))
			},
			op: structs.VarOpSet, v: withLock(encVar("a", 0, "two"), "L1"),
			want: withLock(&structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{Path: "a", CreateIndex: 10, ModifyIndex: 100},
				VariableData: structs.VariableData{Data: []byte("two")}}, "L1"),
		},
		{
			name: "a locked variable refuses a delete without its lock",
			setup: func(t *testing.T, s *StateStore) {
				applyVar(t, s, 10, structs.VarOpLockAcquire, withLock(encVar("a", 0, "one"), "L1"))
			},
			op: structs.VarOpDelete, v: encVar("a", 0, ""), wantConflict: true, conflictAt: 10,
			want: withLock(&structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{Path: "a", CreateIndex: 10, ModifyIndex: 10},
				VariableData: structs.VariableData{Data: []byte("one")}}, "L1"),
		},
		{
			name: "release with the lock ID",
			setup: func(t *testing.T, s *StateStore) {
				applyVar(t, s, 10, structs.VarOpLockAcquire, withLock(encVar("a", 0, "one"), "L1"))
			},
			op: structs.VarOpLockRelease, v: withLock(encVar("a", 0, ""), "L1"),
			want: &structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{Path: "a", CreateIndex: 10, ModifyIndex: 100},
				VariableData: structs.VariableData{Data: []byte("one")}},
		},
		{
			name: "release with another ID conflicts",
			setup: func(t *testing.T, s *StateStore) {
				applyVar(t, s, 10, structs.VarOpLockAcquire, withLock(encVar("a", 0, "one"), "L1"))
			},
			op: structs.VarOpLockRelease, v: withLock(encVar("a", 0, ""), "L2"), wantConflict: true, conflictAt: 10,
			want: withLock(&structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{Path: "a", CreateIndex: 10, ModifyIndex: 10},
				VariableData: structs.VariableData{Data: []byte("one")}}, "L1"),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStateStore(t)
			if tc.setup != nil {
				tc.setup(t, s)
			}
			before := s.Index(tableVariables)
			resp := applyVar(t, s, 100, tc.op, tc.v)
			if tc.wantConflict {
				must.NotNil(t, resp.Conflict)
				must.Eq(t, tc.conflictAt, resp.Conflict.ModifyIndex)
				must.Nil(t, resp.Written)
				must.Eq(t, before, s.Index(tableVariables), must.Sprint("a failed check wrote"))
			} else {
				must.Nil(t, resp.Conflict)
			}
			got, err := s.VariableByPath(nil, "default", "a")
			must.NoError(t, err)
			if tc.want == nil {
				must.Nil(t, got)
				return
			}
			must.NotNil(t, got)
			must.Eq(t, tc.want.Path, got.Path)
			must.Eq(t, tc.want.CreateIndex, got.CreateIndex)
			must.Eq(t, tc.want.ModifyIndex, got.ModifyIndex)
			must.Eq(t, string(tc.want.Data), string(got.Data))
			must.Eq(t, tc.want.LockID(), got.LockID())
		})
	}
}

func TestApplyVariableTxn_Refusals(t *testing.T) {
	cases := []struct {
		name    string
		op      structs.VarOp
		v       *structs.VariableEncrypted
		wantErr string
	}{
		{name: "no variable", op: structs.VarOpSet, wantErr: "without a variable"},
		{name: "set without data", op: structs.VarOpSet, v: encVar("a", 0, ""), wantErr: "missing required Items"},
		{name: "acquire without a lock", op: structs.VarOpLockAcquire, v: encVar("a", 0, "x"), wantErr: "without a lock ID"},
		{name: "acquire a new variable without data", op: structs.VarOpLockAcquire, v: withLock(encVar("a", 0, ""), "L"), wantErr: "missing required Items"},
		{name: "unknown op", op: "explode", v: encVar("a", 0, "x"), wantErr: "unknown variable operation"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStateStore(t)
			txn := s.WriteTxn(structs.VarApplyStateRequestType, 5, &TxnMeta{})
			defer txn.Abort()
			_, err := s.ApplyVariableTxn(txn, tc.op, tc.v)
			must.ErrorContains(t, err, tc.wantErr)
			must.Eq(t, 400, structs.ErrorCode(err))
		})
	}
}

func TestVariables_ListByNamespaceAndPrefix(t *testing.T) {
	s := testStateStore(t)
	for i, p := range []struct{ ns, path string }{{"default", "app/a"}, {"default", "app/b"}, {"default", "db/a"}, {"other", "app/c"}} {
		v := encVar(p.path, 0, "x")
		v.Namespace = p.ns
		applyVar(t, s, uint64(10+i), structs.VarOpSet, v)
	}
	paths := func(ns, prefix string) []string {
		vars, err := s.Variables(nil, ns, prefix)
		must.NoError(t, err)
		var out []string
		for _, v := range vars {
			out = append(out, v.Namespace+":"+v.Path)
		}
		return out
	}
	must.Eq(t, []string{"default:app/a", "default:app/b", "default:db/a"}, paths("default", ""))
	must.Eq(t, []string{"default:app/a", "default:app/b"}, paths("default", "app"))
	must.Eq(t, []string{"default:app/a", "default:app/b", "other:app/c"}, paths("*", "app"))
	must.Eq(t, []string(nil), paths("nope", ""))
}

// The Variables topic carries metadata: neither the ciphertext nor the key ID of a variable
// ever appears in an event, and a delete is typed VariableDeleted.
func TestVariableEvents_MetadataOnly(t *testing.T) {
	s := testStateStore(t)
	got := captureEvents(s)
	applyVar(t, s, 10, structs.VarOpSet, encVar("app/db", 0, "CIPHERTEXT"))
	applyVar(t, s, 11, structs.VarOpLockAcquire, withLock(encVar("app/db", 0, ""), "L1"))
	applyVar(t, s, 12, structs.VarOpCAS, encVar("app/db", 3, "OTHER")) // conflict: no event
	applyVar(t, s, 13, structs.VarOpDelete, withLock(encVar("app/db", 0, ""), "L1"))

	want := []struct {
		typ     string
		index   uint64
		modify  uint64
		locked  bool
		deleted bool
	}{
		{structs.TypeVariableUpserted, 10, 10, false, false},
		{structs.TypeVariableUpserted, 11, 11, true, false},
		{structs.TypeVariableDeleted, 13, 11, true, true},
	}
	must.SliceLen(t, len(want), *got)
	for i, batch := range *got {
		must.SliceLen(t, 1, batch.Events)
		e := batch.Events[0]
		must.Eq(t, structs.TopicVariables, e.Topic)
		must.Eq(t, want[i].typ, e.Type)
		must.Eq(t, want[i].index, e.Index)
		must.Eq(t, "app/db", e.Key)
		must.Eq(t, "default", e.Namespace)
		p, ok := e.Payload.(*structs.VariableEvent)
		must.True(t, ok)
		must.Eq(t, want[i].modify, p.Variable.ModifyIndex)
		must.Eq(t, want[i].locked, p.Variable.Lock != nil)
		raw, err := json.Marshal(e)
		must.NoError(t, err)
		must.StrNotContains(t, string(raw), "CIPHERTEXT")
		must.StrNotContains(t, string(raw), "key-1")
		must.StrNotContains(t, string(raw), `"Data"`)
	}
}
