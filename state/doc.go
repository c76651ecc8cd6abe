// Package state is the cluster's state store: an in-memory MVCC database (go-memdb) of jobs,
// evaluations, allocations, nodes, deployments, ACL objects, variables and the rest, with the
// snapshots Raft persists and the events a committed write publishes.
//
// Where each concern lives:
//   - Tables: each family declares its tables in *_schema.go; schema.go gathers them, so
//     snapshot and restore (snapshot.go) walk every table without a list that could miss one.
//   - Writes: the FSM calls one method per Raft entry. Whole-entry methods open, fill and
//     commit their own transaction (jobs_apply.go, nodes_apply.go, deployments.go and the
//     Apply* methods of the other families); the *Txn methods are the pieces they, and the
//     single-write entries, run inside one transaction.
//   - Reads: beside each family's writes (jobs.go, allocs.go, nodes.go, ...);
//     point_in_time.go gives one decision a view of a single index, and state_store.go the
//     blocking query that waits for an index.
//   - Events: events.go and jobs_events.go derive the published events from a transaction's
//     changes and its request metadata (TxnMeta), at commit.
//   - Derived rows: job summaries and job statuses are recomputed in the transaction that
//     changes what they derive from (allocs.go, job_summary_reconcile.go); a summary adds the
//     job's tally of allocations the GC collected (allocs_gc.go) to what the allocations
//     still in the state count.
//
// It may import structs only from this module: never the server, the scheduler or command/.
//
// What must stay true:
//   - One Raft entry is one transaction: a compound write (a node change and its
//     evaluations, a plan and its evaluation) commits whole or not at all.
//   - Writes are deterministic: every ID and time comes from the request, none from a clock.
//   - Stored rows are never modified in place; a write inserts a copy.
package state
