package agent

import (
	"net/http"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

func (s *HTTPServer) deploymentList(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.DeploymentListRequest{QueryOptions: queryOptions(r)}
	return read(s, w, "Deployment.List", &args, func(reply *structs.DeploymentListResponse) (any, error) {
		return nonNil(reply.Deployments), nil
	})
}

func (s *HTTPServer) deploymentRead(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.DeploymentSpecificRequest{DeploymentID: r.PathValue("id"), QueryOptions: queryOptions(r)}
	return read(s, w, "Deployment.GetDeployment", &args, func(reply *structs.SingleDeploymentResponse) (any, error) {
		return found(reply.Deployment, structs.NotFound(structs.ErrDeploymentNotFound))
	})
}

func (s *HTTPServer) deploymentAllocations(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.DeploymentSpecificRequest{DeploymentID: r.PathValue("id"), QueryOptions: queryOptions(r)}
	return read(s, w, "Deployment.Allocations", &args, func(reply *structs.AllocListResponse) (any, error) {
		return nonNil(reply.Allocations), nil
	})
}

var errDeploymentIDMismatch = structs.BadRequest("Deployment ID does not match")

func (s *HTTPServer) deploymentFail(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.DeploymentFailRequest{DeploymentID: r.PathValue("id"), WriteRequest: writeRequest(r)}
	return write(s, w, "Deployment.Fail", &args, wholeReply[structs.DeploymentUpdateResponse])
}

func (s *HTTPServer) deploymentPause(w http.ResponseWriter, r *http.Request) (any, error) {
	var body api.DeploymentPauseRequest
	id := r.PathValue("id")
	if err := decodeForPath(r, &body, false, id, &body.DeploymentID, errDeploymentIDMismatch); err != nil {
		return nil, err
	}
	args := structs.DeploymentPauseRequest{DeploymentID: id, Pause: body.Pause, WriteRequest: writeRequest(r)}
	return write(s, w, "Deployment.Pause", &args, wholeReply[structs.DeploymentUpdateResponse])
}

func (s *HTTPServer) deploymentPromote(w http.ResponseWriter, r *http.Request) (any, error) {
	var body api.DeploymentPromoteRequest
	id := r.PathValue("id")
	if err := decodeForPath(r, &body, false, id, &body.DeploymentID, errDeploymentIDMismatch); err != nil {
		return nil, err
	}
	args := structs.DeploymentPromoteRequest{DeploymentID: id, All: body.All, Groups: body.Groups, WriteRequest: writeRequest(r)}
	return write(s, w, "Deployment.Promote", &args, wholeReply[structs.DeploymentUpdateResponse])
}

func (s *HTTPServer) deploymentAllocHealth(w http.ResponseWriter, r *http.Request) (any, error) {
	var body api.DeploymentAllocHealthRequest
	id := r.PathValue("id")
	if err := decodeForPath(r, &body, false, id, &body.DeploymentID, errDeploymentIDMismatch); err != nil {
		return nil, err
	}
	args := structs.DeploymentAllocHealthRequest{DeploymentID: id, HealthyAllocationIDs: body.HealthyAllocationIDs,
		UnhealthyAllocationIDs: body.UnhealthyAllocationIDs, WriteRequest: writeRequest(r)}
	return write(s, w, "Deployment.SetAllocHealth", &args, wholeReply[structs.DeploymentUpdateResponse])
}

// deploymentUnblock answers as upstream does for a deployment of one region: only a
// multiregion deployment is ever blocked, and this server runs none.
func (s *HTTPServer) deploymentUnblock(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.DeploymentFailRequest{DeploymentID: r.PathValue("id"), WriteRequest: writeRequest(r)}
	return write(s, w, "Deployment.Unblock", &args, wholeReply[structs.DeploymentUpdateResponse])
}

// jobDeployment reads the job's newest deployment; null when it has none.
func (s *HTTPServer) jobDeployment(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.JobSpecificRequest{JobID: jobID(r), QueryOptions: queryOptions(r)}
	return read(s, w, "Deployment.LatestByJob", &args, func(reply *structs.SingleDeploymentResponse) (any, error) {
		return reply.Deployment, nil
	})
}

// jobDeployments lists the job's deployments, newest first; ?all=true adds those of earlier
// jobs of the same ID.
func (s *HTTPServer) jobDeployments(w http.ResponseWriter, r *http.Request) (any, error) {
	all, err := boolQuery(r, "all")
	if err != nil {
		return nil, err
	}
	args := structs.JobSpecificRequest{JobID: jobID(r), All: all, QueryOptions: queryOptions(r)}
	return read(s, w, "Deployment.ByJob", &args, func(reply *structs.DeploymentListResponse) (any, error) {
		return nonNil(reply.Deployments), nil
	})
}

// jobPromote promotes the canaries of the job's newest deployment (ours: upstream's CLI finds
// the deployment itself and calls /v1/deployment/promote). The body is upstream's
// DeploymentPromoteRequest without the ID; no groups named promotes them all.
func (s *HTTPServer) jobPromote(w http.ResponseWriter, r *http.Request) (any, error) {
	var body api.DeploymentPromoteRequest
	if err := decodeOptionalBody(r, &body); err != nil {
		return nil, err
	}
	args := structs.JobPromoteRequest{JobID: jobID(r), All: body.All || len(body.Groups) == 0, Groups: body.Groups,
		WriteRequest: writeRequest(r)}
	return write(s, w, "Deployment.PromoteJob", &args, wholeReply[structs.DeploymentUpdateResponse])
}
