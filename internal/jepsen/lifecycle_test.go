package jepsen

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

func life(client int, key string, kind LifeKind, out Outcome, call, ret int64) LifeOp {
	return LifeOp{Client: client, Key: key, Kind: kind, Outcome: out, Call: call, Return: ret}
}

func seen(client int, key string, kind LifeKind, found bool, call, ret int64) LifeOp {
	return LifeOp{Client: client, Key: key, Kind: kind, Found: found, Outcome: OK, Call: call, Return: ret}
}

func TestLifecycle_Histories(t *testing.T) {
	cases := []struct {
		name    string
		history []LifeOp
		ok      bool
	}{
		{"created, read, removed, gone with its record", []LifeOp{
			life(0, "a", Create, OK, 0, 1), seen(1, "a", ReadObject, true, 2, 3),
			life(0, "a", Remove, OK, 4, 5), seen(1, "a", ReadObject, false, 6, 7), seen(2, "a", ReadRecord, true, 6, 8),
		}, true},
		{"an acknowledged create not found", []LifeOp{
			life(0, "a", Create, OK, 0, 1), seen(1, "a", ReadObject, false, 2, 3),
		}, false},
		{"a removed object that comes back", []LifeOp{
			life(0, "a", Create, OK, 0, 1), life(0, "a", Remove, OK, 2, 3),
			seen(1, "a", ReadObject, false, 4, 5), seen(1, "a", ReadObject, true, 6, 7),
		}, false},
		{"read after an acknowledged remove", []LifeOp{
			life(0, "a", Create, OK, 0, 1), life(0, "a", Remove, OK, 2, 3), seen(1, "a", ReadObject, true, 4, 5),
		}, false},
		{"a record missing after an acknowledged remove", []LifeOp{
			life(0, "a", Create, OK, 0, 1), life(0, "a", Remove, OK, 2, 3), seen(1, "a", ReadRecord, false, 4, 5),
		}, false},
		{"a record that goes away", []LifeOp{
			life(0, "a", Create, OK, 0, 1), life(0, "a", Remove, OK, 2, 3),
			seen(1, "a", ReadRecord, true, 4, 5), seen(1, "a", ReadRecord, false, 6, 7),
		}, false},
		{"a record before the object was removed", []LifeOp{
			life(0, "a", Create, OK, 0, 1), seen(1, "a", ReadRecord, true, 2, 3), life(0, "a", Remove, OK, 4, 5),
		}, false},
		{"a remove concurrent with reads: either side", []LifeOp{
			life(0, "a", Create, OK, 0, 1), life(0, "a", Remove, OK, 2, 20),
			seen(1, "a", ReadObject, true, 3, 4), seen(2, "a", ReadRecord, true, 5, 6), seen(1, "a", ReadObject, false, 7, 8),
		}, true},
		{"an unknown create seen late", []LifeOp{
			life(0, "a", Create, Unknown, 0, 1), seen(1, "a", ReadObject, false, 2, 3), seen(1, "a", ReadObject, true, 4, 5),
		}, true},
		{"an unknown create never seen", []LifeOp{
			life(0, "a", Create, Unknown, 0, 1), seen(1, "a", ReadObject, false, 2, 3),
		}, true},
		{"an object found before its create was called", []LifeOp{
			seen(1, "a", ReadObject, true, 0, 1), life(0, "a", Create, Unknown, 2, 3),
		}, false},
		{"a refused create that shows up", []LifeOp{
			life(0, "a", Create, Fail, 0, 1), seen(1, "a", ReadObject, true, 2, 3),
		}, false},
		{"a create refused for a full disk that shows up", []LifeOp{
			life(0, "a", Create, Refused, 0, 1), seen(1, "a", ReadObject, true, 2, 3),
		}, false},
		{"an unknown remove: still there, then gone for good", []LifeOp{
			life(0, "a", Create, OK, 0, 1), life(0, "a", Remove, Unknown, 2, 3),
			seen(1, "a", ReadObject, true, 4, 5), seen(1, "a", ReadObject, false, 6, 7), seen(1, "a", ReadRecord, true, 8, 9),
		}, true},
		{"an unknown remove: gone, then back", []LifeOp{
			life(0, "a", Create, OK, 0, 1), life(0, "a", Remove, Unknown, 2, 3),
			seen(1, "a", ReadObject, false, 4, 5), seen(1, "a", ReadObject, true, 6, 7),
		}, false},
		{"a read that did not answer tells nothing", []LifeOp{
			life(0, "a", Create, OK, 0, 1), {Client: 1, Key: "a", Kind: ReadObject, Outcome: Unknown, Call: 2, Return: 3},
		}, true},
		{"objects are independent", []LifeOp{
			life(0, "a", Create, OK, 0, 1), life(1, "b", Create, OK, 0, 1), life(0, "a", Remove, OK, 2, 3),
			seen(2, "b", ReadObject, true, 4, 5), seen(2, "a", ReadObject, false, 4, 5),
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, model := range []struct {
				name  string
				check func([]LifeOp) error
			}{
				{"purge", func(h []LifeOp) error { _, err := CheckLife(PurgeModel, h, 5*time.Second); return err }},
				{"token", func(h []LifeOp) error { _, err := CheckLife(TokenModel, h, 5*time.Second); return err }},
			} {
				err := model.check(tc.history)
				if tc.ok {
					must.NoError(t, err, must.Sprint(model.name))
				} else {
					must.ErrorIs(t, err, ErrNotLinearizable, must.Sprint(model.name))
				}
			}
		})
	}
}

func TestLifecycle_FailingObjectsAndSave(t *testing.T) {
	history := []LifeOp{
		life(0, "good", Create, OK, 0, 1), seen(1, "good", ReadObject, true, 2, 3),
		life(0, "bad", Create, OK, 0, 1), life(0, "bad", Remove, OK, 2, 3), seen(1, "bad", ReadObject, true, 4, 5),
	}
	must.Eq(t, []string{"bad"}, FailingObjects(PurgeModel, history, 5*time.Second))
	info, err := CheckLife(PurgeModel, history, 5*time.Second)
	must.ErrorIs(t, err, ErrNotLinearizable)
	dir := t.TempDir()
	html, err := Save(dir, "purge", PurgeModel, history, info, nil)
	must.NoError(t, err)
	must.FileExists(t, html)
	buf, err := os.ReadFile(filepath.Join(dir, "purge.json"))
	must.NoError(t, err)
	must.StrContains(t, string(buf), `"kind": "remove"`)
}
