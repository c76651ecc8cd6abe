package agent

import (
	"net/http"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// jobDispatch creates a child of a parameterized job. The body is an api.JobDispatchRequest
// (payload base64 in JSON); the idempotency token comes from the idempotency_token query
// parameter, where the official client puts it.
func (s *HTTPServer) jobDispatch(w http.ResponseWriter, r *http.Request) (any, error) {
	var body api.JobDispatchRequest
	id := jobID(r)
	if err := decodeForPath(r, &body, true, id, &body.JobID, structs.BadRequest("Job ID does not match")); err != nil {
		return nil, err
	}
	args := structs.JobDispatchRequest{
		JobID: id, Payload: body.Payload, Meta: body.Meta, IdPrefixTemplate: body.IdPrefixTemplate,
		Priority: body.Priority, IdempotencyToken: r.URL.Query().Get("idempotency_token"),
		WriteRequest: writeRequest(r),
	}
	return write(s, w, "Job.Dispatch", &args, wholeReply[structs.JobDispatchResponse])
}
