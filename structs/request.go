package structs

import "time"

// QueryOptions are the common parameters of a read RPC.
type QueryOptions struct {
	Region        string
	Namespace     string
	MinQueryIndex uint64
	MaxQueryTime  time.Duration
	AllowStale    bool
	Prefix        string
	AuthToken     string

	// Filter, PerPage, NextToken and Reverse page and filter list reads (upstream's
	// filter, per_page, next_token and reverse parameters); other reads ignore them.
	Filter    string
	PerPage   int32
	NextToken string
	Reverse   bool
}

// WriteRequest carries the common parameters of a write RPC.
type WriteRequest struct {
	Region    string
	Namespace string
	AuthToken string
}

// QueryMeta describes the state a read was answered from.
type QueryMeta struct {
	Index       uint64
	LastContact time.Duration
	KnownLeader bool
	NextToken   string
}

// WriteMeta describes the Raft index a write was committed at.
type WriteMeta struct {
	Index uint64
}

// Actor identifies who caused a write. The RPC endpoint resolves it from the caller's token and
// writes it into the Raft entry so that every server derives identical events and records.
type Actor struct {
	AccessorID string `json:",omitempty"`
	Name       string `json:",omitempty"`
	Type       string `json:",omitempty"`
}

// Actor types beyond the token types "client" and "management".
const (
	ActorTypeAnonymous = "anonymous"
	ActorTypeSystem    = "system"
)

// ActorJobGC is who removes jobs during garbage collection.
var ActorJobGC = &Actor{Type: ActorTypeSystem, Name: "job-gc"}

// GenericResponse answers writes that return nothing but their index.
type GenericResponse struct {
	WriteMeta
}

// DefaultNamespace always exists and cannot be deleted.
const DefaultNamespace = "default"

// AllNamespacesSentinel asks list endpoints for every namespace the caller may see.
const AllNamespacesSentinel = "*"

// DefaultRegion is the region of an agent that does not name one.
const DefaultRegion = "global"
