package state

import (
	"fmt"
	"io"
	"reflect"
	"sort"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/nomadfork/nomad/structs"
)

// snapshotHeader opens every record of a snapshot stream: the table the row that follows
// belongs to. Walking the registered tables means a new table is in snapshots without edits here.
//
// The stream's first record is a header of table schemaRecord, with no row after it, whose
// Schema is the structs.SchemaVersion the rows were written at. Its Schema is omitted from
// every other header, which keeps them byte for byte what older releases wrote; an older
// release reading a newer snapshot stops at the record with `unknown table "_schema"`.
type snapshotHeader struct {
	Table  string
	Schema int `codec:",omitempty"`
}

// schemaRecord is the table name of the schema record; no memdb table may take it.
const schemaRecord = structs.SnapshotSchemaTable

// Persist writes the schema record and then every row of every table of the snapshot to w.
func (s *StateSnapshot) Persist(w io.Writer) error {
	enc := codec.NewEncoder(w, structs.MsgpackHandle)
	if err := enc.Encode(&snapshotHeader{Table: schemaRecord, Schema: structs.SchemaVersion}); err != nil {
		return err
	}
	names := TableNames()
	sort.Strings(names)
	for _, table := range names {
		iter, err := s.txn.Get(table, indexID)
		if err != nil {
			return fmt.Errorf("state: snapshot of %s: %w", table, err)
		}
		for raw := iter.Next(); raw != nil; raw = iter.Next() {
			if err := enc.Encode(&snapshotHeader{Table: table}); err != nil {
				return err
			}
			if err := enc.Encode(raw); err != nil {
				return fmt.Errorf("state: snapshot row of %s: %w", table, err)
			}
		}
	}
	return nil
}

// Restore reads a stream written by Persist, by this release or an older one, into a new
// store. A snapshot of a newer schema version is refused: its rows may not mean what this
// binary's types say.
func Restore(config Config, r io.Reader) (*StateStore, error) {
	return restore(config, r, structs.SchemaVersion, migrations)
}

func restore(config Config, r io.Reader, current int, path []migration) (*StateStore, error) {
	s, err := NewStateStore(config)
	if err != nil {
		return nil, err
	}
	txn := s.db.Txn(true)
	defer txn.Abort()
	dec := codec.NewDecoder(r, structs.MsgpackHandle)
	var rows *rowMigrator
	for first := true; ; first = false {
		var hdr snapshotHeader
		if err := dec.Decode(&hdr); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("state: restore header: %w", err)
		}
		if hdr.Table == schemaRecord {
			if !first {
				return nil, fmt.Errorf("state: restore: a schema record after the first record")
			}
			if hdr.Schema < 1 {
				return nil, fmt.Errorf("state: restore: schema record without a version")
			}
			if rows, err = newRowMigrator(hdr.Schema, current, path); err != nil {
				return nil, err
			}
			continue
		}
		if rows == nil {
			if rows, err = newRowMigrator(legacySchemaVersion, current, path); err != nil {
				return nil, err
			}
		}
		def, ok := tables[hdr.Table]
		if !ok {
			return nil, fmt.Errorf("state: restore: unknown table %q", hdr.Table)
		}
		row := reflect.New(def.rowType.Elem()).Interface()
		if err := rows.decode(dec, hdr.Table, row); err != nil {
			return nil, fmt.Errorf("state: restore row of %s: %w", hdr.Table, err)
		}
		if err := txn.Insert(hdr.Table, row); err != nil {
			return nil, fmt.Errorf("state: restore insert into %s: %w", hdr.Table, err)
		}
	}
	txn.Commit()
	return s, nil
}
