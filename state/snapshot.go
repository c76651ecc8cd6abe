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
type snapshotHeader struct {
	Table string
}

// Persist writes every row of every table of the snapshot to w.
func (s *StateSnapshot) Persist(w io.Writer) error {
	enc := codec.NewEncoder(w, structs.MsgpackHandle)
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

// Restore reads a stream written by Persist into a new store.
func Restore(config Config, r io.Reader) (*StateStore, error) {
	s, err := NewStateStore(config)
	if err != nil {
		return nil, err
	}
	txn := s.db.Txn(true)
	defer txn.Abort()
	dec := codec.NewDecoder(r, structs.MsgpackHandle)
	for {
		var hdr snapshotHeader
		if err := dec.Decode(&hdr); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("state: restore header: %w", err)
		}
		def, ok := tables[hdr.Table]
		if !ok {
			return nil, fmt.Errorf("state: restore: unknown table %q", hdr.Table)
		}
		row := reflect.New(def.rowType.Elem()).Interface()
		if err := dec.Decode(row); err != nil {
			return nil, fmt.Errorf("state: restore row of %s: %w", hdr.Table, err)
		}
		if err := txn.Insert(hdr.Table, row); err != nil {
			return nil, fmt.Errorf("state: restore insert into %s: %w", hdr.Table, err)
		}
	}
	txn.Commit()
	return s, nil
}
