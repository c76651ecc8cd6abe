// Package scheduler decides which allocations a job needs and where they run.
//
// It is pure: Compute takes a job, its allocations and the nodes and returns a Plan. It reads
// no clock, makes no IDs and writes nothing, so the leader can run it against any snapshot and
// fix IDs and times itself before the plan goes through Raft. It imports structs only (and the
// official client's wire types that structs builds on).
//
// What it does: places missing allocations of each group up to its count on ready nodes of
// the job's datacenters and node pool that have every driver its tasks use, spreading a
// group over nodes and then preferring the least loaded; stops allocations past the count and
// every allocation of a stopped or purged job; replaces allocations whose tasks changed
// (destructive update: stop the old, place the new under the same name) and moves the others
// to the new version in place; places one allocation per eligible node for system jobs.
// Allocations that cannot be placed are reported as queued, with the reasons nodes were
// filtered. It does not account for CPU or memory, and does not honour constraints,
// affinities, spreads, update strategies or reschedule policies yet.
package scheduler
