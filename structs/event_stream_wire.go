package structs

import "time"

// EventStreamRequest asks for a subscription. Index is inclusive: the stream starts with the
// batch at Index (0 = oldest retained), as upstream's index parameter does.
type EventStreamRequest struct {
	Topics    map[Topic][]string
	Namespace string
	Index     uint64
	AuthToken string
}

// EventStreamMethod is the call a client agent makes on its connection to a server to stream
// events for its HTTP API: the request is an EventStreamRequest, the answer a sequence of
// EventStreamFrame, the first of which says whether the subscription opened.
const EventStreamMethod = "Event.Stream"

// EventStreamFrame is one frame of an event stream relayed to a client agent. The first frame
// carries the subscription's outcome (Code, Error, Kind; Expires when the token expires);
// the next carry a Gap, an encoded batch (Line) or, last, the Error that ended the stream.
type EventStreamFrame struct {
	Code    int
	Error   string
	Kind    string
	Expires *time.Time
	Gap     *EventGap
	Line    []byte
}
