package agent

import (
	"net/http"

	"github.com/nomadfork/nomad/structs"
)

func (s *HTTPServer) registerNodeRoutes(mux *http.ServeMux) {
	s.handle(mux, "/v1/nodes", methods{"GET": s.nodeList})
	s.handle(mux, "/v1/node/{id}", methods{"GET": s.nodeRead})
	s.handle(mux, "/v1/node/{id}/allocations", methods{"GET": s.nodeAllocations})
}

// nodeList lists nodes; ?os=true adds their attributes and ?resources=true their
// resources, as upstream.
func (s *HTTPServer) nodeList(w http.ResponseWriter, r *http.Request) (any, error) {
	withOS, err := boolQuery(r, "os")
	if err != nil {
		return nil, err
	}
	withResources, err := boolQuery(r, "resources")
	if err != nil {
		return nil, err
	}
	args := structs.NodeListRequest{WithOS: withOS, WithResources: withResources, QueryOptions: queryOptions(r)}
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
