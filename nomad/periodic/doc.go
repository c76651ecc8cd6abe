// Package periodic owns the launching of periodic jobs on the leader: it tracks every periodic,
// enabled, not stopped job, computes each one's next launch from its cron specs and time zone,
// and at that time launches the child "<parent>/periodic-<unix>" through the Launch function
// it is given (the leader's Raft apply of the child, its evaluation and the launch record, in
// one entry).
//
// It may import structs and state from this module, never the server.
//
// What must stay true:
//   - One goroutine, started by the leader for one term and stopped (and waited for) when the
//     term ends. Everything it knows comes from the state: the next leader computes the same
//     launches from the same rows.
//   - A launch is recorded in the same Raft entry as its child, and the state refuses a
//     launch not later than the recorded one, so no launch happens twice whichever leader
//     decides it; a launch that fell due while no leader ran is made as soon as one does
//     (only the latest of several missed launches, as upstream).
//   - The tracked set is recomputed from one point-in-time view whenever jobs or launches
//     change: a job registered, updated, stopped or purged is picked up without a hook.
//   - It reads the clock (an injected Clock, so tests need no real waits); launch times are
//     fixed before they reach the log.
package periodic
