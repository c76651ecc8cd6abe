package state

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

const (
	tableJobs        = "jobs"
	tableJobVersion  = "job_version"
	tableJobSummary  = "job_summary"
	tableEvals       = "evals"
	tableNamespaces  = "namespaces"
	indexID          = "id"
	indexJob         = "job"
	indexJobGCStatus = "gc"
)

func namespacedIDIndex(idField string) *memdb.CompoundIndex {
	return &memdb.CompoundIndex{Indexes: []memdb.Indexer{
		&memdb.StringFieldIndex{Field: "Namespace"},
		&memdb.StringFieldIndex{Field: idField},
	}}
}

func init() {
	registerTable(&memdb.TableSchema{
		Name: tableJobs,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: {Name: indexID, Unique: true, Indexer: namespacedIDIndex("ID")},
		},
	}, &structs.Job{})
	registerTable(&memdb.TableSchema{
		Name: tableJobVersion,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: {Name: indexID, Unique: true, Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
				&memdb.StringFieldIndex{Field: "Namespace"},
				&memdb.StringFieldIndex{Field: "ID"},
				&memdb.UintFieldIndex{Field: "Version"},
			}}},
		},
	}, &structs.Job{})
	registerTable(&memdb.TableSchema{
		Name: tableJobSummary,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: {Name: indexID, Unique: true, Indexer: namespacedIDIndex("JobID")},
		},
	}, &structs.JobSummary{})
}
