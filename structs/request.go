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

// QueryOpts gives the server's read pipeline the options of any request that embeds them.
func (q *QueryOptions) QueryOpts() *QueryOptions { return q }

// RequestToken gives the server's write pipeline the caller's token.
func (q *QueryOptions) RequestToken() string { return q.AuthToken }

// RequestToken gives the server's write pipeline the caller's token.
func (w *WriteRequest) RequestToken() string { return w.AuthToken }

// SetIndex records the index a write was applied at.
func (m *WriteMeta) SetIndex(index uint64) { m.Index = index }

// Actor identifies who caused a write. The RPC endpoint resolves it from the caller's token and
// writes it into the Raft entry so that every server derives identical events and records.
type Actor struct {
	AccessorID string `json:",omitempty"`
	Name       string `json:",omitempty"`
	Type       string `json:",omitempty"`
	// AllocID is, for a workload identity, the allocation whose task made the request.
	AllocID string `json:",omitempty"`
	// OnBehalfOf is, for a workload identity, the token that registered the job version the
	// allocation runs: an identity borrows its power from whoever put the code there, so an
	// audit of what it did must reach that person. Nil when that version records no token
	// (ACLs were off, or it was registered before versions recorded it).
	OnBehalfOf *OnBehalfOf `json:",omitempty"`
}

// OnBehalfOf names a token by its accessor and name, never its secret.
type OnBehalfOf struct {
	AccessorID string `json:",omitempty"`
	Name       string `json:",omitempty"`
}

// Submitter is the person a write by a registrant of a job version answers to: the token
// itself, or, when a workload identity registered the version, the token behind that
// identity, so a chain of jobs registering jobs still ends at a token. Nil without one.
func (a *Actor) Submitter() *OnBehalfOf {
	switch {
	case a == nil:
		return nil
	case a.AccessorID != "":
		return &OnBehalfOf{AccessorID: a.AccessorID, Name: a.Name}
	case a.OnBehalfOf != nil:
		o := *a.OnBehalfOf
		return &o
	}
	return nil
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

// GetQueryMeta gives the HTTP layer the read metadata of any reply that embeds it.
func (m *QueryMeta) GetQueryMeta() *QueryMeta { return m }

// GetWriteMeta gives the HTTP layer the commit index of any reply that embeds it.
func (m *WriteMeta) GetWriteMeta() *WriteMeta { return m }
