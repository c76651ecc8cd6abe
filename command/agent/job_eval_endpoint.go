package agent

import (
	"net/http"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// jobEvaluate creates a new evaluation of the job; the body (optional) is a
// JobEvaluateRequest.
func (s *HTTPServer) jobEvaluate(w http.ResponseWriter, r *http.Request) (any, error) {
	var body api.JobEvaluateRequest
	id := jobID(r)
	if err := decodeForPath(r, &body, true, id, &body.JobID, structs.BadRequest("Job ID does not match")); err != nil {
		return nil, err
	}
	args := structs.JobEvaluateRequest{JobID: id, EvalOptions: body.EvalOptions, WriteRequest: writeRequest(r)}
	return writeQueryIndexed(s, w, "Job.Evaluate", &args, wholeReply[structs.JobRegisterResponse])
}

// jobPeriodicForce launches a child of the periodic job now.
func (s *HTTPServer) jobPeriodicForce(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.JobPeriodicForceRequest{JobID: jobID(r), WriteRequest: writeRequest(r)}
	return write(s, w, "Job.PeriodicForce", &args, wholeReply[structs.PeriodicForceResponse])
}
