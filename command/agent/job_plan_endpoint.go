package agent

import (
	"net/http"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// serverJob turns a job from a request body into the stored form, as registerJob does: the
// request's namespace and the agent's region fill what the job leaves empty, then the client
// library's defaults. It returns the write request with the job's namespace.
func (s *HTTPServer) serverJob(r *http.Request, in *api.Job) (*structs.Job, structs.WriteRequest, error) {
	wr := writeRequest(r)
	if in == nil {
		return nil, wr, structs.BadRequest("Job must be specified")
	}
	if in.Namespace == nil || *in.Namespace == "" {
		in.Namespace = &wr.Namespace
	}
	if in.Region == nil || *in.Region == "" {
		in.Region = &s.agent.config.Region
	}
	if err := canonicalizeJob(in); err != nil {
		return nil, wr, err
	}
	job := structs.JobFromAPI(in)
	wr.Namespace = job.Namespace
	return job, wr, nil
}

// jobPlan is a dry run of registering the body's job: what the scheduler would do, and with
// "Diff": true the difference from the stored job.
func (s *HTTPServer) jobPlan(w http.ResponseWriter, r *http.Request) (any, error) {
	var body api.JobPlanRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	job, wr, err := s.serverJob(r, body.Job)
	if err != nil {
		return nil, err
	}
	if job.ID != jobID(r) {
		return nil, structs.BadRequest("Job ID does not match")
	}
	args := structs.JobPlanRequest{Job: job, Diff: body.Diff, PolicyOverride: body.PolicyOverride, WriteRequest: wr}
	return write(s, w, "Job.Plan", &args, wholeReply[structs.JobPlanResponse])
}

// jobValidate reports every problem a registration would find in the body's job.
func (s *HTTPServer) jobValidate(_ http.ResponseWriter, r *http.Request) (any, error) {
	var body api.JobValidateRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	job, wr, err := s.serverJob(r, body.Job)
	if err != nil {
		return nil, err
	}
	args := structs.JobValidateRequest{Job: job, WriteRequest: wr}
	var reply structs.JobValidateResponse
	if err := s.rpc.RPC("Job.Validate", &args, &reply); err != nil {
		return nil, err
	}
	return reply, nil
}
