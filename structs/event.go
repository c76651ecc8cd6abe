package structs

// Topic is the kind of object an event describes. Topic strings are part of the wire format of
// GET /v1/event/stream (they appear in events and in the ?topic= filter): never rename one.
type Topic string

// Event topics. TopicAll is only meaningful in a subscription filter, where it matches events
// of every topic; no event is published with it.
const (
	TopicJob        Topic = "Job"
	TopicEvaluation Topic = "Evaluation"
	TopicAllocation Topic = "Allocation"
	TopicDeployment Topic = "Deployment"
	TopicNode       Topic = "Node"
	TopicNodePool   Topic = "NodePool"
	TopicACLToken   Topic = "ACLToken"
	TopicACLPolicy  Topic = "ACLPolicy"
	TopicACLRole    Topic = "ACLRole"
	// TopicACLAuthMethod publishes methods with their secrets redacted (upstream sends them).
	TopicACLAuthMethod  Topic = "ACLAuthMethod"
	TopicACLBindingRule Topic = "ACLBindingRule"
	TopicService        Topic = "Service"
	TopicNamespace      Topic = "Namespace"
	TopicOperator       Topic = "Operator"
	TopicVariables      Topic = "Variables"
	// TopicPurgeRecord carries the purge history (ours: upstream has no purge history): a
	// record written by a purge or GC, and its removal after retention.
	TopicPurgeRecord Topic = "PurgeRecord"
	TopicAll         Topic = "*"
)

// Event is one change to one object, derived from a committed state-store transaction. The
// field names and their order are the wire envelope Nomad clients decode, so FilterKeys stays
// without omitempty (clients see null when there are none).
type Event struct {
	Topic Topic
	// Type says why the object changed; it comes from the Raft message type of the transaction
	// (MessageTypes), so every event of one transaction shares it, unless the table's
	// converter names a more precise one (a variable write that deletes).
	Type string
	// Key is the object's primary identifier (job ID, eval ID, token AccessorID, …).
	Key string
	// Namespace is empty for objects that do not live in a namespace; such events pass every
	// namespace filter.
	Namespace string
	// FilterKeys are secondary identifiers a topic filter also matches, e.g. an evaluation's
	// JobID so that "Evaluation:web" follows the evaluations of job web.
	FilterKeys []string
	Index      uint64
	// Payload wraps the object in a topic-specific struct (JobEvent, EvaluationEvent, …). It
	// is shared by every subscriber and must be treated as read-only once published.
	Payload any
}

// Events is the batch of events produced by one Raft apply, all at the same Index. The broker
// buffers and delivers whole batches; one batch is one line of the NDJSON stream.
type Events struct {
	Index  uint64
	Events []Event
}

// EventGap says that events a subscriber was owed are no longer retained: those after
// LastIndex and before OldestIndex were dropped from the buffer. The stream sends it as a frame
// `{"Index":0,"Gap":{...}}` (the official client reads an Index of 0 without events as a
// heartbeat, so it is unaffected) instead of skipping silently, as Kubernetes' watch answers
// 410 Gone. Ours.
type EventGap struct {
	// LastIndex is the last index the subscriber had: the one before the index it asked to
	// start at, or the last one it received.
	LastIndex uint64
	// OldestIndex is the oldest index still available (the stream's `index=` to read from it).
	OldestIndex uint64
	// Reason is "index not retained" (the requested start was too old) or "subscriber fell
	// behind" (it read too slowly and was dropped).
	Reason string
}

// Reasons of an EventGap.
const (
	EventGapIndexNotRetained = "index not retained"
	EventGapFellBehind       = "subscriber fell behind"
)

// EventStreamMaxTopicKeys bounds the topic/key pairs of one subscription: every published
// event is matched against them, so an unbounded list would make one subscriber cost the
// broker without limit.
const EventStreamMaxTopicKeys = 1000

// PurgeRecordEvent is the payload of events on TopicPurgeRecord: the record without the job
// spec, which the JobDeregistered event of the same index already carries.
type PurgeRecordEvent struct {
	PurgeRecord *PurgeRecordStub
}

// JobEvent is the payload of events on TopicJob.
type JobEvent struct {
	// Job is the job after the change, or, when it was removed from state, as it was just
	// before removal.
	Job *Job
	// Purge is the deregister request's purge flag (true for the job GC), carried through the
	// Raft log into the write transaction and read from it, never inferred from the state.
	// Omitted when false, so a plain stop looks the same as before the flag existed.
	Purge bool `json:",omitempty"`
	// Deleted says the job row no longer exists after the transaction, under the name
	// upstream Nomad 2.x uses. Today only purges remove job rows, so the two agree; a write
	// that removed one without a purge request would say Deleted without Purge.
	Deleted bool `json:",omitempty"`
	// Actor is who caused the write; omitted for API writes when ACLs are disabled. It never
	// carries a SecretID.
	Actor *Actor `json:",omitempty"`
	// ForcedBy is, when a forced GC removed the job (Actor is then the job GC), the token that
	// forced it: who asked, beside who did it. Our extension; never a SecretID either.
	ForcedBy *Actor `json:",omitempty"`
}

// Event types of a job version leaving history's protection or history itself (ours: upstream
// publishes neither). They are on TopicJob with the job's ID as Key, so a subscription to a
// job sees them beside its JobRegistered events.
const (
	// TypeJobVersionUntagged: a version lost its tag, and with it the exemption from the
	// version limit.
	TypeJobVersionUntagged = "JobVersionUntagged"
	// TypeJobVersionPruned: a version left the tracked window (job_tracked_versions) and is
	// no longer stored.
	TypeJobVersionPruned = "JobVersionPruned"
)

// JobVersionEvent is the payload of TypeJobVersionUntagged and TypeJobVersionPruned events.
type JobVersionEvent struct {
	// Job is the version: after the change for an untag, as it was last stored for a prune,
	// so a subscriber keeps what the servers no longer do.
	Job *Job
	// RemovedTag is the tag the version lost; omitted when it had none.
	RemovedTag *JobVersionTag `json:",omitempty"`
	// Actor is who made the write that untagged or pruned the version (the untag, or the
	// registration that pushed it out); omitted when ACLs are disabled.
	Actor *Actor `json:",omitempty"`
}

// EvaluationEvent is the payload of events on TopicEvaluation.
type EvaluationEvent struct {
	Evaluation *Evaluation
}

// NamespaceEvent is the payload of events on TopicNamespace.
type NamespaceEvent struct {
	Namespace *Namespace
}
