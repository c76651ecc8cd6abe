package agent

import (
	"net/http"
	"strconv"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/jobspec"
	"github.com/nomadfork/nomad/structs"
)

// jobID is the {id} path segment. ServeMux has already unescaped it (a%2Fb is "a/b"), so
// unescaping again would corrupt IDs that contain '%'.
func jobID(r *http.Request) string { return r.PathValue("id") }

func (s *HTTPServer) jobList(w http.ResponseWriter, r *http.Request) (any, error) {
	withMeta, err := boolQuery(r, "meta")
	if err != nil {
		return nil, err
	}
	args := structs.JobListRequest{WithMeta: withMeta, QueryOptions: queryOptions(r)}
	return read(s, w, "Job.List", &args, func(reply *structs.JobListResponse) (any, error) {
		return nonNil(reply.Jobs), nil
	})
}

func (s *HTTPServer) jobsRegister(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.registerJob(w, r, "")
}

func (s *HTTPServer) jobUpdate(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.registerJob(w, r, jobID(r))
}

// registerJob decodes the wire job, fills the client library's defaults (as upstream's agent
// does, so a job registered with curl reads back like one from the CLI) and registers it.
// pathID, when set, must be the body's job ID.
func (s *HTTPServer) registerJob(w http.ResponseWriter, r *http.Request, pathID string) (any, error) {
	var body api.JobRegisterRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if body.Job == nil {
		return nil, structs.BadRequest("Job must be specified")
	}
	if pathID != "" && (body.Job.ID == nil || *body.Job.ID != pathID) {
		return nil, structs.BadRequest("Job ID does not match name")
	}
	wr := writeRequest(r)
	if body.Job.Namespace == nil || *body.Job.Namespace == "" {
		body.Job.Namespace = &wr.Namespace
	}
	if body.Job.Region == nil || *body.Job.Region == "" {
		body.Job.Region = &s.agent.config.Region
	}
	if err := canonicalizeJob(body.Job); err != nil {
		return nil, err
	}
	job := structs.JobFromAPI(body.Job)
	wr.Namespace = job.Namespace

	args := structs.JobRegisterRequest{
		Job:               job,
		Submission:        body.Submission,
		EnforceIndex:      body.EnforceIndex,
		JobModifyIndex:    body.JobModifyIndex,
		PreserveCounts:    body.PreserveCounts,
		PreserveResources: body.PreserveResources,
		PolicyOverride:    body.PolicyOverride,
		EvalPriority:      body.EvalPriority,
		WriteRequest:      wr,
	}
	return writeQueryIndexed(s, w, "Job.Register", &args, wholeReply[structs.JobRegisterResponse])
}

// canonicalizeJob runs the client library's canonicalisation. It dereferences whatever the
// submitter sent, so a shape it does not expect (a null group, say) is the submitter's
// mistake: a 400, not a crash.
func canonicalizeJob(job *api.Job) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = structs.BadRequest("Invalid job: %v", p)
		}
	}()
	for i, tg := range job.TaskGroups {
		if tg == nil {
			return structs.BadRequest("Invalid job: task group %d is null", i)
		}
		for k, task := range tg.Tasks {
			if task == nil {
				return structs.BadRequest("Invalid job: task %d of task group %d is null", k, i)
			}
		}
	}
	job.Canonicalize()
	return nil
}

func (s *HTTPServer) jobsParse(_ http.ResponseWriter, r *http.Request) (any, error) {
	var body api.JobsParseRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	q := queryOptions(r)
	if err := s.authorize(q.AuthToken, structs.ACLAuthorizeRequest{Check: structs.ACLCheckParseJob, Namespace: q.Namespace}); err != nil {
		return nil, err
	}
	if body.JobHCL == "" {
		return nil, structs.BadRequest("Job spec is empty")
	}
	vars, err := jobspec.ParseVariablesFile("variables.hcl", []byte(body.Variables))
	if err != nil {
		return nil, structs.BadRequest("Failed to parse variables: %v", err)
	}
	// Bounded by jobspec.DefaultLimits and by the request: a client that gives up stops the
	// evaluation.
	job, err := jobspec.ParseContext(r.Context(), "input.hcl", []byte(body.JobHCL), vars)
	if err != nil {
		return nil, structs.BadRequest("Failed to parse job: %v", err)
	}
	if body.Canonicalize {
		if err := canonicalizeJob(job); err != nil {
			return nil, err
		}
	}
	return job, nil
}

func (s *HTTPServer) jobRead(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.JobSpecificRequest{JobID: jobID(r), QueryOptions: queryOptions(r)}
	return read(s, w, "Job.GetJob", &args, func(reply *structs.SingleJobResponse) (any, error) {
		return found(reply.Job, structs.NotFound(structs.ErrJobNotFound))
	})
}

func (s *HTTPServer) jobDeregister(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.JobDeregisterRequest{JobID: jobID(r), WriteRequest: writeRequest(r)}
	if err := parseQuery(r, queryParam{"purge", &args.Purge}, queryParam{"global", &args.Global},
		queryParam{"no_shutdown_delay", &args.NoShutdownDelay}, queryParam{"eval_priority", &args.EvalPriority}); err != nil {
		return nil, err
	}
	return writeQueryIndexed(s, w, "Job.Deregister", &args, wholeReply[structs.JobDeregisterResponse])
}

func (s *HTTPServer) jobVersions(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.JobVersionsRequest{JobID: jobID(r), DiffTag: r.URL.Query().Get("diff_tag"), QueryOptions: queryOptions(r)}
	var err error
	if args.Diffs, err = boolQuery(r, "diffs"); err != nil {
		return nil, err
	}
	if raw := r.URL.Query().Get("diff_version"); raw != "" {
		v, err := strconv.ParseUint(raw, 10, 64)
		if err != nil {
			return nil, structs.BadRequest("Failed to parse value of %q (%v) as a uint64: %v", "diff_version", raw, err)
		}
		args.DiffVersion = &v
	}
	return read(s, w, "Job.Versions", &args, wholeReply[structs.JobVersionsResponse])
}

// tagVersionBody is api.TagVersionRequest with Version as a pointer, to tell "no version"
// (tag the latest) from version 0.
type tagVersionBody struct {
	Version     *uint64
	Latest      bool
	Description string
}

func (s *HTTPServer) jobTag(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.JobTagRequest{
		JobID:        jobID(r),
		Name:         r.PathValue("tag"),
		Unset:        r.Method == http.MethodDelete,
		WriteRequest: writeRequest(r),
	}
	if !args.Unset {
		var body tagVersionBody
		if err := decodeOptionalBody(r, &body); err != nil {
			return nil, err
		}
		// Latest applies when no particular version is named, as in the client library.
		if body.Version != nil && (*body.Version != 0 || !body.Latest) {
			args.Version = body.Version
		}
		args.Description = body.Description
	}
	return writeQueryIndexed(s, w, "Job.TagVersion", &args, wholeReply[structs.JobTagResponse])
}

func (s *HTTPServer) jobSummary(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.JobSpecificRequest{JobID: jobID(r), QueryOptions: queryOptions(r)}
	return read(s, w, "Job.Summary", &args, func(reply *structs.JobSummaryResponse) (any, error) {
		return found(reply.JobSummary, structs.NotFound(structs.ErrJobNotFound))
	})
}

func (s *HTTPServer) jobRevert(w http.ResponseWriter, r *http.Request) (any, error) {
	var body api.JobRevertRequest
	id := jobID(r)
	if err := decodeForPath(r, &body, false, id, &body.JobID, structs.BadRequest("Job ID does not match")); err != nil {
		return nil, err
	}
	args := structs.JobRevertRequest{
		JobID:               id,
		JobVersion:          body.JobVersion,
		EnforcePriorVersion: body.EnforcePriorVersion,
		WriteRequest:        writeRequest(r),
	}
	return writeQueryIndexed(s, w, "Job.Revert", &args, wholeReply[structs.JobRegisterResponse])
}

func (s *HTTPServer) jobScaleStatus(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.JobSpecificRequest{JobID: jobID(r), QueryOptions: queryOptions(r)}
	var reply structs.JobScaleStatusResponse
	if err := s.rpc.RPC("Job.ScaleStatus", &args, &reply); err != nil {
		return nil, err
	}
	// The scale status carries no query metadata of its own; a server agent reads it from
	// the jobs table, a client-only agent has no state to read it from.
	if s.srv != nil {
		s.setLocalMeta(w, s.srv.State().Index("jobs"))
	}
	return &reply, nil
}

func (s *HTTPServer) jobScale(w http.ResponseWriter, r *http.Request) (any, error) {
	var body api.ScalingRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	id := jobID(r)
	if target := body.Target["Job"]; target != "" && target != id {
		return nil, structs.BadRequest("job ID in payload did not match URL")
	}
	args := structs.JobScaleRequest{
		JobID:          id,
		Target:         body.Target,
		Count:          body.Count,
		Message:        body.Message,
		Error:          body.Error,
		Meta:           body.Meta,
		PolicyOverride: body.PolicyOverride,
		JobModifyIndex: body.JobModifyIndex,
		WriteRequest:   writeRequest(r),
	}
	return writeQueryIndexed(s, w, "Job.Scale", &args, wholeReply[structs.JobRegisterResponse])
}

func (s *HTTPServer) jobEvaluations(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.JobSpecificRequest{JobID: jobID(r), QueryOptions: queryOptions(r)}
	return read(s, w, "Job.Evaluations", &args, func(reply *structs.EvalListResponse) (any, error) {
		return nonNil(reply.Evaluations), nil
	})
}

// jobAllocations lists the job's allocations; ?all=true adds those of an earlier job with the
// same ID.
func (s *HTTPServer) jobAllocations(w http.ResponseWriter, r *http.Request) (any, error) {
	all, err := boolQuery(r, "all")
	if err != nil {
		return nil, err
	}
	args := structs.JobSpecificRequest{JobID: jobID(r), All: all, QueryOptions: queryOptions(r)}
	return read(s, w, "Alloc.ListByJob", &args, func(reply *structs.AllocListResponse) (any, error) {
		return nonNil(reply.Allocations), nil
	})
}

// setLocalMeta writes read headers for an answer built in the agent from local state.
func (s *HTTPServer) setLocalMeta(w http.ResponseWriter, index uint64) {
	setMeta(w, &structs.QueryMeta{
		Index:       index,
		KnownLeader: s.srv.Leader() != "",
		LastContact: s.srv.LastContact(),
	})
}

// nonNil makes an empty list encode as [] rather than null, as upstream's lists do.
func nonNil[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}

// jobStable marks a version stable or not; the body is upstream's JobStabilityRequest.
func (s *HTTPServer) jobStable(w http.ResponseWriter, r *http.Request) (any, error) {
	var body api.JobStabilityRequest
	id := jobID(r)
	if err := decodeForPath(r, &body, false, id, &body.JobID, structs.BadRequest("Job ID does not match")); err != nil {
		return nil, err
	}
	args := structs.JobStabilityRequest{JobID: id, JobVersion: body.JobVersion, Stable: body.Stable, WriteRequest: writeRequest(r)}
	return write(s, w, "Job.Stable", &args, wholeReply[structs.JobStabilityResponse])
}

// jobStatuses answers /v1/jobs/statuses: GET pages through every visible job; POST with
// {"Jobs":[{"ID","Namespace"}]} answers for those jobs only. include_children=true adds the
// children of periodic and parameterized jobs.
func (s *HTTPServer) jobStatuses(w http.ResponseWriter, r *http.Request) (any, error) {
	children, err := boolQuery(r, "include_children")
	if err != nil {
		return nil, err
	}
	args := structs.JobStatusesRequest{IncludeChildren: children, QueryOptions: queryOptions(r)}
	if r.Method != http.MethodGet {
		var body struct{ Jobs []structs.NamespacedID }
		if err := decodeOptionalBody(r, &body); err != nil {
			return nil, err
		}
		args.Jobs = body.Jobs
	}
	return read(s, w, "Job.Statuses", &args, func(reply *structs.JobStatusesResponse) (any, error) {
		return reply.Jobs, nil
	})
}
