package agent

import (
	"net/http"
	"strconv"

	"github.com/nomadfork/nomad/structs"
)

// jobSubmission answers the source a version (?version=N, required) of the job was registered
// from.
func (s *HTTPServer) jobSubmission(w http.ResponseWriter, r *http.Request) (any, error) {
	raw := r.URL.Query().Get("version")
	if raw == "" {
		return nil, structs.BadRequest("missing version: the version parameter names the job version")
	}
	version, err := strconv.ParseUint(raw, 10, 64)
	if err != nil {
		return nil, structs.BadRequest("Failed to parse value of %q (%v) as a uint64: %v", "version", raw, err)
	}
	args := structs.JobSubmissionRequest{JobID: jobID(r), Version: version, QueryOptions: queryOptions(r)}
	return read(s, w, "Job.GetJobSubmission", &args, func(reply *structs.JobSubmissionResponse) (any, error) {
		return found(reply.Submission, structs.NotFound(structs.ErrJobSourceNotFound))
	})
}
