// Package leader owns the life of a leadership term: Monitor follows Raft's leadership
// changes and runs one term at a time (the next starts only after the last has wound down);
// Barrier holds a new term until the log committed before it is applied; Readiness tells
// requests whether this leader has caught up; RunTerm runs the term's duties (goroutines that
// live as long as the term) and chores (work on a fixed interval) and returns only when all
// have stopped.
//
// What the server does as leader is declared by the server (nomad/leader_duties.go) as a table of
// duties and chores; this package knows none of them and imports only Raft and the logger.
package leader
