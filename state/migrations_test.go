package state

import (
	"bytes"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// encodeStream writes msgpack values one after the other, as a snapshot stream holds them.
func encodeStream(t *testing.T, values ...any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := codec.NewEncoder(&buf, structs.MsgpackHandle)
	for _, v := range values {
		must.NoError(t, enc.Encode(v))
	}
	return buf.Bytes()
}

func TestRestore_SchemaVersions(t *testing.T) {
	s := snapshotFixture(t)
	var buf bytes.Buffer
	must.NoError(t, s.Snapshot().Persist(&buf))
	stream := buf.Bytes()
	record := encodeStream(t, &snapshotHeader{Table: schemaRecord, Schema: structs.SchemaVersion})
	must.True(t, bytes.HasPrefix(stream, record), must.Sprint("a snapshot opens with the schema record"))

	t.Run("a snapshot of an older release, without the record, restores", func(t *testing.T) {
		restored, err := Restore(s.Config(), bytes.NewReader(stream[len(record):]))
		must.NoError(t, err)
		must.Eq(t, s.LatestIndex(), restored.LatestIndex())
		jobs, err := restored.Jobs(nil, structs.DefaultNamespace, "")
		must.NoError(t, err)
		must.SliceNotEmpty(t, jobs)
	})
	t.Run("a newer schema version is refused", func(t *testing.T) {
		newer := append(encodeStream(t, &snapshotHeader{Table: schemaRecord, Schema: structs.SchemaVersion + 1}), stream[len(record):]...)
		_, err := Restore(s.Config(), bytes.NewReader(newer))
		must.ErrorContains(t, err, "newer than this binary's")
		must.ErrorContains(t, err, "written by a newer release")
	})
	t.Run("a record past the first is refused", func(t *testing.T) {
		twice := append(append([]byte{}, stream...), record...)
		_, err := Restore(s.Config(), bytes.NewReader(twice))
		must.ErrorContains(t, err, "schema record after the first record")
	})
	t.Run("a record without a version is refused", func(t *testing.T) {
		_, err := Restore(s.Config(), bytes.NewReader(encodeStream(t, &snapshotHeader{Table: schemaRecord})))
		must.ErrorContains(t, err, "schema record without a version")
	})
}

// TestRestore_MigratesOlderRows runs a migration the way a schema bump would add one: a
// snapshot of version 1 whose namespace rows name a field differently restores, through
// version 2's migration, into today's type.
func TestRestore_MigratesOlderRows(t *testing.T) {
	path := []migration{
		legacySchemaVersion: migrations[legacySchemaVersion],
		1: {Why: "namespace Desc became Description", Row: func(table string, row map[string]any) error {
			if table == tableNamespaces {
				row["Description"] = row["Desc"]
				delete(row, "Desc")
			}
			return nil
		}},
	}
	stream := encodeStream(t,
		&snapshotHeader{Table: schemaRecord, Schema: 1},
		&snapshotHeader{Table: tableNamespaces}, map[string]any{"Name": "prod", "Desc": "production", "CreateIndex": 3, "ModifyIndex": 3},
	)
	restored, err := restore(Config{}, bytes.NewReader(stream), 2, path)
	must.NoError(t, err)
	ns, err := restored.NamespaceByName(nil, "prod")
	must.NoError(t, err)
	must.NotNil(t, ns)
	must.Eq(t, "production", ns.Description)

	// Without the migration the field is lost, which is what the migration is for.
	restored, err = restore(Config{}, bytes.NewReader(stream), 1, path)
	must.NoError(t, err)
	ns, err = restored.NamespaceByName(nil, "prod")
	must.NoError(t, err)
	must.Eq(t, "", ns.Description)

	t.Run("a version with no path is refused", func(t *testing.T) {
		_, err := restore(Config{}, bytes.NewReader(stream), 3, path)
		must.ErrorContains(t, err, "no migration from schema version 1 to 3")
	})
}

func TestMigrateEntry(t *testing.T) {
	payload := encodeStream(t, &structs.VarApplyStateRequest{Op: "set"})
	// Nothing to rewrite at this version: the entry is passed on unchanged.
	got, err := MigrateEntry(1, structs.VarApplyStateRequestType, payload)
	must.NoError(t, err)
	must.Eq(t, payload, got)

	path := []migration{
		{Why: "snapshot schema record"},
		{Why: "rows only", Row: func(string, map[string]any) error { return nil }},
		{Why: "Op renamed", Entry: func(mt structs.MessageType, req map[string]any) error {
			if mt == structs.VarApplyStateRequestType {
				req["Op"] = "cas"
			}
			return nil
		}},
	}
	got, err = migrateEntry(1, 3, path, structs.VarApplyStateRequestType, payload)
	must.NoError(t, err)
	var req structs.VarApplyStateRequest
	must.NoError(t, structs.Decode(got, &req))
	must.Eq(t, "cas", string(req.Op))
	// From the last step's version on, the step is not run again.
	got, err = migrateEntry(3, 3, path, structs.VarApplyStateRequestType, payload)
	must.NoError(t, err)
	must.Eq(t, payload, got)

	_, err = migrateEntry(4, 3, path, structs.VarApplyStateRequestType, payload)
	must.ErrorContains(t, err, "newer than this binary's 3")
	_, err = migrateEntry(1, 4, path, structs.VarApplyStateRequestType, payload)
	must.ErrorContains(t, err, "no migration from schema version 1 to 4")
}
