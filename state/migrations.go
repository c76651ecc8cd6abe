package state

import (
	"bytes"
	"fmt"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/nomadfork/nomad/structs"
)

// legacySchemaVersion is the version of a snapshot that opens without a schema record: every
// snapshot written before the version was recorded (releases up to 0.1.0).
const legacySchemaVersion = 0

// migration turns the rows of a snapshot written at one schema version into the next. Row
// nil is the identity: the rows decode into this version's types unchanged, without the
// generic round trip a real migration needs.
type migration struct {
	// Why says what changed between the two versions, for the log and for the reader.
	Why string
	// Row rewrites, in place, the generic form (msgpack decoded into map[string]any) of one
	// row of table.
	Row func(table string, row map[string]any) error
	// Entry rewrites, in place, the generic form of the request of one log entry of message
	// type t. Nil is the identity, as for Row.
	Entry func(t structs.MessageType, req map[string]any) error
}

// migrations[v] migrates from schema version v to v+1; there is one for every version below
// structs.SchemaVersion (TestPersistedSchema checks it). Appending a migration is the other
// half of bumping the version.
//
// Log entries carry the version they were written at (structs.EntrySchemaVersion; those
// written before the stamp are version 1) and the FSM passes an older one through the
// Entry steps of the path (MigrateEntry).
var migrations = []migration{
	legacySchemaVersion: {Why: "the schema record was added; the rows are those of version 1"},
}

// rowMigrator decodes the rows of a snapshot written at schema version from.
type rowMigrator struct {
	steps []migration
}

// newRowMigrator refuses a version this binary cannot read: newer than its own, or one
// without a migration path.
func newRowMigrator(from, current int, all []migration) (*rowMigrator, error) {
	if from > current {
		return nil, fmt.Errorf("state: restore: the snapshot has schema version %d, newer than this binary's %d: "+
			"it was written by a newer release; restore it with that release or a newer one", from, current)
	}
	if from < 0 || len(all) < current {
		return nil, fmt.Errorf("state: restore: no migration from schema version %d to %d", from, current)
	}
	m := &rowMigrator{}
	for _, step := range all[from:current] {
		if step.Row != nil {
			m.steps = append(m.steps, step)
		}
	}
	return m, nil
}

// decode reads the next row of table from dec into row, migrating it first when a step of
// the path rewrites rows.
func (m *rowMigrator) decode(dec *codec.Decoder, table string, row any) error {
	if len(m.steps) == 0 {
		return dec.Decode(row)
	}
	var generic map[string]any
	if err := dec.Decode(&generic); err != nil {
		return err
	}
	for _, step := range m.steps {
		if err := step.Row(table, generic); err != nil {
			return fmt.Errorf("migration (%s): %w", step.Why, err)
		}
	}
	var buf bytes.Buffer
	if err := codec.NewEncoder(&buf, structs.MsgpackHandle).Encode(generic); err != nil {
		return err
	}
	return structs.Decode(buf.Bytes(), row)
}

// MigrateEntry rewrites the msgpack request of a log entry of message type t, written at
// schema version from, into this binary's version.
func MigrateEntry(from int, t structs.MessageType, payload []byte) ([]byte, error) {
	return migrateEntry(from, structs.SchemaVersion, migrations, t, payload)
}

func migrateEntry(from, current int, all []migration, t structs.MessageType, payload []byte) ([]byte, error) {
	if from > current {
		return nil, fmt.Errorf("the entry has schema version %d, newer than this binary's %d", from, current)
	}
	if from < 1 || len(all) < current {
		return nil, fmt.Errorf("no migration from schema version %d to %d", from, current)
	}
	var steps []migration
	for _, step := range all[from:current] {
		if step.Entry != nil {
			steps = append(steps, step)
		}
	}
	if len(steps) == 0 {
		return payload, nil
	}
	var generic map[string]any
	if err := structs.Decode(payload, &generic); err != nil {
		return nil, err
	}
	for _, step := range steps {
		if err := step.Entry(t, generic); err != nil {
			return nil, fmt.Errorf("migration (%s): %w", step.Why, err)
		}
	}
	var buf bytes.Buffer
	if err := codec.NewEncoder(&buf, structs.MsgpackHandle).Encode(generic); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
