package agent

import (
	"errors"
	"net/http"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// The node's identity, as upstream's /v1/client/identity: its claims with node read, a
// renewal with node write. Like the metadata routes, the agent answers for its own client or
// relays to the node's (the token itself is never shown).

// registerStreamedNodeIdentityRoutes serve the same, relayed by a server: already authorized.
func (s *HTTPServer) registerStreamedNodeIdentityRoutes(mux routeMux) {
	mux.Handle("/v1/client/identity", s.wrap(getOnly(func(_ http.ResponseWriter, _ *http.Request) (any, error) {
		c := s.agent.Client()
		if c == nil {
			return nil, structs.NotFound(structs.ErrNodeNotFound)
		}
		claims, err := c.NodeIdentityClaims()
		if err != nil {
			return nil, err
		}
		return api.NodeIdentityGetResponse{Claims: claims}, nil
	})))
	mux.Handle("/v1/client/identity/renew", s.wrap(func(_ http.ResponseWriter, r *http.Request) (any, error) {
		if r.Method != http.MethodPost && r.Method != http.MethodPut {
			return nil, errInvalidMethod
		}
		c := s.agent.Client()
		if c == nil {
			return nil, structs.NotFound(structs.ErrNodeNotFound)
		}
		if err := c.RenewNodeIdentity(); err != nil {
			return nil, err
		}
		return api.NodeIdentityRenewResponse{}, nil
	}))
}

func (s *HTTPServer) nodeIdentityGet(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.authorize(queryOptions(r).AuthToken, structs.ACLAuthorizeRequest{Check: structs.ACLCheckNodeRead}); err != nil {
		return nil, err
	}
	c, err := s.nodeMetaClient(queryOptions(r), r.URL.Query().Get("node_id"))
	var remote *remoteNodeMeta
	if errors.As(err, &remote) {
		return s.relayToNode(w, r, remote.nodeID, nil)
	}
	if err != nil {
		return nil, err
	}
	claims, err := c.NodeIdentityClaims()
	if err != nil {
		return nil, err
	}
	return api.NodeIdentityGetResponse{Claims: claims}, nil
}

func (s *HTTPServer) nodeIdentityRenew(w http.ResponseWriter, r *http.Request) (any, error) {
	var req api.NodeIdentityRenewRequest
	if err := decodeOptionalBody(r, &req); err != nil {
		return nil, err
	}
	if err := s.authorize(queryOptions(r).AuthToken, structs.ACLAuthorizeRequest{Check: structs.ACLCheckNodeWrite}); err != nil {
		return nil, err
	}
	c, err := s.nodeMetaClient(queryOptions(r), req.NodeID)
	var remote *remoteNodeMeta
	if errors.As(err, &remote) {
		return s.relayToNode(w, r, remote.nodeID, &req)
	}
	if err != nil {
		return nil, err
	}
	if err := c.RenewNodeIdentity(); err != nil {
		return nil, err
	}
	return api.NodeIdentityRenewResponse{}, nil
}
