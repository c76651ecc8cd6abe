// Package scheduler decides which allocations a job needs and where they run.
//
// It is pure: Compute takes a job, its allocations and the nodes and returns a Plan. It reads
// no clock, makes no IDs and writes nothing, so the leader can run it against any snapshot and
// fix IDs and times itself before the plan goes through Raft. It imports structs only (and the
// official client's wire types that structs builds on).
//
// What it does: places missing allocations of each group up to its count; stops allocations
// past the count and every allocation of a stopped or purged job; replaces allocations whose
// tasks changed (destructive update: stop the old, place the new under the same name) and
// moves the others to the new version in place; places one allocation per eligible node for
// system jobs. Allocations that cannot be placed are reported as queued, with upstream's
// metrics of why (Plan.Failed).
//
// Files by concern: feasible.go filters nodes (ready, eligible, datacenter, node pool,
// drivers, constraints at job, group and task level, distinct_hosts, distinct_property);
// constraints.go evaluates constraint and affinity operands against a node; resources.go
// counts CPU, cores, memory, disk and ports, the node's existing allocations included, and
// gives out ports; rank.go scores the nodes that fit (bin packing or spread, job
// anti-affinity, affinities, spread blocks) and places on the best; deployment.go rolls a
// service job's new version out under its group's update block (max_parallel batches,
// canaries, the deployment the plan creates or cancels). It reads no clock for that either:
// the caller gives the new deployment's ID and time (Input.DeploymentID, Input.Now).
// reschedule.go replaces failed allocations by their group's reschedule block. preempt.go
// evicts allocations of jobs at least 10 priorities lower when an allocation fits nowhere
// and the scheduler configuration allows it for the job's type (Plan.NodePreemptions).
// disconnect.go follows a group's disconnect block: an allocation of a disconnected node
// stays unknown until lost_after (replaced meanwhile when replace is set) and is then lost
// (Plan.Lost); when it comes back, the reconcile strategy stops it or its replacement. A
// system job's update block replaces max_parallel allocations per plan, the next batch after
// the stagger. Every later decision the plan needs (a lost_after passing, a staggered batch)
// is a delayed follow-up the caller makes (Plan.Followups).
package scheduler
