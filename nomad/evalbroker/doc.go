// Package evalbroker is the leader's queue of evaluations waiting for a scheduling worker.
//
// It owns leader memory only: nothing in it is replicated or written to the state store. The
// leader fills it when it gains leadership (every pending evaluation in the state) and from
// the FSM's commit hook as pending evaluations are applied; it is disabled and emptied when
// leadership is lost. The state store stays the truth: an evaluation lost from the broker is
// found again by the next leader, and one delivered twice is harmless because a worker reads
// the evaluation back from its snapshot and skips it once it is terminal.
//
// It may import structs only (and the standard library and go-uuid).
//
// What must stay true:
//   - Enqueue never blocks on anything but the broker's own mutex, held for map and heap
//     operations only: it runs on the FSM goroutine. Nothing under the mutex calls out.
//   - At most one evaluation per job is outstanding (ready, unacknowledged or waiting for a
//     nack delay); later ones of the same job wait behind it and are released by its Ack.
//   - Every delivery has a token; Ack and Nack must present the current one, so a worker whose
//     delivery timed out cannot acknowledge the redelivery another worker holds.
//   - After DeliveryLimit deliveries a nacked evaluation goes to the FailedQueue, from which
//     the leader marks it failed and creates its follow-up through Raft, then acknowledges it.
//   - Timers (nack timeouts, delays, WaitUntil) are stopped by Disable; a timer that fires
//     after it checks the broker's generation and does nothing.
package evalbroker
