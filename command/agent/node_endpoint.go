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
	// One pattern for every /v1/node/:id/<sub>: Go's mux refuses /v1/node/{id}/drain beside
	// /v1/node/pool/{name} (neither is more specific), so the subresource picks the handler.
	s.handle(mux, "/v1/node/{id}/{sub}", methods{"GET": s.nodeSubresource, "PUT": s.nodeSubresource, "POST": s.nodeSubresource})
}

// nodeSubresource serves GET /v1/node/:id/allocations; any other sub-path is unknown.
func (s *HTTPServer) nodeSubresource(w http.ResponseWriter, r *http.Request) (any, error) {
	var m methods
	switch r.PathValue("sub") {
	case "allocations":
		m = methods{"GET": s.nodeAllocations}
	case "drain":
		m = methods{"PUT": s.nodeDrain, "POST": s.nodeDrain}
	case "eligibility":
		m = methods{"PUT": s.nodeEligibility, "POST": s.nodeEligibility}
	case "purge":
		m = methods{"PUT": s.nodePurge, "POST": s.nodePurge}
	case "evaluate":
		m = methods{"PUT": s.nodeEvaluate, "POST": s.nodeEvaluate}
	default:
		return nil, structs.NewErrCode(http.StatusNotFound, "Invalid URL path %q", r.URL.Path)
	}
	fn, ok := m[r.Method]
	if !ok {
		return nil, errInvalidMethod
	}
	return fn(w, r)
}

// nodeList lists nodes; ?os=true adds their attributes and ?resources=true their resources,
// as upstream.
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
	return read(s, w, "Node.List", &args, func(reply *structs.NodeListResponse) (any, error) {
		return nonNil(reply.Nodes), nil
	})
}

func (s *HTTPServer) nodeRead(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.NodeSpecificRequest{NodeID: r.PathValue("id"), QueryOptions: queryOptions(r)}
	return read(s, w, "Node.GetNode", &args, func(reply *structs.SingleNodeResponse) (any, error) {
		return found(reply.Node, structs.NotFound(structs.ErrNodeNotFound))
	})
}

func (s *HTTPServer) nodeAllocations(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.NodeSpecificRequest{NodeID: r.PathValue("id"), QueryOptions: queryOptions(r)}
	return read(s, w, "Node.GetAllocs", &args, func(reply *structs.NodeAllocsResponse) (any, error) {
		return nonNil(reply.Allocs), nil
	})
}
