package agent

import (
	"net/http"

	"github.com/nomadfork/nomad/structs"
)

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
	var withOS, withResources bool
	if err := parseQuery(r, queryParam{"os", &withOS}, queryParam{"resources", &withResources}); err != nil {
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
