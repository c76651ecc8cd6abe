package state

import "github.com/nomadfork/nomad/structs"

const (
	tableJobs       = "jobs"
	tableJobVersion = "job_version"
	tableJobSummary = "job_summary"
	// tableJobCollectedAllocs holds each job's tally of allocations the allocation GC removed.
	tableJobCollectedAllocs = "job_collected_allocs"
	tableEvals              = "evals"
	tableNamespaces         = "namespaces"
	indexID                 = "id"
	indexJob                = "job"
	indexJobGCStatus        = "gc"
)

func init() {
	registerTable(tableJobs, &structs.Job{}, idIndex(namespaced(field("ID"))))
	registerTable(tableJobVersion, &structs.Job{}, idIndex(versioned("ID")))
	registerTable(tableJobSummary, &structs.JobSummary{}, idIndex(namespaced(field("JobID"))))
	registerTable(tableJobCollectedAllocs, &structs.JobCollectedAllocs{}, idIndex(namespaced(field("JobID"))))
}
