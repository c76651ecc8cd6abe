package agent

import (
	"errors"
	"net/http"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client"
	"github.com/nomadfork/nomad/structs"
)

// Dynamic node metadata, as upstream's /v1/client/metadata: read with node read, changed with
// node write. The agent that takes the request authorizes it with the servers, then answers
// from its own client or relays to the node's client over a stream (client_streams.go). The
// client stores the change and registers its node again, so the servers' Node.Meta (and the
// constraints that read it) follow.

// registerStreamedNodeMetaRoutes serve the same, relayed by a server: already authorized.
func (s *HTTPServer) registerStreamedNodeMetaRoutes(mux routeMux) {
	mux.Handle("/v1/client/metadata", s.wrap(func(_ http.ResponseWriter, r *http.Request) (any, error) {
		c := s.agent.Client()
		if c == nil {
			return nil, structs.NotFound(structs.ErrNodeNotFound)
		}
		switch r.Method {
		case http.MethodGet:
			return c.NodeMeta(), nil
		case http.MethodPost, http.MethodPut:
			var req api.NodeMetaApplyRequest
			if err := decodeBody(r, &req); err != nil {
				return nil, err
			}
			return c.ApplyNodeMeta(req.Meta)
		}
		return nil, errInvalidMethod
	}))
}

func (s *HTTPServer) nodeMetaRead(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.authorize(queryOptions(r).AuthToken, structs.ACLAuthorizeRequest{Check: structs.ACLCheckNodeRead}); err != nil {
		return nil, err
	}
	c, err := s.nodeMetaClient(queryOptions(r), r.URL.Query().Get("node_id"))
	if err != nil {
		return s.relayNodeMeta(w, r, err, nil)
	}
	return c.NodeMeta(), nil
}

func (s *HTTPServer) nodeMetaApply(w http.ResponseWriter, r *http.Request) (any, error) {
	var req api.NodeMetaApplyRequest
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	if err := s.authorize(queryOptions(r).AuthToken, structs.ACLAuthorizeRequest{Check: structs.ACLCheckNodeWrite}); err != nil {
		return nil, err
	}
	if err := client.ValidateNodeMetaApply(req.Meta); err != nil {
		return nil, err
	}
	c, err := s.nodeMetaClient(queryOptions(r), req.NodeID)
	if err != nil {
		return s.relayNodeMeta(w, r, err, &req)
	}
	return c.ApplyNodeMeta(req.Meta)
}

// remoteNodeMeta names the node whose client holds the metadata asked for.
type remoteNodeMeta struct{ nodeID string }

func (e *remoteNodeMeta) Error() string { return "node " + e.nodeID + " is another agent's" }

// nodeMetaClient is this agent's client when nodeID names it (or is empty); a node of
// another agent is a *remoteNodeMeta, an unknown one a 404.
func (s *HTTPServer) nodeMetaClient(opts structs.QueryOptions, nodeID string) (*client.Client, error) {
	c := s.agent.Client()
	if nodeID == "" || (c != nil && nodeID == c.NodeID()) {
		if c == nil {
			return nil, structs.BadRequest("node_id: this agent runs no client, so the node must be named")
		}
		return c, nil
	}
	node, err := s.nodeByID(opts, nodeID)
	if err != nil {
		return nil, err
	}
	if node == nil {
		return nil, structs.NotFound(structs.ErrNodeNotFound)
	}
	return nil, &remoteNodeMeta{nodeID: node.ID}
}

func (s *HTTPServer) relayNodeMeta(w http.ResponseWriter, r *http.Request, err error, body any) (any, error) {
	var remote *remoteNodeMeta
	if !errors.As(err, &remote) {
		return nil, err
	}
	return s.relayToNode(w, r, remote.nodeID, body)
}
