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
	PurgeTime int64
	Job       *Job
	// Allocations are the job's allocations as they were when it was removed, then as their
	// clients last reported them: a client still running one when the job went reports its end
	// here, so how each ended is not lost with the job. Our extension.
	Allocations []*PurgedAllocation `json:",omitempty"`
	CreateIndex uint64
	// ModifyIndex is the index of the last write to the record (CreateIndex, or a client's
	// report of one of its allocations).
	ModifyIndex uint64
	// ChainSeq is the record's position in the purge chain (1 for the first record ever);
	// PrevHash is the previous record's Hash ("" for the first), Hash this record's
	// (ComputeHash). Records written before the chain existed have neither.
	ChainSeq uint64
	PrevHash string
	Hash     string
}

// PurgedAllocation is the last known state of an allocation of a removed job.
type PurgedAllocation struct {
	ID                string
	Name              string
	NodeID            string
	TaskGroup         string
	DesiredStatus     string
	ClientStatus      string
	ClientDescription string
	TaskStates        map[string]*TaskState
	// ModifyIndex and ModifyTime are those of the last write to this allocation's state.
	ModifyIndex uint64
	ModifyTime  int64
}

// PurgedAllocationFrom is alloc's state for the purge record.
func PurgedAllocationFrom(alloc *Allocation) *PurgedAllocation {
	return &PurgedAllocation{
		ID: alloc.ID, Name: alloc.Name, NodeID: alloc.NodeID, TaskGroup: alloc.TaskGroup,
		DesiredStatus: alloc.DesiredStatus, ClientStatus: alloc.ClientStatus, ClientDescription: alloc.ClientDescription,
		TaskStates: alloc.TaskStates, ModifyIndex: alloc.ModifyIndex, ModifyTime: alloc.ModifyTime,
	}
}

// Allocation is the purged allocation as an Allocation of its record's job (without the job
// itself), for the events that report its end.
func (a *PurgedAllocation) Allocation(rec *PurgeRecord) *Allocation {
	return &Allocation{
		ID: a.ID, Namespace: rec.Namespace, Name: a.Name, NodeID: a.NodeID, JobID: rec.JobID, TaskGroup: a.TaskGroup,
		DesiredStatus: a.DesiredStatus, ClientStatus: a.ClientStatus, ClientDescription: a.ClientDescription,
		TaskStates: a.TaskStates, ModifyIndex: a.ModifyIndex, ModifyTime: a.ModifyTime,
	}
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
	ModifyIndex uint64
}

// Stub returns the list form.
func (r *PurgeRecord) Stub() *PurgeRecordStub {
	return &PurgeRecordStub{
		ID: r.ID, Namespace: r.Namespace, JobID: r.JobID, JobVersion: r.JobVersion,
		JobType: r.JobType, Reason: r.Reason, Actor: r.Actor, ForcedBy: r.ForcedBy, PurgeTime: r.PurgeTime,
		CreateIndex: r.CreateIndex, ModifyIndex: r.ModifyIndex,
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
