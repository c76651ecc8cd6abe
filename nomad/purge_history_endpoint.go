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

// List lists records newest first, filtered by namespace ("*" = every namespace the caller may
// read), job ID prefix and time.
func (p *PurgeHistory) List(args *structs.PurgeRecordListRequest, reply *structs.PurgeRecordListResponse) error {
	if done, err := p.srv.forwardRead("PurgeHistory.List", &args.QueryOptions, args, reply); done {
		return err
	}
	visible, err := p.srv.namespaceReader(&args.QueryOptions, acl.NamespaceCapabilityReadJob)
	if err != nil {
		return err
	}
	all := args.Namespace == structs.AllNamespacesSentinel
	return p.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		records, err := store.PurgeRecords(ws)
		if err != nil {
			return 0, err
		}
		// Newest first (reverse gives oldest first), paged by create index and ID.
		reply.Records, reply.NextToken, err = paginator.Page(records, args.QueryOptions,
			paginator.Order[*structs.PurgeRecord]{Descending: true, Key: func(r *structs.PurgeRecord) paginator.Key {
				return paginator.ByCreateIndexID(r.CreateIndex, r.ID)
			}},
			func(r *structs.PurgeRecord) bool {
				return (all || r.Namespace == args.Namespace) && visible(r.Namespace) &&
					(args.Prefix == "" || hasPrefix(r.JobID, args.Prefix)) &&
					(args.Since == 0 || r.PurgeTime >= args.Since)
			},
			func(r *structs.PurgeRecord) (*structs.PurgeRecordStub, error) { return r.Stub(), nil })
		if err != nil {
			return 0, err
		}
		return store.Index("purge_history"), nil
	})
}

// GetRecord reads one record with its job; read-job in the record's namespace is needed.
func (p *PurgeHistory) GetRecord(args *structs.PurgeRecordSpecificRequest, reply *structs.SinglePurgeRecordResponse) error {
	if done, err := p.srv.forwardRead("PurgeHistory.GetRecord", &args.QueryOptions, args, reply); done {
		return err
	}
	aclObj, _, err := p.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	rec, err := p.srv.State().PurgeRecordByID(nil, args.ID)
	if err != nil {
		return err
	}
	if rec == nil {
		return structs.NewErrCode(404, "purge record not found")
	}
	if !aclObj.AllowNamespaceOperation(rec.Namespace, acl.NamespaceCapabilityReadJob) {
		return structs.PermissionDenied("read-job capability required in namespace %q", rec.Namespace)
	}
	reply.Record = rec
	reply.Index = p.srv.State().Index("purge_history")
	p.srv.setQueryMeta(&reply.QueryMeta)
	return nil
}

// Restore registers a record's job again as a new job: a normal register whose actor is the
// restorer. It conflicts with a job of the same ID in the namespace.
func (p *PurgeHistory) Restore(args *structs.PurgeRecordRestoreRequest, reply *structs.JobRegisterResponse) error {
	if done, err := p.srv.forward("PurgeHistory.Restore", args, reply); done {
		return err
	}
	aclObj, actor, err := p.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	rec, err := p.srv.State().PurgeRecordByID(nil, args.ID)
	if err != nil {
		return err
	}
	if rec == nil {
		return structs.NewErrCode(404, "purge record not found")
	}
	if !aclObj.AllowNamespaceOperation(rec.Namespace, acl.NamespaceCapabilitySubmitJob) {
		return structs.PermissionDenied("submit-job capability required in namespace %q", rec.Namespace)
	}
	existing, err := p.srv.State().JobByID(nil, rec.Namespace, rec.JobID)
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
	// EnforceIndex with 0 makes the FSM refuse if a job with this ID appeared meanwhile.
	req := &structs.JobRegisterRequest{Job: job, EnforceIndex: true, JobModifyIndex: 0,
		WriteRequest: structs.WriteRequest{Namespace: rec.Namespace, Region: args.Region, AuthToken: args.AuthToken}}
	return p.srv.Endpoints.Job.register(req, actor, reply)
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
