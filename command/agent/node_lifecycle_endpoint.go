package agent

import (
	"net/http"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// The node lifecycle handlers (drain, eligibility, purge, evaluate) are reached through
// /v1/node/{id}/{sub} (node_endpoint.go).

// nodeDrain takes upstream's NodeUpdateDrainRequest; the node is the one of the path.
func (s *HTTPServer) nodeDrain(w http.ResponseWriter, r *http.Request) (any, error) {
	var body api.NodeUpdateDrainRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	args := structs.NodeUpdateDrainRequest{
		NodeID: r.PathValue("id"), MarkEligible: body.MarkEligible, Meta: body.Meta,
		WriteRequest: writeRequest(r),
	}
	if body.DrainSpec != nil {
		args.DrainStrategy = &api.DrainStrategy{DrainSpec: *body.DrainSpec}
	}
	return write(s, w, "Node.UpdateDrain", &args, wholeReply[structs.NodeDrainUpdateResponse])
}

// nodeEligibility takes upstream's NodeUpdateEligibilityRequest.
func (s *HTTPServer) nodeEligibility(w http.ResponseWriter, r *http.Request) (any, error) {
	var body api.NodeUpdateEligibilityRequest
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	args := structs.NodeUpdateEligibilityRequest{
		NodeID: r.PathValue("id"), Eligibility: body.Eligibility, WriteRequest: writeRequest(r),
	}
	return write(s, w, "Node.UpdateEligibility", &args, wholeReply[structs.NodeDrainUpdateResponse])
}

func (s *HTTPServer) nodePurge(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.NodeDeregisterRequest{NodeIDs: []string{r.PathValue("id")}, WriteRequest: writeRequest(r)}
	return read(s, w, "Node.Deregister", &args, func(reply *structs.NodeUpdateResponse) (any, error) {
		return nodeUpdateAnswer(reply), nil
	})
}

func (s *HTTPServer) nodeEvaluate(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.NodeEvaluateRequest{NodeID: r.PathValue("id"), WriteRequest: writeRequest(r)}
	return read(s, w, "Node.Evaluate", &args, func(reply *structs.NodeUpdateResponse) (any, error) {
		return nodeUpdateAnswer(reply), nil
	})
}

// nodeUpdateAnswer is the body of a purge or forced evaluation: upstream's NodeUpdateResponse
// fields an operator's call has (no heartbeat TTL: that is the client's).
func nodeUpdateAnswer(reply *structs.NodeUpdateResponse) any {
	return &struct {
		EvalIDs         []string
		EvalCreateIndex uint64
		NodeModifyIndex uint64
		Index           uint64
	}{nonNil(reply.EvalIDs), reply.EvalCreateIndex, reply.NodeModifyIndex, reply.Index}
}
