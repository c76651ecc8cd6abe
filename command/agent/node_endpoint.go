package agent

import (
	"net/http"

	"github.com/nomadfork/nomad/structs"
)

func (s *HTTPServer) registerNodeRoutes(mux *http.ServeMux) {
	s.handle(mux, "/v1/nodes", methods{"GET": s.nodeList})
	s.handle(mux, "/v1/node/{id}", methods{"GET": s.nodeRead})
	// One wildcard for the node's sub-resources, not /v1/node/{id}/allocations: that pattern
	// and /v1/node/pool/{name} would both match /v1/node/pool/allocations with neither more
	// specific, which ServeMux refuses. /v1/node/pool/{name} is more specific than this one,
	// so pool paths reach the pool handlers (TestRoutes_ReachTheirHandlers).
	s.handle(mux, "/v1/node/{id}/{sub}", methods{"GET": s.nodeSubresource})
}

// nodeSubresource serves GET /v1/node/:id/allocations; any other sub-path is unknown.
func (s *HTTPServer) nodeSubresource(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.PathValue("sub") != "allocations" {
		return nil, structs.NewErrCode(http.StatusNotFound, "Invalid URL path %q", r.URL.Path)
	}
	return s.nodeAllocations(w, r)
}

// nodeList lists nodes; ?os=true adds their attributes, as upstream.
func (s *HTTPServer) nodeList(w http.ResponseWriter, r *http.Request) (any, error) {
	withOS, err := boolQuery(r, "os")
	if err != nil {
		return nil, err
	}
	args := structs.NodeListRequest{WithOS: withOS, QueryOptions: queryOptions(r)}
	var reply structs.NodeListResponse
	if err := s.srv.Endpoints.Node.List(&args, &reply); err != nil {
		return nil, err
	}
	setMeta(w, &reply.QueryMeta)
	return nonNil(reply.Nodes), nil
}

func (s *HTTPServer) nodeRead(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.NodeSpecificRequest{NodeID: r.PathValue("id"), QueryOptions: queryOptions(r)}
	var reply structs.SingleNodeResponse
	if err := s.srv.Endpoints.Node.GetNode(&args, &reply); err != nil {
		return nil, err
	}
	setMeta(w, &reply.QueryMeta)
	if reply.Node == nil {
		return nil, structs.NotFound(structs.ErrNodeNotFound)
	}
	return reply.Node, nil
}

func (s *HTTPServer) nodeAllocations(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.NodeSpecificRequest{NodeID: r.PathValue("id"), QueryOptions: queryOptions(r)}
	var reply structs.NodeAllocsResponse
	if err := s.srv.Endpoints.Node.GetAllocs(&args, &reply); err != nil {
		return nil, err
	}
	setMeta(w, &reply.QueryMeta)
	return nonNil(reply.Allocs), nil
}
