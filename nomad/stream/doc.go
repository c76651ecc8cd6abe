// Package stream owns the event broker: the bounded, in-memory buffer of event batches the FSM
// publishes after each committed transaction, and the subscriptions GET /v1/event/stream reads
// from.
//
// It may import only structs from this module. ACL decisions come in as functions (see
// EventBroker.CheckSubscriptionsAgainst) so that the acl package and the server stay out of it.
//
// What must stay true:
//   - Publish never waits on a subscriber. It runs on the FSM's apply path, and a reader that
//     stopped reading must not be able to stall Raft.
//   - No goroutine per subscriber: a subscriber reads the shared list in its own Next call.
//   - A subscriber never silently skips a batch it should have received. If batches it had not
//     yet read were dropped from the buffer, Next fails with ErrSlowSubscriber.
package stream
