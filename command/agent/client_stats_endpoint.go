package agent

import (
	"net/http"

	"github.com/nomadfork/nomad/structs"
)

func (s *HTTPServer) registerClientStatsRoutes(mux *http.ServeMux) {
	s.handle(mux, "/v1/client/stats", methods{"GET": s.clientStats})
}

// clientStats answers a node's host statistics (memory, uptime, the allocation directory's
// file system), as upstream's GET /v1/client/stats: from this agent's client when node_id is
// empty or names it, else from the named node's client over a stream. node read is needed.
func (s *HTTPServer) clientStats(w http.ResponseWriter, r *http.Request) (any, error) {
	opts := queryOptions(r)
	if err := s.srv.Endpoints.ACL.AuthorizeNodeRead(opts.AuthToken); err != nil {
		return nil, err
	}
	nodeID := r.URL.Query().Get("node_id")
	c := s.agent.Client()
	if c != nil && (nodeID == "" || nodeID == c.NodeID()) {
		return c.HostStats()
	}
	if nodeID == "" {
		return nil, structs.BadRequest("missing node_id: this agent runs no client")
	}
	node, err := s.srv.State().NodeByID(nil, nodeID)
	if err != nil {
		return nil, err
	}
	if node == nil {
		return nil, structs.NotFound(structs.ErrNodeNotFound)
	}
	return s.proxyToNode(w, r, nodeID)
}

// streamedStats serves a stats read a server sent over a stream.
func (s *HTTPServer) streamedStats(http.ResponseWriter, *http.Request) (any, error) {
	c := s.agent.Client()
	if c == nil {
		return nil, structs.NotFound(structs.ErrNodeNotFound)
	}
	return c.HostStats()
}
