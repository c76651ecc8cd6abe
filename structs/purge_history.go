package structs

// Reasons a job left state.
const (
	PurgeReasonPurge = "purge"
	PurgeReasonGC    = "gc"
)

// PurgeRecord is the durable trace of one job removal: who removed which job, when and why,
// with the last spec so it can be restored. It is written in the transaction that removes the
// job, so neither can exist without the other.
type PurgeRecord struct {
	ID         string
	Namespace  string
	JobID      string
	JobVersion uint64
	JobType    string
	Reason     string
	Actor      *Actor
	// ForcedBy is, for a removal by a forced GC, the token that forced it (Actor is then the
	// job GC). Our extension, like the purge history itself.
	ForcedBy *Actor `json:",omitempty"`
	// PurgeTime is unix nanoseconds, fixed by the leader before the Raft apply.
	PurgeTime   int64
	Job         *Job
	CreateIndex uint64
}

// PurgeRecordStub is the list form of a record, without the job spec.
type PurgeRecordStub struct {
	ID          string
	Namespace   string
	JobID       string
	JobVersion  uint64
	JobType     string
	Reason      string
	Actor       *Actor
	ForcedBy    *Actor `json:",omitempty"`
	PurgeTime   int64
	CreateIndex uint64
}

// Stub returns the list form.
func (r *PurgeRecord) Stub() *PurgeRecordStub {
	return &PurgeRecordStub{
		ID: r.ID, Namespace: r.Namespace, JobID: r.JobID, JobVersion: r.JobVersion,
		JobType: r.JobType, Reason: r.Reason, Actor: r.Actor, ForcedBy: r.ForcedBy, PurgeTime: r.PurgeTime,
		CreateIndex: r.CreateIndex,
	}
}

// PurgeRecordDeleteRequest removes records past retention; the leader sends it.
type PurgeRecordDeleteRequest struct {
	IDs []string
	WriteRequest
}

// PurgeRecordListRequest lists records.
type PurgeRecordListRequest struct {
	// Since keeps records with PurgeTime at or after it (unix ns); 0 keeps all.
	Since int64
	QueryOptions
}

// PurgeRecordListResponse answers PurgeRecordListRequest.
type PurgeRecordListResponse struct {
	Records []*PurgeRecordStub
	QueryMeta
}

// PurgeRecordSpecificRequest reads or restores one record.
type PurgeRecordSpecificRequest struct {
	ID string
	QueryOptions
}

// SinglePurgeRecordResponse answers PurgeRecordSpecificRequest.
type SinglePurgeRecordResponse struct {
	Record *PurgeRecord
	QueryMeta
}

// PurgeRecordRestoreRequest registers a record's job again.
type PurgeRecordRestoreRequest struct {
	ID string
	WriteRequest
}
