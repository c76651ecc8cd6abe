package nomad

import (
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/nomad/paginator"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// PurgeHistory is the endpoint over the durable record of job removals.
type PurgeHistory struct {
	srv *Server
}

// purgeHistoryList lists records newest first, filtered by namespace ("*" = every namespace
// the caller may read), job ID prefix and time. read-job is needed in the namespace, or with
// "*" in at least one.
var purgeHistoryList = read("PurgeHistory.List", spec[structs.PurgeRecordListRequest, structs.PurgeRecordListResponse]{
	Prepare: func(req *structs.PurgeRecordListRequest) error {
		if req.Namespace == "" {
			req.Namespace = structs.DefaultNamespace
		}
		return nil
	},
	Authorize: restCapHereOrAnywhere(acl.NamespaceCapabilityReadJob, func(req *structs.PurgeRecordListRequest) string {
		return req.Namespace
	}),
	Serve: func(c *rpcCall, req *structs.PurgeRecordListRequest, reply *structs.PurgeRecordListResponse) error {
		all := req.Namespace == structs.AllNamespacesSentinel
		// Newest first (reverse gives oldest first), paged by create index and ID.
		return pagedList(c.srv.blockingRPC, &req.QueryOptions, &reply.QueryMeta, &reply.Records,
			func(ws memdb.WatchSet, store *state.StateStore) ([]*structs.PurgeRecord, error) {
				return store.PurgeRecords(ws)
			},
			paginator.Order[*structs.PurgeRecord]{Descending: true, Key: func(r *structs.PurgeRecord) paginator.Key {
				return paginator.ByCreateIndexID(r.CreateIndex, r.ID)
			}},
			func(r *structs.PurgeRecord) bool {
				return (all || r.Namespace == req.Namespace) &&
					c.acl.AllowNamespaceOperation(r.Namespace, acl.NamespaceCapabilityReadJob) &&
					(req.Prefix == "" || hasPrefix(r.JobID, req.Prefix)) &&
					(req.Since == 0 || r.PurgeTime >= req.Since)
			},
			func(r *structs.PurgeRecord) (*structs.PurgeRecordStub, error) { return r.Stub(), nil },
			func(store *state.StateStore) uint64 { return store.Index("purge_history") })
	},
})

// purgeHistoryGetRecord reads one record with its job; read-job in the record's namespace is
// needed. A caller without read-job anywhere is refused before the lookup, unknown ID or not.
var purgeHistoryGetRecord = read("PurgeHistory.GetRecord", spec[structs.PurgeRecordSpecificRequest, structs.SinglePurgeRecordResponse]{
	Authorize: restCapAnywhere[structs.PurgeRecordSpecificRequest](acl.NamespaceCapabilityReadJob),
	Serve: func(c *rpcCall, req *structs.PurgeRecordSpecificRequest, reply *structs.SinglePurgeRecordResponse) error {
		rec, err := c.srv.State().PurgeRecordByID(nil, req.ID)
		if err != nil {
			return err
		}
		if rec == nil {
			return structs.NewErrCode(404, "purge record not found")
		}
		if !c.acl.AllowNamespaceOperation(rec.Namespace, acl.NamespaceCapabilityReadJob) {
			return structs.PermissionDenied("read-job capability required in namespace %q", rec.Namespace)
		}
		reply.Record = rec
		reply.Index = c.srv.State().Index("purge_history")
		c.srv.setQueryMeta(&reply.QueryMeta)
		return nil
	},
})

// purgeHistoryRestore registers a record's job again as a new job: a normal register whose
// actor is the restorer. It conflicts with a job of the same ID in the namespace. submit-job
// in the record's namespace is needed; a caller without it anywhere is refused before the
// lookup.
var purgeHistoryRestore = write("PurgeHistory.Restore", spec[structs.PurgeRecordRestoreRequest, structs.JobRegisterResponse]{
	Authorize: restCapAnywhere[structs.PurgeRecordRestoreRequest](acl.NamespaceCapabilitySubmitJob),
	Serve: func(c *rpcCall, args *structs.PurgeRecordRestoreRequest, reply *structs.JobRegisterResponse) error {
		store := c.srv.State()
		rec, err := store.PurgeRecordByID(nil, args.ID)
		if err != nil {
			return err
		}
		if rec == nil {
			return structs.NewErrCode(404, "purge record not found")
		}
		if !c.acl.AllowNamespaceOperation(rec.Namespace, acl.NamespaceCapabilitySubmitJob) {
			return structs.PermissionDenied("submit-job capability required in namespace %q", rec.Namespace)
		}
		existing, err := store.JobByID(nil, rec.Namespace, rec.JobID)
		if err != nil {
			return err
		}
		if existing != nil {
			return structs.Conflict("job %q already exists in namespace %q", rec.JobID, rec.Namespace)
		}
		job := rec.Job.Copy()
		job.Stop = false
		job.VersionTag = nil
		job.Stable = false
		if err := c.srv.checkJobIdentity(c.acl, job); err != nil {
			return err
		}
		// EnforceIndex with 0 makes the FSM refuse if a job with this ID appeared meanwhile.
		req := &structs.JobRegisterRequest{Job: job, EnforceIndex: true, JobModifyIndex: 0,
			WriteRequest: structs.WriteRequest{Namespace: rec.Namespace, Region: args.Region, AuthToken: args.AuthToken}}
		return c.srv.Endpoints.Job.register(req, c.actor, reply)
	},
})

// List lists purge records newest first.
func (p *PurgeHistory) List(args *structs.PurgeRecordListRequest, reply *structs.PurgeRecordListResponse) error {
	return purgeHistoryList.Call(p.srv, args, reply)
}

// GetRecord reads one purge record with its job.
func (p *PurgeHistory) GetRecord(args *structs.PurgeRecordSpecificRequest, reply *structs.SinglePurgeRecordResponse) error {
	return purgeHistoryGetRecord.Call(p.srv, args, reply)
}

// Restore registers a purge record's job again as a new job.
func (p *PurgeHistory) Restore(args *structs.PurgeRecordRestoreRequest, reply *structs.JobRegisterResponse) error {
	return purgeHistoryRestore.Call(p.srv, args, reply)
}

// reapPurgeHistory deletes records older than the retention through Raft.
func (s *Server) reapPurgeHistory() error {
	records, err := s.State().PurgeRecords(nil)
	if err != nil {
		return err
	}
	cutoff := time.Now().Add(-s.config.PurgeHistoryRetention).UnixNano()
	var expired []string
	for _, r := range records {
		if r.PurgeTime < cutoff {
			expired = append(expired, r.ID)
		}
	}
	if len(expired) == 0 {
		return nil
	}
	_, err = s.raftApply(structs.PurgeRecordDeleteRequestType, &structs.PurgeRecordDeleteRequest{IDs: expired})
	return err
}

// purgeHistoryVerify checks the purge history's hash chain from the retention checkpoint to
// the head. The chain spans every namespace, so a caller with read-job in at least one may
// run it; the record that breaks it is named only to a caller who may read that record.
var purgeHistoryVerify = read("PurgeHistory.Verify", spec[structs.PurgeChainVerifyRequest, structs.PurgeChainVerifyResponse]{
	Authorize: restCapAnywhere[structs.PurgeChainVerifyRequest](acl.NamespaceCapabilityReadJob),
	Serve: func(c *rpcCall, req *structs.PurgeChainVerifyRequest, reply *structs.PurgeChainVerifyResponse) error {
		store := c.srv.State()
		index := store.Index("purge_history")
		result, _, err := store.VerifyPurgeChain()
		if err != nil {
			return err
		}
		if b := result.Broken; b != nil && b.Namespace != "" && !c.acl.AllowNamespaceOperation(b.Namespace, acl.NamespaceCapabilityReadJob) {
			b.ID, b.Namespace, b.JobID = "", "", ""
		}
		*reply = *result
		reply.Index = index
		c.srv.setQueryMeta(&reply.QueryMeta)
		return nil
	},
})

// Verify checks the purge history's hash chain.
func (p *PurgeHistory) Verify(args *structs.PurgeChainVerifyRequest, reply *structs.PurgeChainVerifyResponse) error {
	return purgeHistoryVerify.Call(p.srv, args, reply)
}
