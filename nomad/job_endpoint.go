package nomad

import (
	"fmt"
	"strings"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/go-uuid"
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/nomad/paginator"
	"github.com/nomadfork/nomad/nomad/worker"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// Job is the job RPC endpoint.
type Job struct {
	srv *Server
}

// jobRegister creates or updates a job and its evaluation in one Raft entry.
var jobRegister = write("Job.Register", spec[structs.JobRegisterRequest, structs.JobRegisterResponse]{
	Prepare: func(req *structs.JobRegisterRequest) error {
		if err := jobPrepareSubmitted(req.Job); err != nil {
			return err
		}
		if req.Namespace == "" {
			req.Namespace = req.Job.Namespace
		}
		return nil
	},
	Authorize: jobRegisterRule,
	Validate: func(req *structs.JobRegisterRequest) error {
		if req.Job == nil {
			return structs.BadRequest("Job must be specified")
		}
		// ParentID, Dispatched and the launch records are the server's to set.
		if err := checkSubmittedRegister(req); err != nil {
			return err
		}
		return validateRegister(req)
	},
	Serve: func(c *rpcCall, req *structs.JobRegisterRequest, reply *structs.JobRegisterResponse) error {
		return c.srv.Endpoints.Job.applyRegister(req, c.actor, reply)
	},
})

// Register creates or updates a job and its evaluation in one Raft entry.
func (j *Job) Register(args *structs.JobRegisterRequest, reply *structs.JobRegisterResponse) error {
	return jobRegister.Call(j.srv, args, reply)
}

// register validates and applies a register of a canonical job whose caller is already
// authorized, for callers outside the Job rows (PurgeHistory.Restore) that check their own
// capability and read the job back from state.
func (j *Job) register(args *structs.JobRegisterRequest, actor *structs.Actor, reply *structs.JobRegisterResponse) error {
	if err := validateRegister(args); err != nil {
		return err
	}
	if err := j.srv.checkLeader(); err != nil {
		return err
	}
	return j.applyRegister(args, actor, reply)
}

// validateRegister refuses a register request whose job (or evaluation priority) is invalid.
func validateRegister(args *structs.JobRegisterRequest) error {
	if err := args.Job.Validate(); err != nil {
		return structs.BadRequest("%s", err.Error())
	}
	return jobValidEvalPriority(args.EvalPriority)
}

// applyRegister checks a valid register of an authorized caller against the state and applies
// it, on the leader.
func (j *Job) applyRegister(args *structs.JobRegisterRequest, actor *structs.Actor, reply *structs.JobRegisterResponse) error {
	ns := args.Job.Namespace
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
	if err := checkRegisterCapabilities(namespace, args, existing); err != nil {
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
	if err := j.srv.checkJobTotalSize(store, existing, args.Job); err != nil {
		return err
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
	// Who submitted is the server's record, never the submitter's claim (with ACLs off there
	// is no token to record).
	args.Job.NomadTokenID = ""
	if actor != nil {
		args.Job.NomadTokenID = actor.AccessorID
	}
	recordSubmitter(args, actor)
	if err := j.srv.assignScalingPolicyIDs(args.Job); err != nil {
		return err
	}
	t := now()
	args.Job.SubmitTime = t.UnixNano()
	args.Actor = actor
	// The evaluation is the leader's to make: a periodic or parameterized job gets none, and
	// one sent with the request must not reach the log.
	args.Eval = nil
	if !args.Job.IsPeriodic() && !args.Job.IsParameterized() {
		args.Eval, err = worker.NewEval(args.Job, structs.EvalTriggerJobRegister, args.EvalPriority, t.UnixNano())
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
	reply.Warnings = strings.Join(args.Job.Warnings(), "\n")
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

// jobDeregister stops a job, or purges it when Purge is set.
var jobDeregister = write("Job.Deregister", spec[structs.JobDeregisterRequest, structs.JobDeregisterResponse]{
	Prepare:   jobWriteDefaultNamespace(func(req *structs.JobDeregisterRequest) *structs.WriteRequest { return &req.WriteRequest }),
	Authorize: jobDeregisterRule,
	Validate: func(req *structs.JobDeregisterRequest) error {
		if req.JobID == "" {
			return structs.BadRequest("missing job ID for deregistering")
		}
		return jobValidEvalPriority(req.EvalPriority)
	},
	Serve: func(c *rpcCall, req *structs.JobDeregisterRequest, reply *structs.JobDeregisterResponse) error {
		job, err := c.srv.State().JobByID(nil, req.Namespace, req.JobID)
		if err != nil {
			return err
		}
		if job == nil {
			// A purge that removed nothing must not look like one that did, so it is a 404
			// (upstream: 200). A stop answers as upstream does, 200 with no evaluation and
			// index 0: clients written against upstream treat stopping an absent job as done.
			// Nothing is written either way (shared/fixtures/README.md).
			if req.Purge {
				return structs.NotFound(structs.ErrJobNotFound)
			}
			return nil
		}
		if req.Purge {
			// Refused before anything is written, for every caller: protection is lifted
			// with protect-job, never by a purge (the FSM refuses too, should a protection
			// land between this read and the apply).
			if p, err := c.srv.State().JobProtected(req.Namespace, req.JobID); err != nil {
				return err
			} else if p != nil {
				return p.PurgeRefusal()
			}
		}
		t := now()
		req.Actor = c.actor
		req.StopTime = t.UnixNano()
		if req.Purge {
			if req.PurgeRecordID, err = uuid.GenerateUUID(); err != nil {
				return err
			}
			req.PurgeTime = t.UnixNano()
		}
		if !job.IsPeriodic() && !job.IsParameterized() {
			if req.Eval, err = worker.NewEval(job, structs.EvalTriggerJobDeregister, req.EvalPriority, t.UnixNano()); err != nil {
				return err
			}
		}
		index, err := c.srv.raftApply(structs.JobDeregisterRequestType, req)
		if err != nil {
			return err
		}
		reply.JobModifyIndex = index
		if req.Eval != nil {
			reply.EvalID = req.Eval.ID
			reply.EvalCreateIndex = index
		}
		reply.Index = index
		c.srv.setQueryMeta(&reply.QueryMeta)
		return nil
	},
})

// Deregister stops a job, or purges it when args.Purge is set. A stop needs submit-job,
// deregister-job or purge-job; a purge needs purge-job: unlike upstream, submit-job alone
// cannot purge.
func (j *Job) Deregister(args *structs.JobDeregisterRequest, reply *structs.JobDeregisterResponse) error {
	return jobDeregister.Call(j.srv, args, reply)
}

// authorizeRead authorizes a read of jobs in the request's namespace, for the reads of other
// endpoints that answer with a job's objects (deployments, allocations, services).
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

var jobGet = read("Job.GetJob", spec[structs.JobSpecificRequest, structs.SingleJobResponse]{
	Prepare:   jobQueryDefaultNamespace[structs.JobSpecificRequest],
	Authorize: jobReadRule[structs.JobSpecificRequest],
	Serve: func(c *rpcCall, req *structs.JobSpecificRequest, reply *structs.SingleJobResponse) error {
		return blockingGet(c, &req.QueryOptions, &reply.QueryMeta,
			func(ws memdb.WatchSet, store *state.StateStore) (*structs.Job, error) {
				return store.JobByID(ws, req.Namespace, req.JobID)
			},
			func(job *structs.Job) { reply.Job = job }, func(job *structs.Job) uint64 { return job.ModifyIndex }, "jobs")
	},
})

// GetJob reads the current version of a job.
func (j *Job) GetJob(args *structs.JobSpecificRequest, reply *structs.SingleJobResponse) error {
	return jobGet.Call(j.srv, args, reply)
}

// jobList lists jobs; with namespace "*" only those in namespaces the caller may list.
var jobList = read("Job.List", spec[structs.JobListRequest, structs.JobListResponse]{
	Prepare:   jobQueryDefaultNamespace[structs.JobListRequest],
	Authorize: jobListingRule[structs.JobListRequest](acl.NamespaceCapabilityListJobs),
	Serve: func(c *rpcCall, req *structs.JobListRequest, reply *structs.JobListResponse) error {
		return c.srv.blockingRPC(&req.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			jobs, err := store.Jobs(ws, req.Namespace, req.Prefix)
			if err != nil {
				return 0, err
			}
			// Paged by namespace, then ID, as upstream.
			order := paginator.Order[*structs.Job]{Key: func(j *structs.Job) paginator.Key { return paginator.ByNamespaceID(j.Namespace, j.ID) }}
			reply.Jobs, reply.NextToken, err = paginator.Page(jobs, req.QueryOptions, order,
				func(j *structs.Job) bool {
					return jobVisibleIn(c, &req.QueryOptions, acl.NamespaceCapabilityListJobs, j.Namespace)
				},
				func(j *structs.Job) (*structs.JobListStub, error) {
					summary, err := store.JobSummaryByID(ws, j.Namespace, j.ID)
					if err != nil {
						return nil, err
					}
					return j.Stub(summary, req.WithMeta), nil
				})
			if err != nil {
				return 0, err
			}
			return maxIndex(store, "jobs", "job_summary"), nil
		})
	},
})

// List lists jobs; with namespace "*" only those in namespaces the caller may list.
func (j *Job) List(args *structs.JobListRequest, reply *structs.JobListResponse) error {
	return jobList.Call(j.srv, args, reply)
}

var jobVersions = read("Job.Versions", spec[structs.JobVersionsRequest, structs.JobVersionsResponse]{
	Prepare:   jobQueryDefaultNamespace[structs.JobVersionsRequest],
	Authorize: jobReadRule[structs.JobVersionsRequest],
	Serve: func(c *rpcCall, req *structs.JobVersionsRequest, reply *structs.JobVersionsResponse) error {
		return c.srv.blockingRPC(&req.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			versions, err := store.JobVersionsByID(ws, req.Namespace, req.JobID)
			if err != nil {
				return 0, err
			}
			if len(versions) == 0 {
				return 0, structs.NotFound(structs.ErrJobNotFound)
			}
			reply.Versions = versions
			reply.Diffs = nil
			if req.Diffs || req.DiffVersion != nil || req.DiffTag != "" {
				reply.Diffs, err = versionDiffs(versions, req.DiffVersion, req.DiffTag)
				if err != nil {
					return 0, err
				}
			}
			return store.Index("job_version"), nil
		})
	},
})

// Versions lists a job's stored versions, newest first, with optional diffs.
func (j *Job) Versions(args *structs.JobVersionsRequest, reply *structs.JobVersionsResponse) error {
	return jobVersions.Call(j.srv, args, reply)
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

var jobSummary = read("Job.Summary", spec[structs.JobSpecificRequest, structs.JobSummaryResponse]{
	Prepare:   jobQueryDefaultNamespace[structs.JobSpecificRequest],
	Authorize: jobReadRule[structs.JobSpecificRequest],
	Serve: func(c *rpcCall, req *structs.JobSpecificRequest, reply *structs.JobSummaryResponse) error {
		return blockingGet(c, &req.QueryOptions, &reply.QueryMeta,
			func(ws memdb.WatchSet, store *state.StateStore) (*structs.JobSummary, error) {
				return store.JobSummaryByID(ws, req.Namespace, req.JobID)
			},
			func(summary *structs.JobSummary) { reply.JobSummary = summary }, func(summary *structs.JobSummary) uint64 { return summary.ModifyIndex }, "job_summary")
	},
})

// Summary reads a job's allocation summary.
func (j *Job) Summary(args *structs.JobSpecificRequest, reply *structs.JobSummaryResponse) error {
	return jobSummary.Call(j.srv, args, reply)
}

var jobEvaluations = read("Job.Evaluations", spec[structs.JobSpecificRequest, structs.EvalListResponse]{
	Prepare:   jobQueryDefaultNamespace[structs.JobSpecificRequest],
	Authorize: jobReadRule[structs.JobSpecificRequest],
	Serve: func(c *rpcCall, req *structs.JobSpecificRequest, reply *structs.EvalListResponse) error {
		return c.srv.blockingRPCZero(&req.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			evals, err := store.EvalsByJob(ws, req.Namespace, req.JobID)
			if err != nil {
				return 0, err
			}
			reply.Evaluations = evals
			return store.Index("evals"), nil
		})
	},
})

// Evaluations lists a job's evaluations.
func (j *Job) Evaluations(args *structs.JobSpecificRequest, reply *structs.EvalListResponse) error {
	return jobEvaluations.Call(j.srv, args, reply)
}

func jobRevertWrite(req *structs.JobRevertRequest) *structs.WriteRequest { return &req.WriteRequest }

// jobRevert registers the spec of an earlier version as a new version.
var jobRevert = write("Job.Revert", spec[structs.JobRevertRequest, structs.JobRegisterResponse]{
	Prepare:   jobWriteDefaultNamespace(jobRevertWrite),
	Authorize: jobWriteRule(jobRevertWrite, acl.NamespaceCapabilitySubmitJob, acl.NamespaceCapabilityRevertJob),
	Serve: func(c *rpcCall, req *structs.JobRevertRequest, reply *structs.JobRegisterResponse) error {
		store := c.srv.State()
		current, err := store.JobByID(nil, req.Namespace, req.JobID)
		if err != nil {
			return err
		}
		if current == nil {
			return structs.NotFound(structs.ErrJobNotFound)
		}
		if req.EnforcePriorVersion != nil && current.Version != *req.EnforcePriorVersion {
			return structs.Conflict("Current job has version %d; enforcing version %d", current.Version, *req.EnforcePriorVersion)
		}
		if current.Version == req.JobVersion {
			return structs.BadRequest("can't revert to current version")
		}
		target, err := store.JobByIDAndVersion(nil, req.Namespace, req.JobID, req.JobVersion)
		if err != nil {
			return err
		}
		if target == nil {
			return structs.NewErrCode(404, "job %q at version %d not found", req.JobID, req.JobVersion)
		}
		job := target.Copy()
		// A revert makes a new version: the old version's tag stays where it is.
		job.VersionTag = nil
		keepServerOwned(job, current)
		// The version brought back may carry identities whose rights the reverter lacks.
		if err := c.srv.checkJobIdentity(c.acl, job); err != nil {
			return err
		}
		register := &structs.JobRegisterRequest{Job: job, WriteRequest: req.WriteRequest}
		if err := validateRegister(register); err != nil {
			return err
		}
		return c.srv.Endpoints.Job.applyRegister(register, c.actor, reply)
	},
})

// Revert registers the spec of an earlier version as a new version.
func (j *Job) Revert(args *structs.JobRevertRequest, reply *structs.JobRegisterResponse) error {
	return jobRevert.Call(j.srv, args, reply)
}

func jobStableWrite(req *structs.JobStabilityRequest) *structs.WriteRequest { return &req.WriteRequest }

// jobStable marks a version of a job stable or not; it needs submit-job, as upstream.
var jobStable = write("Job.Stable", spec[structs.JobStabilityRequest, structs.JobStabilityResponse]{
	Prepare:   jobWriteDefaultNamespace(jobStableWrite),
	Authorize: jobWriteRule(jobStableWrite, acl.NamespaceCapabilitySubmitJob),
	Validate: func(req *structs.JobStabilityRequest) error {
		if req.JobID == "" {
			return structs.BadRequest("missing job ID")
		}
		return nil
	},
	Serve: func(c *rpcCall, req *structs.JobStabilityRequest, reply *structs.JobStabilityResponse) error {
		req.Actor = c.actor
		index, err := c.srv.raftApply(structs.JobStabilityRequestType, req)
		if err != nil {
			return err
		}
		reply.JobModifyIndex = index
		reply.Index = index
		return nil
	},
})

// Stable marks a version of a job stable or not; it needs submit-job, as upstream.
func (j *Job) Stable(args *structs.JobStabilityRequest, reply *structs.JobStabilityResponse) error {
	return jobStable.Call(j.srv, args, reply)
}

// jobTagVersion names a version (or removes a name with Unset); jobTagVersionRule says who may.
var jobTagVersion = write("Job.TagVersion", spec[structs.JobTagRequest, structs.JobTagResponse]{
	Prepare:   jobWriteDefaultNamespace(func(req *structs.JobTagRequest) *structs.WriteRequest { return &req.WriteRequest }),
	Authorize: jobTagVersionRule,
	Validate: func(req *structs.JobTagRequest) error {
		if req.Name == "" {
			return structs.BadRequest("missing tag name")
		}
		if len(req.Name) > 128 || strings.ContainsAny(req.Name, "/ \t\n") {
			return structs.BadRequest("invalid tag name %q: at most 128 characters, no slashes or whitespace", req.Name)
		}
		// A tag is stored on its version and keeps it past the version limit, so its text is
		// bounded like the rest of what a job keeps.
		if len(req.Description) > structs.JobVersionTagMaxDescription {
			return structs.BadRequest("tag description: at most %d bytes, got %d", structs.JobVersionTagMaxDescription, len(req.Description))
		}
		return nil
	},
	Serve: func(c *rpcCall, req *structs.JobTagRequest, reply *structs.JobTagResponse) error {
		job, err := c.srv.State().JobByID(nil, req.Namespace, req.JobID)
		if err != nil {
			return err
		}
		if job == nil {
			return structs.NotFound(structs.ErrJobNotFound)
		}
		if !req.Unset {
			if err := jobTagReplaceRule(c, req, job); err != nil {
				return err
			}
		}
		req.Actor = c.actor
		req.Tag = nil
		if !req.Unset {
			req.Tag = &structs.JobVersionTag{Name: req.Name, Description: req.Description, TaggedTime: now().UnixNano()}
		}
		index, err := c.srv.raftApply(structs.JobVersionTagRequestType, req)
		if err != nil {
			return err
		}
		if req.Tag != nil {
			reply.Name, reply.Description, reply.TaggedTime = req.Tag.Name, req.Tag.Description, req.Tag.TaggedTime
		}
		reply.Index = index
		c.srv.setQueryMeta(&reply.QueryMeta)
		return nil
	},
})

// jobTagReplaceRule: a version carries one tag, so naming a version that already carries
// another name removes that name, which is an untag (jobTagVersionRule) and needs purge-job
// too; otherwise a tag an operator set could be renamed away with submit-job, unpublished.
// The same name again (a new description) removes nothing.
func jobTagReplaceRule(c *rpcCall, req *structs.JobTagRequest, current *structs.Job) error {
	target := current
	if req.Version != nil && *req.Version != current.Version {
		v, err := c.srv.State().JobByIDAndVersion(nil, req.Namespace, req.JobID, *req.Version)
		if err != nil || v == nil {
			// A missing version is the state store's 404.
			return err
		}
		target = v
	}
	if target.VersionTag == nil || target.VersionTag.Name == req.Name {
		return nil
	}
	if err := jobAnyCapIn(c, req.Namespace, acl.NamespaceCapabilityPurgeJob); err != nil {
		return structs.PermissionDenied("purge-job capability required in namespace %q to replace tag %q of version %d",
			jobNamespaceOrDefault(req.Namespace), target.VersionTag.Name, target.Version)
	}
	return nil
}

// TagVersion names a version (or removes a name with args.Unset). Naming needs submit-job or
// tag-job-version, as upstream; removing a name needs purge-job.
func (j *Job) TagVersion(args *structs.JobTagRequest, reply *structs.JobTagResponse) error {
	return jobTagVersion.Call(j.srv, args, reply)
}
