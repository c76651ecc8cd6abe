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

// registerTable is called from each table family's *_schema.go init.
func registerTable(schema *memdb.TableSchema, row any) {
	if schema.Name == schemaRecord {
		panic(fmt.Sprintf("state: table name %q is the snapshot schema record's", schemaRecord))
	}
	if _, dup := tables[schema.Name]; dup {
		panic(fmt.Sprintf("state: table %q registered twice", schema.Name))
	}
	tables[schema.Name] = tableDef{schema: schema, rowType: reflect.TypeOf(row)}
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
	registerTable(&memdb.TableSchema{
		Name: tableIndex,
		Indexes: map[string]*memdb.IndexSchema{
			"id": {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Key"}},
		},
	}, &IndexEntry{})
}
