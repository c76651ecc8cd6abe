package nomad

import (
	"fmt"
	"strings"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/go-uuid"
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/nomad/paginator"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// Job is the job RPC endpoint.
type Job struct {
	srv *Server
}

// Register creates or updates a job and its evaluation in one Raft entry.
func (j *Job) Register(args *structs.JobRegisterRequest, reply *structs.JobRegisterResponse) error {
	if done, err := j.srv.forward("Job.Register", args, reply); done {
		return err
	}
	if args.Job == nil {
		return structs.BadRequest("Job must be specified")
	}
	args.Job.Canonicalize()
	if args.Namespace == "" {
		args.Namespace = args.Job.Namespace
	}
	aclObj, actor, err := j.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	ns := args.Job.Namespace
	if !aclObj.AllowNamespaceOperation(ns, acl.NamespaceCapabilitySubmitJob) &&
		!aclObj.AllowNamespaceOperation(ns, acl.NamespaceCapabilityRegisterJob) {
		return structs.PermissionDenied("submit-job capability required in namespace %q", ns)
	}
	if err := j.srv.registrationRejected(aclObj); err != nil {
		return err
	}
	return j.register(args, actor, reply)
}

// register validates and applies a register of a canonical job whose caller is already
// authorized; revert, scale and restore reach it with their own capability checks and jobs
// read back from state.
func (j *Job) register(args *structs.JobRegisterRequest, actor *structs.Actor, reply *structs.JobRegisterResponse) error {
	ns := args.Job.Namespace
	if err := args.Job.Validate(); err != nil {
		return structs.BadRequest("%s", err.Error())
	}
	if args.EvalPriority != 0 && (args.EvalPriority < structs.JobMinPriority || args.EvalPriority > structs.JobMaxPriority) {
		return structs.BadRequest("eval priority must be between [%d, %d]", structs.JobMinPriority, structs.JobMaxPriority)
	}
	if err := j.srv.checkLeader(); err != nil {
		return err
	}
	store := j.srv.State()
	namespace, err := store.NamespaceByName(nil, ns)
	if err != nil {
		return err
	}
	if namespace == nil {
		return structs.BadRequest("namespace %q does not exist", ns)
	}
	if pool, err := store.NodePoolByName(nil, args.Job.NodePool); err != nil {
		return err
	} else if pool == nil {
		return structs.BadRequest("job %q is in nonexistent node pool %q", args.Job.ID, args.Job.NodePool)
	}
	existing, err := store.JobByID(nil, ns, args.Job.ID)
	if err != nil {
		return err
	}
	if args.PreserveCounts && existing != nil {
		args.Job.CopyTaskGroups()
		for _, tg := range args.Job.TaskGroups {
			if prev := existing.LookupTaskGroup(*tg.Name); prev != nil && prev.Count != nil {
				count := *prev.Count
				tg.Count = &count
			}
		}
	}
	if args.PreserveResources && existing != nil {
		preserveResources(args.Job, existing)
	}
	// After preserve_counts: the counts checked are the ones that will run.
	if err := args.Job.CheckMaxCount(j.srv.jobMaxCount()); err != nil {
		return err
	}
	// As upstream: a job's type decides how every part of it is scheduled, so it does not
	// change under its allocations; purge the job to register it with another type.
	if existing != nil && existing.Type != args.Job.Type {
		return structs.BadRequest("cannot update job from type %q to %q", existing.Type, args.Job.Type)
	}
	if actor != nil {
		args.Job.NomadTokenID = actor.AccessorID
	}
	if err := j.srv.assignScalingPolicyIDs(args.Job); err != nil {
		return err
	}
	t := now()
	args.Job.SubmitTime = t.UnixNano()
	args.Actor = actor
	if !args.Job.IsPeriodic() && !args.Job.IsParameterized() {
		args.Eval, err = newEval(args.Job, structs.EvalTriggerJobRegister, args.EvalPriority, t.UnixNano())
		if err != nil {
			return err
		}
	}
	index, err := j.srv.raftApply(structs.JobRegisterRequestType, args)
	if err != nil {
		return err
	}
	stored, err := j.srv.State().JobByID(nil, ns, args.Job.ID)
	if err != nil {
		return err
	}
	reply.JobModifyIndex = index
	if stored != nil {
		reply.JobModifyIndex = stored.JobModifyIndex
	}
	if args.Eval != nil {
		reply.EvalID = args.Eval.ID
		reply.EvalCreateIndex = index
	}
	reply.Index = index
	j.srv.setQueryMeta(&reply.QueryMeta)
	return nil
}

// jobMaxCount is server.job_max_count, its default when unset.
func (s *Server) jobMaxCount() int {
	if s.config.JobMaxCount > 0 {
		return s.config.JobMaxCount
	}
	return DefaultJobMaxCount
}

func newEval(job *structs.Job, trigger string, priority int, nowNanos int64) (*structs.Evaluation, error) {
	id, err := uuid.GenerateUUID()
	if err != nil {
		return nil, err
	}
	if priority == 0 {
		priority = job.Priority
	}
	return &structs.Evaluation{
		ID:          id,
		Namespace:   job.Namespace,
		Priority:    priority,
		Type:        job.Type,
		TriggeredBy: trigger,
		JobID:       job.ID,
		Status:      structs.EvalStatusPending,
		CreateTime:  nowNanos,
		ModifyTime:  nowNanos,
	}, nil
}

// Deregister stops a job, or purges it when args.Purge is set. A stop needs submit-job,
// deregister-job or purge-job; a purge needs purge-job: unlike upstream, submit-job alone
// cannot purge.
func (j *Job) Deregister(args *structs.JobDeregisterRequest, reply *structs.JobDeregisterResponse) error {
	if done, err := j.srv.forward("Job.Deregister", args, reply); done {
		return err
	}
	if args.JobID == "" {
		return structs.BadRequest("missing job ID for deregistering")
	}
	if args.Namespace == "" {
		args.Namespace = structs.DefaultNamespace
	}
	aclObj, actor, err := j.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	ns := args.Namespace
	if args.Purge {
		if !aclObj.AllowNamespaceOperation(ns, acl.NamespaceCapabilityPurgeJob) {
			return structs.PermissionDenied("purge-job capability required in namespace %q", ns)
		}
	} else if !aclObj.AllowNamespaceOperation(ns, acl.NamespaceCapabilitySubmitJob) &&
		!aclObj.AllowNamespaceOperation(ns, acl.NamespaceCapabilityDeregisterJob) &&
		!aclObj.AllowNamespaceOperation(ns, acl.NamespaceCapabilityPurgeJob) {
		return structs.PermissionDenied("submit-job, deregister-job or purge-job capability required in namespace %q", ns)
	}
	if args.EvalPriority != 0 && (args.EvalPriority < structs.JobMinPriority || args.EvalPriority > structs.JobMaxPriority) {
		return structs.BadRequest("eval priority must be between [%d, %d]", structs.JobMinPriority, structs.JobMaxPriority)
	}
	if err := j.srv.checkLeader(); err != nil {
		return err
	}
	job, err := j.srv.State().JobByID(nil, ns, args.JobID)
	if err != nil {
		return err
	}
	if job == nil {
		// Unlike upstream (which answers 200 and writes an evaluation), a stop or purge of a
		// job that does not exist is a 404: a purge that removed nothing must not look like
		// one that did. A deliberate difference (shared/fixtures/README.md).
		return structs.NotFound(structs.ErrJobNotFound)
	}
	t := now()
	args.Actor = actor
	args.StopTime = t.UnixNano()
	if args.Purge {
		if args.PurgeRecordID, err = uuid.GenerateUUID(); err != nil {
			return err
		}
		args.PurgeTime = t.UnixNano()
	}
	if !job.IsPeriodic() && !job.IsParameterized() {
		if args.Eval, err = newEval(job, structs.EvalTriggerJobDeregister, args.EvalPriority, t.UnixNano()); err != nil {
			return err
		}
	}
	index, err := j.srv.raftApply(structs.JobDeregisterRequestType, args)
	if err != nil {
		return err
	}
	reply.JobModifyIndex = index
	if args.Eval != nil {
		reply.EvalID = args.Eval.ID
		reply.EvalCreateIndex = index
	}
	reply.Index = index
	j.srv.setQueryMeta(&reply.QueryMeta)
	return nil
}

// readJob authorizes a read of jobs in the request's namespace.
func (j *Job) authorizeRead(opts *structs.QueryOptions) error {
	aclObj, _, err := j.srv.resolveACL(opts.AuthToken)
	if err != nil {
		return err
	}
	if opts.Namespace == "" {
		opts.Namespace = structs.DefaultNamespace
	}
	if !aclObj.AllowNamespaceOperation(opts.Namespace, acl.NamespaceCapabilityReadJob) {
		return structs.PermissionDenied("read-job capability required in namespace %q", opts.Namespace)
	}
	return nil
}

// GetJob reads the current version of a job.
func (j *Job) GetJob(args *structs.JobSpecificRequest, reply *structs.SingleJobResponse) error {
	if done, err := j.srv.forwardRead("Job.GetJob", &args.QueryOptions, args, reply); done {
		return err
	}
	if err := j.authorizeRead(&args.QueryOptions); err != nil {
		return err
	}
	return j.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		job, err := store.JobByID(ws, args.Namespace, args.JobID)
		if err != nil {
			return 0, err
		}
		reply.Job = job
		if job != nil {
			return job.ModifyIndex, nil
		}
		return store.Index("jobs"), nil
	})
}

// List lists jobs; with namespace "*" only those in namespaces the caller may list.
func (j *Job) List(args *structs.JobListRequest, reply *structs.JobListResponse) error {
	if done, err := j.srv.forwardRead("Job.List", &args.QueryOptions, args, reply); done {
		return err
	}
	visible, err := j.srv.namespaceReader(&args.QueryOptions, acl.NamespaceCapabilityListJobs)
	if err != nil {
		return err
	}
	return j.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		jobs, err := store.Jobs(ws, args.Namespace, args.Prefix)
		if err != nil {
			return 0, err
		}
		// Paged by namespace, then ID, as upstream.
		order := paginator.Order[*structs.Job]{Key: func(j *structs.Job) paginator.Key { return paginator.ByNamespaceID(j.Namespace, j.ID) }}
		reply.Jobs, reply.NextToken, err = paginator.Page(jobs, args.QueryOptions, order,
			func(j *structs.Job) bool { return visible(j.Namespace) },
			func(j *structs.Job) (*structs.JobListStub, error) {
				summary, err := store.JobSummaryByID(ws, j.Namespace, j.ID)
				if err != nil {
					return nil, err
				}
				return j.Stub(summary, args.WithMeta), nil
			})
		if err != nil {
			return 0, err
		}
		return maxIndex(store, "jobs", "job_summary"), nil
	})
}

// Versions lists a job's stored versions, newest first, with optional diffs.
func (j *Job) Versions(args *structs.JobVersionsRequest, reply *structs.JobVersionsResponse) error {
	if done, err := j.srv.forwardRead("Job.Versions", &args.QueryOptions, args, reply); done {
		return err
	}
	if err := j.authorizeRead(&args.QueryOptions); err != nil {
		return err
	}
	return j.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		versions, err := store.JobVersionsByID(ws, args.Namespace, args.JobID)
		if err != nil {
			return 0, err
		}
		if len(versions) == 0 {
			return 0, structs.NotFound(structs.ErrJobNotFound)
		}
		reply.Versions = versions
		reply.Diffs = nil
		if args.Diffs || args.DiffVersion != nil || args.DiffTag != "" {
			reply.Diffs, err = versionDiffs(versions, args.DiffVersion, args.DiffTag)
			if err != nil {
				return 0, err
			}
		}
		return store.Index("job_version"), nil
	})
}

// versionDiffs diffs each version against the one before it, or against the chosen version.
func versionDiffs(versions []*structs.Job, diffVersion *uint64, diffTag string) ([]*structs.JobDiff, error) {
	var base *structs.Job
	switch {
	case diffTag != "":
		for _, v := range versions {
			if v.VersionTag != nil && v.VersionTag.Name == diffTag {
				base = v
			}
		}
		if base == nil {
			return nil, structs.BadRequest("tag %q not found", diffTag)
		}
	case diffVersion != nil:
		for _, v := range versions {
			if v.Version == *diffVersion {
				base = v
			}
		}
		if base == nil {
			return nil, structs.BadRequest("version %d not found", *diffVersion)
		}
	}
	var diffs []*structs.JobDiff
	for i, v := range versions {
		old := base
		if old == nil {
			if i+1 >= len(versions) {
				break
			}
			old = versions[i+1]
		}
		d, err := old.Diff(v, true)
		if err != nil {
			return nil, fmt.Errorf("diffing versions %d and %d: %w", old.Version, v.Version, err)
		}
		diffs = append(diffs, d)
	}
	return diffs, nil
}

// Summary reads a job's allocation summary.
func (j *Job) Summary(args *structs.JobSpecificRequest, reply *structs.JobSummaryResponse) error {
	if done, err := j.srv.forwardRead("Job.Summary", &args.QueryOptions, args, reply); done {
		return err
	}
	if err := j.authorizeRead(&args.QueryOptions); err != nil {
		return err
	}
	return j.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		summary, err := store.JobSummaryByID(ws, args.Namespace, args.JobID)
		if err != nil {
			return 0, err
		}
		reply.JobSummary = summary
		if summary != nil {
			return summary.ModifyIndex, nil
		}
		return store.Index("job_summary"), nil
	})
}

// Evaluations lists a job's evaluations.
func (j *Job) Evaluations(args *structs.JobSpecificRequest, reply *structs.EvalListResponse) error {
	if done, err := j.srv.forwardRead("Job.Evaluations", &args.QueryOptions, args, reply); done {
		return err
	}
	if err := j.authorizeRead(&args.QueryOptions); err != nil {
		return err
	}
	return j.srv.blockingRPCZero(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		evals, err := store.EvalsByJob(ws, args.Namespace, args.JobID)
		if err != nil {
			return 0, err
		}
		reply.Evaluations = evals
		return store.Index("evals"), nil
	})
}

// Revert registers the spec of an earlier version as a new version.
func (j *Job) Revert(args *structs.JobRevertRequest, reply *structs.JobRegisterResponse) error {
	if done, err := j.srv.forward("Job.Revert", args, reply); done {
		return err
	}
	_, actor, err := j.authorizeJobWrite(&args.WriteRequest, acl.NamespaceCapabilitySubmitJob, acl.NamespaceCapabilityRevertJob)
	if err != nil {
		return err
	}
	store := j.srv.State()
	current, err := store.JobByID(nil, args.Namespace, args.JobID)
	if err != nil {
		return err
	}
	if current == nil {
		return structs.NotFound(structs.ErrJobNotFound)
	}
	if args.EnforcePriorVersion != nil && current.Version != *args.EnforcePriorVersion {
		return structs.Conflict("Current job has version %d; enforcing version %d", current.Version, *args.EnforcePriorVersion)
	}
	if current.Version == args.JobVersion {
		return structs.BadRequest("can't revert to current version")
	}
	target, err := store.JobByIDAndVersion(nil, args.Namespace, args.JobID, args.JobVersion)
	if err != nil {
		return err
	}
	if target == nil {
		return structs.NewErrCode(404, "job %q at version %d not found", args.JobID, args.JobVersion)
	}
	job := target.Copy()
	// A revert makes a new version: the old version's tag stays where it is.
	job.VersionTag = nil
	return j.register(&structs.JobRegisterRequest{Job: job, WriteRequest: args.WriteRequest}, actor, reply)
}

// Stable marks a version of a job stable or not; it needs submit-job, as upstream.
func (j *Job) Stable(args *structs.JobStabilityRequest, reply *structs.JobStabilityResponse) error {
	if done, err := j.srv.forward("Job.Stable", args, reply); done {
		return err
	}
	_, actor, err := j.authorizeJobWrite(&args.WriteRequest, acl.NamespaceCapabilitySubmitJob)
	if err != nil {
		return err
	}
	if args.JobID == "" {
		return structs.BadRequest("missing job ID")
	}
	if err := j.srv.checkLeader(); err != nil {
		return err
	}
	args.Actor = actor
	index, err := j.srv.raftApply(structs.JobStabilityRequestType, args)
	if err != nil {
		return err
	}
	reply.JobModifyIndex = index
	reply.Index = index
	return nil
}

// TagVersion names a version (or removes a name with args.Unset).
func (j *Job) TagVersion(args *structs.JobTagRequest, reply *structs.JobTagResponse) error {
	if done, err := j.srv.forward("Job.TagVersion", args, reply); done {
		return err
	}
	_, actor, err := j.authorizeJobWrite(&args.WriteRequest, acl.NamespaceCapabilitySubmitJob, acl.NamespaceCapabilityTagJobVersion)
	if err != nil {
		return err
	}
	if args.Name == "" {
		return structs.BadRequest("missing tag name")
	}
	if len(args.Name) > 128 || strings.ContainsAny(args.Name, "/ \t\n") {
		return structs.BadRequest("invalid tag name %q: at most 128 characters, no slashes or whitespace", args.Name)
	}
	if err := j.srv.checkLeader(); err != nil {
		return err
	}
	job, err := j.srv.State().JobByID(nil, args.Namespace, args.JobID)
	if err != nil {
		return err
	}
	if job == nil {
		return structs.NotFound(structs.ErrJobNotFound)
	}
	args.Actor = actor
	if !args.Unset {
		args.Tag = &structs.JobVersionTag{Name: args.Name, Description: args.Description, TaggedTime: now().UnixNano()}
	}
	index, err := j.srv.raftApply(structs.JobVersionTagRequestType, args)
	if err != nil {
		return err
	}
	if args.Tag != nil {
		reply.Name, reply.Description, reply.TaggedTime = args.Tag.Name, args.Tag.Description, args.Tag.TaggedTime
	}
	reply.Index = index
	j.srv.setQueryMeta(&reply.QueryMeta)
	return nil
}

// AuthorizeParse checks that the caller may parse job specs in the namespace.
func (j *Job) AuthorizeParse(token, namespace string) error {
	aclObj, _, err := j.srv.resolveACL(token)
	if err != nil {
		return err
	}
	if namespace == "" {
		namespace = structs.DefaultNamespace
	}
	if !aclObj.AllowNamespaceOperation(namespace, acl.NamespaceCapabilityParseJob) &&
		!aclObj.AllowNamespaceOperation(namespace, acl.NamespaceCapabilitySubmitJob) {
		return structs.PermissionDenied("parse-job or submit-job capability required in namespace %q", namespace)
	}
	return nil
}

// authorizeJobWrite is the preamble of a job write once it reached the leader: it fills in
// the default namespace and requires any one of caps there, with a 403 naming them all
// ("submit-job or revert-job capability required in namespace ..."). It returns the caller's
// ACL and actor for what the write checks or records next.
func (j *Job) authorizeJobWrite(w *structs.WriteRequest, caps ...string) (*acl.ACL, *structs.Actor, error) {
	if w.Namespace == "" {
		w.Namespace = structs.DefaultNamespace
	}
	aclObj, actor, err := j.srv.resolveACL(w.AuthToken)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range caps {
		if aclObj.AllowNamespaceOperation(w.Namespace, c) {
			return aclObj, actor, nil
		}
	}
	return nil, nil, structs.PermissionDenied("%s capability required in namespace %q", strings.Join(caps, " or "), w.Namespace)
}
