// Package eventsink delivers the events an event sink selects to its receiver. The leader runs
// one Manager per term (nomad/leader_duties.go), which runs one worker per registered sink; every
// goroutine ends with the term.
//
// A worker subscribes to the event broker after the sink's committed cursor, keeps the events
// the sink's topics and filter select, and POSTs each batch as the event stream shapes it,
// `{"Index":N,"Events":[...]}`, signed with `X-Nomad-Signature: sha256=<hex HMAC-SHA256 of the
// body keyed with the sink's secret>`. A 2xx acknowledges the batch; anything else is retried,
// in order, with capped exponential backoff. After an acknowledgement the cursor is committed
// through Raft, so a new leader, or this one after a restart or kill -9, resumes after the last
// acknowledged batch: delivery is at least once.
//
// When the broker no longer holds the events after the cursor (the receiver was away longer
// than the event buffer lasts, or the server restarted and its broker never saw them), the
// worker sends a gap frame (Topic "Sink", Type "EventsLost") and then every purge after the
// cursor from the durable purge history, so a purge is never lost.
package eventsink
