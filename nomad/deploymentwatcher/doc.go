// Package deploymentwatcher owns the leader's deployment watcher: one goroutine, started by
// leadership and stopped with it, that moves running deployments on from what the state
// says — the health of their allocations and their progress deadlines.
//
// It may import structs and state. It writes only through the Backend's Apply (Raft), and it
// fixes every ID and time it writes, so the FSM stays deterministic.
//
// What must stay true:
//   - One decision per deployment per state change, derived from one read of the state: the
//     watcher keeps no counts of its own that could drift from the table.
//   - Writes are idempotent on the state: if leadership moves between a decision and its
//     apply, the new leader's watcher reads the state again and decides the same.
package deploymentwatcher
