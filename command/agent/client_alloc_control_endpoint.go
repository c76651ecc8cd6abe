package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/client"
	"github.com/nomadfork/nomad/structs"
)

// Allocation control through the client that runs the allocation: signal, restart, resource
// usage and check results. The agent that takes the request authorizes it against the servers' view of
// the allocation, then acts on its own client or relays the request to the allocation's node
// over the same stream hop as exec and logs (client_streams.go).

// registerStreamedAllocControlRoutes are the same operations as a server relays them to the
// node that runs the allocation: already authorized, nothing is asked again.
func (s *HTTPServer) registerStreamedAllocControlRoutes(mux routeMux) {
	mux.Handle("/v1/client/allocation/{alloc_id}/signal", s.wrap(s.streamedSignal))
	mux.Handle("/v1/client/allocation/{alloc_id}/restart", s.wrap(s.streamedRestart))
	mux.Handle("/v1/client/allocation/{alloc_id}/stats", s.wrap(getOnly(s.streamedAllocStats)))
	mux.Handle("/v1/client/allocation/{alloc_id}/checks", s.wrap(getOnly(s.streamedAllocChecks)))
	mux.Handle("/v1/client/stats", s.wrap(getOnly(s.streamedClientStats)))
}

// clientAlloc authorizes capability on the request's allocation and returns it when this
// agent's client runs it; a remoteNodeError names the allocation of another node. A caller
// without the capability in the namespace it asks in learns nothing, not even whether the ID
// exists.
func (s *HTTPServer) clientAlloc(r *http.Request, capability string) (*structs.Allocation, error) {
	opts := queryOptions(r)
	authorize := func(ns string) error {
		return s.authorize(opts.AuthToken, structs.ACLAuthorizeRequest{Check: structs.ACLCheckNamespaceCapability, Namespace: ns, Capability: capability})
	}
	alloc, err := s.allocByID(opts, r.PathValue("alloc_id"))
	if err != nil {
		return nil, err
	}
	if alloc == nil {
		if err := authorize(opts.Namespace); err != nil {
			return nil, err
		}
		return nil, structs.NotFound(structs.ErrAllocNotFound)
	}
	if err := authorize(alloc.Namespace); err != nil {
		return nil, err
	}
	c := s.agent.Client()
	if c == nil || alloc.NodeID != c.NodeID() {
		return nil, &remoteNodeError{alloc: alloc}
	}
	return alloc, nil
}

// atAllocClient authorizes capability on the request's allocation (clientAlloc) and runs
// local when this agent's client runs it, or relays the request, with body (nil for none), to
// the node that does.
func (s *HTTPServer) atAllocClient(w http.ResponseWriter, r *http.Request, capability string, body any, local func(alloc *structs.Allocation) (any, error)) (any, error) {
	alloc, err := s.clientAlloc(r, capability)
	var remote *remoteNodeError
	if errors.As(err, &remote) {
		return s.relayToNode(w, r, remote.alloc.NodeID, body)
	}
	if err != nil {
		return nil, err
	}
	return local(alloc)
}

func (s *HTTPServer) allocSignal(w http.ResponseWriter, r *http.Request) (any, error) {
	var req api.AllocSignalRequest
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	if req.Signal == "" {
		return nil, structs.BadRequest("missing Signal: the signal to send, such as SIGHUP")
	}
	return s.atAllocClient(w, r, acl.NamespaceCapabilityAllocLifecycle, &req, func(alloc *structs.Allocation) (any, error) {
		if err := s.agent.Client().SignalTask(alloc.ID, req.Task, req.Signal); err != nil {
			return nil, err
		}
		return struct{}{}, nil
	})
}

func (s *HTTPServer) allocRestart(w http.ResponseWriter, r *http.Request) (any, error) {
	var req api.AllocationRestartRequest
	if err := decodeOptionalBody(r, &req); err != nil {
		return nil, err
	}
	return s.atAllocClient(w, r, acl.NamespaceCapabilityAllocLifecycle, &req, func(alloc *structs.Allocation) (any, error) {
		if err := s.agent.Client().RestartTask(alloc.ID, req.TaskName, req.AllTasks); err != nil {
			return nil, err
		}
		return struct{}{}, nil
	})
}

func (s *HTTPServer) allocStats(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.atAllocClient(w, r, acl.NamespaceCapabilityReadJob, nil, func(alloc *structs.Allocation) (any, error) {
		return s.agent.Client().AllocStats(alloc.ID)
	})
}

// allocChecks are the latest results of the allocation's nomad service checks, read from the
// client that runs them (api.AllocCheckStatuses).
func (s *HTTPServer) allocChecks(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.atAllocClient(w, r, acl.NamespaceCapabilityReadJob, nil, func(alloc *structs.Allocation) (any, error) {
		return s.agent.Client().Checks(alloc.ID)
	})
}

// clientStats are the host statistics of this agent's node, or, with node_id, of that node
// (relayed to its client). Node read is required, as upstream.
func (s *HTTPServer) clientStats(w http.ResponseWriter, r *http.Request) (any, error) {
	opts := queryOptions(r)
	if err := s.authorize(opts.AuthToken, structs.ACLAuthorizeRequest{Check: structs.ACLCheckNodeRead}); err != nil {
		return nil, err
	}
	c := s.agent.Client()
	nodeID := r.URL.Query().Get("node_id")
	if nodeID == "" || (c != nil && nodeID == c.NodeID()) {
		if c == nil {
			return nil, structs.BadRequest("this agent runs no client: give node_id to read a node's statistics")
		}
		return c.HostStats()
	}
	node, err := s.nodeByID(opts, nodeID)
	if err != nil {
		return nil, err
	}
	if node == nil {
		return nil, structs.NotFound(structs.ErrNodeNotFound)
	}
	return s.relayToNode(w, r, node.ID, nil)
}

// relayToNode sends the request (with body re-encoded, nil for none) to the client of nodeID
// over a stream, and passes its answer on as it came.
func (s *HTTPServer) relayToNode(w http.ResponseWriter, r *http.Request, nodeID string, body any) (any, error) {
	var in io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		in = bytes.NewReader(raw)
	}
	resp, err := s.sendToNode(r, nodeID, r.Method, in, nodeHeaderWait)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, structs.NewErrCode(http.StatusBadGateway, "reading the answer of node %s: %v", nodeID, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, structs.NewErrCode(resp.StatusCode, "%s", trimErrorBody(raw))
	}
	return json.RawMessage(raw), nil
}

// allocClient is this agent's client, which the streamed allocation routes act on; an agent
// without one holds no allocation.
func (s *HTTPServer) allocClient() (*client.Client, error) {
	c := s.agent.Client()
	if c == nil {
		return nil, structs.NotFound(structs.ErrAllocNotFound)
	}
	return c, nil
}

// sendToNode sends r's path and query, with method and body, over a stream to the client of
// nodeID. A coded error (the node refused) passes as it is; failing to reach the node is a
// 502.
func (s *HTTPServer) sendToNode(r *http.Request, nodeID, method string, body io.Reader, headerWait time.Duration) (*http.Response, error) {
	out, err := http.NewRequestWithContext(r.Context(), method, nodeURL("http", r), body)
	if err != nil {
		return nil, err
	}
	resp, err := s.nodeTransport(nodeID, r, headerWait).RoundTrip(out)
	if err != nil {
		var coded *structs.CodedError
		if errors.As(err, &coded) {
			return nil, coded
		}
		return nil, structs.NewErrCode(http.StatusBadGateway, "reaching the client of node %s: %v", nodeID, err)
	}
	return resp, nil
}

func (s *HTTPServer) streamedSignal(_ http.ResponseWriter, r *http.Request) (any, error) {
	return streamedAllocWrite(s, r, false, func(c *client.Client, allocID string, req *api.AllocSignalRequest) error {
		return c.SignalTask(allocID, req.Task, req.Signal)
	})
}

func (s *HTTPServer) streamedRestart(_ http.ResponseWriter, r *http.Request) (any, error) {
	return streamedAllocWrite(s, r, true, func(c *client.Client, allocID string, req *api.AllocationRestartRequest) error {
		return c.RestartTask(allocID, req.TaskName, req.AllTasks)
	})
}

// streamedAllocWrite runs a write the stream server answers for an allocation of this
// agent's client: PUT or POST only (the stream server routes every verb), a body of Req
// (optional: it may be absent), an empty answer.
func streamedAllocWrite[Req any](s *HTTPServer, r *http.Request, optional bool, act func(c *client.Client, allocID string, req *Req) error) (any, error) {
	if r.Method != http.MethodPut && r.Method != http.MethodPost {
		return nil, errInvalidMethod
	}
	var req Req
	if err := bodyDecoder(optional)(r, &req); err != nil {
		return nil, err
	}
	c, err := s.allocClient()
	if err != nil {
		return nil, err
	}
	if err := act(c, r.PathValue("alloc_id"), &req); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

func (s *HTTPServer) streamedAllocStats(_ http.ResponseWriter, r *http.Request) (any, error) {
	c, err := s.allocClient()
	if err != nil {
		return nil, err
	}
	return c.AllocStats(r.PathValue("alloc_id"))
}

func (s *HTTPServer) streamedAllocChecks(_ http.ResponseWriter, r *http.Request) (any, error) {
	c, err := s.allocClient()
	if err != nil {
		return nil, err
	}
	return c.Checks(r.PathValue("alloc_id"))
}

func (s *HTTPServer) streamedClientStats(_ http.ResponseWriter, _ *http.Request) (any, error) {
	c := s.agent.Client()
	if c == nil {
		return nil, structs.NotFound(structs.ErrNodeNotFound)
	}
	return c.HostStats()
}
