// Package drainer owns node draining on the leader: it moves allocations off nodes with a
// drain strategy, respecting each task group's migrate block, stops what is left at the
// drain's deadline, and ends the drain when nothing is left.
//
// It may import structs and state from this module, never the server: it reads a point-in-
// time view of the state store and writes only through the Apply function it is given (the
// leader's Raft apply), so every decision it makes is a Raft entry replayed the same way on
// every server.
//
// What must stay true:
//   - One goroutine, started by the leader for one term and stopped (and waited for) when that
//     term ends; the next leader starts again from the state, which holds every drain.
//   - A decision is made from one snapshot at one index; a drain is ended only if its strategy
//     is still the one that snapshot held (BatchNodeUpdateDrainRequest carries it).
//   - It creates IDs and reads the clock; the Raft entries it writes carry both fixed.
package drainer
