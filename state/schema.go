package state

import (
	"fmt"
	"reflect"

	memdb "github.com/hashicorp/go-memdb"
)

// tableDef is one memdb table and the Go type of its rows, so snapshot and restore can walk
// every table without a per-table list that could miss one.
type tableDef struct {
	schema  *memdb.TableSchema
	rowType reflect.Type
}

var tables = map[string]tableDef{}

// registerTable is called from each table family's *_schema.go init with the table's name,
// the type of its rows and its indexes, built with the helpers below so every table states
// only what is particular to it.
func registerTable(name string, row any, indexes ...*memdb.IndexSchema) {
	if name == schemaRecord {
		panic(fmt.Sprintf("state: table name %q is the snapshot schema record's", schemaRecord))
	}
	if _, dup := tables[name]; dup {
		panic(fmt.Sprintf("state: table %q registered twice", name))
	}
	schema := &memdb.TableSchema{Name: name, Indexes: make(map[string]*memdb.IndexSchema, len(indexes))}
	for _, ix := range indexes {
		if _, dup := schema.Indexes[ix.Name]; dup {
			panic(fmt.Sprintf("state: index %q of table %q declared twice", ix.Name, name))
		}
		schema.Indexes[ix.Name] = ix
	}
	tables[name] = tableDef{schema: schema, rowType: reflect.TypeOf(row)}
}

// idIndex is a table's primary key; memdb requires every table to have one named "id".
func idIndex(indexer memdb.Indexer) *memdb.IndexSchema { return uniqueIndex(indexID, indexer) }

// uniqueIndex is a secondary key no two rows share.
func uniqueIndex(name string, indexer memdb.Indexer) *memdb.IndexSchema {
	return &memdb.IndexSchema{Name: name, Unique: true, Indexer: indexer}
}

// lookupIndex is a secondary index many rows may share; every row must have a value.
func lookupIndex(name string, indexer memdb.Indexer) *memdb.IndexSchema {
	return &memdb.IndexSchema{Name: name, Indexer: indexer}
}

// optionalIndex is a secondary index that rows without a value are left out of.
func optionalIndex(name string, indexer memdb.Indexer) *memdb.IndexSchema {
	return &memdb.IndexSchema{Name: name, AllowMissing: true, Indexer: indexer}
}

// field indexes a string field, case-sensitively.
func field(name string) *memdb.StringFieldIndex { return &memdb.StringFieldIndex{Field: name} }

// namespaced keys rows by their namespace first, so a lookup or prefix scan within one
// namespace never crosses into another.
func namespaced(parts ...memdb.Indexer) *memdb.CompoundIndex {
	return &memdb.CompoundIndex{Indexes: append([]memdb.Indexer{field("Namespace")}, parts...)}
}

// versioned keys the versions of one job (or its submissions) by the version number.
func versioned(idField string) *memdb.CompoundIndex {
	return namespaced(field(idField), &memdb.UintFieldIndex{Field: "Version"})
}

// dbSchema builds the memdb schema from every registered table.
func dbSchema() *memdb.DBSchema {
	db := &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{}}
	for name, def := range tables {
		db.Tables[name] = def.schema
	}
	return db
}

// TableNames lists every table, for tests that check each one is covered elsewhere
// (events, snapshots).
func TableNames() []string {
	names := make([]string, 0, len(tables))
	for name := range tables {
		names = append(names, name)
	}
	return names
}

const tableIndex = "index"

// IndexEntry records the Raft index at which a table last changed; blocking queries and
// X-Nomad-Index are answered from it.
type IndexEntry struct {
	Key   string
	Value uint64
}

func init() {
	registerTable(tableIndex, &IndexEntry{}, idIndex(field("Key")))
}
