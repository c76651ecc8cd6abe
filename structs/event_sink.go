package structs

import (
	"net/url"
	"regexp"
)

// Event sinks (ours): the leader delivers the events a sink selects to its receiver, so an
// alert on a purge needs no consumer of the event stream of one's own. A sink's cursor
// (LatestIndex) is committed through Raft after each acknowledged delivery, which makes
// delivery at least once across leader changes and restarts.

// EventSinkTypeWebhook is the only sink type: batches are POSTed to Address.
const EventSinkTypeWebhook = "webhook"

// TopicSink carries what a sink says about its own delivery; it is never published on the
// event stream, only sent to the sink's receiver.
const TopicSink Topic = "Sink"

// TypeEventsLost is the sink's gap frame: events after LastIndex and before OldestIndex can
// no longer be delivered. The purges among them follow it, re-sent from the purge history.
const TypeEventsLost = "EventsLost"

// EventSinkIDMax bounds a sink's ID; EventSinkSecretMin is the shortest secret accepted (an
// HMAC key that can be guessed signs nothing).
const (
	EventSinkIDMax     = 128
	EventSinkSecretMin = 16
	EventSinkSecretMax = 1024
	EventSinkAddrMax   = 2048
	EventSinkFilterMax = 4096
	EventSinkErrorMax  = 512
)

var eventSinkIDPattern = regexp.MustCompile(`^[a-zA-Z0-9_.-]+$`)

// EventSink is one registered sink. Secret is the HMAC key that signs each body; it is never
// returned by the API (Redacted) nor logged.
type EventSink struct {
	ID      string
	Type    string
	Address string
	// Topics selects events as the event stream's topic filter does: topic -> keys, "*" for
	// every key; the topic "*" applies its keys to every topic.
	Topics map[Topic][]string
	// Filter is an optional go-bexpr expression evaluated on each event's JSON form
	// (`Type == "JobDeregistered" and Payload.Purge == true`).
	Filter string
	Secret string
	// LatestIndex is the index of the last batch the receiver acknowledged (or that the sink
	// passed over because nothing in it was selected). A new sink starts at the index it was
	// registered at: it delivers what happens from then on.
	LatestIndex uint64
	// LastError is why the last delivery attempt failed, "" once one succeeded;
	// LastErrorTime is when (unix nanoseconds).
	LastError     string
	LastErrorTime int64
	// LastDeliveryTime is when the receiver last acknowledged a batch (unix nanoseconds).
	LastDeliveryTime int64
	CreateIndex      uint64
	ModifyIndex      uint64
}

// Redacted is the sink as the API shows it: without its secret.
func (s *EventSink) Redacted() *EventSink {
	return copyWith(s, func(c *EventSink) {
		c.Secret = ""
	})
}

// SameDelivery reports whether o delivers like s (same receiver, selection and key): a change
// of anything else (the cursor, the last error) does not restart the sink's worker.
func (s *EventSink) SameDelivery(o *EventSink) bool {
	if s == nil || o == nil {
		return s == o
	}
	if s.Type != o.Type || s.Address != o.Address || s.Filter != o.Filter || s.Secret != o.Secret || len(s.Topics) != len(o.Topics) {
		return false
	}
	for t, keys := range s.Topics {
		other, ok := o.Topics[t]
		if !ok || len(other) != len(keys) {
			return false
		}
		for i := range keys {
			if keys[i] != other[i] {
				return false
			}
		}
	}
	return true
}

// Validate refuses a sink that could not deliver, naming the field. The filter's compilation
// is checked by the server (nomad/eventsink), which owns the evaluator.
func (s *EventSink) Validate() error {
	if s == nil {
		return BadRequest("missing sink")
	}
	switch {
	case s.ID == "":
		return BadRequest("ID: missing")
	case len(s.ID) > EventSinkIDMax:
		return BadRequest("ID: at most %d characters", EventSinkIDMax)
	case !eventSinkIDPattern.MatchString(s.ID):
		return BadRequest("ID: only letters, digits, '_', '.' and '-' are allowed")
	}
	if s.Type != EventSinkTypeWebhook {
		return BadRequest("Type: must be %q, got %q", EventSinkTypeWebhook, s.Type)
	}
	if len(s.Address) > EventSinkAddrMax {
		return BadRequest("Address: at most %d characters", EventSinkAddrMax)
	}
	u, err := url.Parse(s.Address)
	if s.Address == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return BadRequest("Address: must be an http:// or https:// URL with a host")
	}
	if u.User != nil {
		// Credentials in the URL would be shown by every read of the sink; the body is signed.
		return BadRequest("Address: must not carry credentials (user:password@)")
	}
	if len(s.Topics) == 0 {
		return BadRequest("Topics: at least one topic is required, e.g. {\"Job\": [\"*\"]}")
	}
	n := 0
	for topic, keys := range s.Topics {
		if topic == "" {
			return BadRequest("Topics: empty topic name")
		}
		if len(keys) == 0 {
			return BadRequest("Topics: topic %q has no keys (use [\"*\"] for all)", topic)
		}
		for _, k := range keys {
			if k == "" {
				return BadRequest("Topics: topic %q has an empty key", topic)
			}
		}
		n += len(keys)
	}
	if n > EventStreamMaxTopicKeys {
		return BadRequest("Topics: at most %d topic/key pairs", EventStreamMaxTopicKeys)
	}
	if len(s.Filter) > EventSinkFilterMax {
		return BadRequest("Filter: at most %d characters", EventSinkFilterMax)
	}
	if s.Secret == "" {
		return BadRequest("Secret: missing; every delivery is signed with it")
	}
	if len(s.Secret) < EventSinkSecretMin || len(s.Secret) > EventSinkSecretMax {
		return BadRequest("Secret: must be %d to %d characters", EventSinkSecretMin, EventSinkSecretMax)
	}
	return nil
}

// EventSinkUpsertRequest registers or replaces a sink (PUT /v1/event/sink/:id). Replacing
// keeps the sink's cursor: a changed address does not re-send what was delivered.
type EventSinkUpsertRequest struct {
	Sink *EventSink
	WriteRequest
}

// EventSinkDeleteRequest removes a sink (DELETE /v1/event/sink/:id).
type EventSinkDeleteRequest struct {
	ID string
	WriteRequest
}

// EventSinkProgressRequest is the leader's record of a sink's delivery: the cursor after an
// acknowledged batch, or the error of a failed attempt. The cursor never moves back.
type EventSinkProgressRequest struct {
	ID          string
	LatestIndex uint64
	// Delivered says a batch was acknowledged: the last error is cleared.
	Delivered     bool
	DeliveryTime  int64
	LastError     string
	LastErrorTime int64
	WriteRequest
}

// EventSinkSpecificRequest names one sink.
type EventSinkSpecificRequest struct {
	ID string
	QueryOptions
}

// EventSinkListRequest lists every sink.
type EventSinkListRequest struct {
	QueryOptions
}

// EventSinkResponse answers a read of one sink, redacted.
type EventSinkResponse struct {
	Sink *EventSink
	QueryMeta
}

// EventSinkListResponse answers a list of sinks, redacted, by ID.
type EventSinkListResponse struct {
	Sinks []*EventSink
	QueryMeta
}

// EventSinkGap is the payload of the TypeEventsLost frame.
type EventSinkGap struct {
	// LastIndex is the sink's cursor: everything up to it was delivered.
	LastIndex uint64
	// OldestIndex is the first index the sink can deliver again; events in between are
	// lost, except the purges, which are re-sent after this frame.
	OldestIndex uint64
	Reason      string
}
