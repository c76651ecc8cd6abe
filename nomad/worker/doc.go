// Package worker is the leader's scheduling workers: each takes an evaluation from the
// evaluation broker, runs the scheduler on one point-in-time snapshot of the state and
// submits the plan, with the evaluation's new status and its follow-ups, to the plan applier
// as one Raft entry. Pool is their runtime configuration (how many run, which scheduler
// types they take), which the agent API changes while they run.
//
// It reaches the server through Backend (the broker, the state, the scheduler's input and
// run, Raft, the clock), so it imports structs, state, scheduler and nomad/planapply, never
// the server package. What must stay true: every ID and time a plan carries is fixed here,
// before the entry reaches Raft, so the FSM stays deterministic.
package worker
