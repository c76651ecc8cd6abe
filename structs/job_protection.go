package structs

// JobProtectionReasonMax bounds the reason of a protection: it is kept beside the job for as
// long as the job lives and shown in every refused purge.
const JobProtectionReasonMax = 256

// TypeJobProtectionChanged is the event a protection change publishes on TopicJob (ours).
const TypeJobProtectionChanged = "JobProtectionChanged"

// JobProtection is a job's deletion protection. It lives beside the job, not in its spec, so
// registering the job again keeps it; it is removed with the job, which it keeps from being
// removed while Protected.
type JobProtection struct {
	Namespace string
	JobID     string
	Protected bool
	Reason    string
	// Actor is who made the last change; nil with ACLs disabled.
	Actor *Actor
	// ModifyTime is unix nanoseconds, fixed by the leader before the Raft apply.
	ModifyTime  int64
	CreateIndex uint64
	ModifyIndex uint64
}

// PurgeRefusal is the 409 of a purge (or removal) of a protected job.
func (p *JobProtection) PurgeRefusal() error {
	return Conflict("job %q in namespace %q is protected from purge (reason: %s); a holder of protect-job must unprotect it first",
		p.JobID, p.Namespace, p.Reason)
}

// JobProtectionRequest sets or clears a job's protection (PUT /v1/job/:id/protection).
type JobProtectionRequest struct {
	JobID     string
	Protected bool
	Reason    string
	// ModifyTime and Actor are fixed by the leader.
	ModifyTime int64
	Actor      *Actor
	WriteRequest
}

// Validate refuses a protection without a reason, or with one too long to keep.
func (r *JobProtectionRequest) Validate() error {
	if r.JobID == "" {
		return BadRequest("missing job ID")
	}
	if r.Protected && r.Reason == "" {
		return BadRequest("Reason is required when protecting a job")
	}
	if len(r.Reason) > JobProtectionReasonMax {
		return BadRequest("Reason: at most %d characters, got %d", JobProtectionReasonMax, len(r.Reason))
	}
	return nil
}

// JobProtectionResponse answers a protection change.
type JobProtectionResponse struct {
	WriteMeta
}

// JobProtectionGetResponse answers a protection read: the job's protection, or an unprotected
// one (Protected false, no actor) for a job never protected.
type JobProtectionGetResponse struct {
	Protection *JobProtection
	QueryMeta
}

// JobProtectionEvent is the payload of TypeJobProtectionChanged.
type JobProtectionEvent struct {
	Protection *JobProtection
	// Actor is who made the change; omitted with ACLs disabled.
	Actor *Actor `json:",omitempty"`
}
