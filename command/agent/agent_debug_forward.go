package agent

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/nomadfork/nomad/nomad"
	"github.com/nomadfork/nomad/structs"
)

// The agent debug routes (/v1/agent/host, /v1/agent/pprof/*, /v1/agent/monitor) answer for
// the agent a request names: node_id is relayed to that node's client through the server
// holding its connection (proxyToNode), and server_id to that server's agent over an agent
// stream (nomad.Server.DialServerAgent). The agent a request reaches checks the caller's
// token first, as for its own data; the forwarded request carries the same token, and the
// agent stream routes below check it again with the target agent's own rules (agent read or
// write, enable_debug without ACLs) before serving that agent's data, and only its own.

// serveAgentStreams serves the agent streams other servers open to this server agent's debug
// routes, until the agent shuts down.
func (a *Agent) serveAgentStreams() {
	ln := newPipeListener(a.ctx)
	s := &HTTPServer{agent: a, srv: a.server, rpc: serverRPC{srv: a.server}, logger: a.logger.Named("agent-streams"), mux: http.NewServeMux()}
	s.registerAgentStreamRoutes(s.mux)
	a.agentStreamSrv = a.serveStreams(s, ln)
	a.server.ServeAgentStreams(ln.dial)
}

// registerAgentStreamRoutes are the routes an agent stream reaches: the debug routes, each
// checking the caller's token as the HTTP API does and answering for this agent only.
func (s *HTTPServer) registerAgentStreamRoutes(mux routeMux) {
	mux.Handle("/v1/agent/host", s.wrap(getOnly(s.servedHost)))
	mux.Handle("/v1/agent/pprof/{profile}", s.wrap(getOnly(s.servedPprof)))
	mux.Handle("/v1/agent/monitor", s.wrap(getOnly(s.servedMonitor)))
	mux.Handle("/", s.wrap(func(_ http.ResponseWriter, r *http.Request) (any, error) {
		return nil, structs.NewErrCode(http.StatusNotFound, "Invalid URL path %q", r.URL.Path)
	}))
}

// toNamedAgent sends r on to the agent its node_id (another node's client) or server_id
// (another server) names; sent reports whether it did (or refused), in which case the answer
// is out, or written, or err says why. The caller has checked the token already.
func (s *HTTPServer) toNamedAgent(w http.ResponseWriter, r *http.Request) (sent bool, out any, err error) {
	node, err := s.otherNode(r)
	if err != nil {
		return true, nil, err
	}
	if node != nil {
		out, err := s.proxyToNode(w, r, node.ID)
		return true, out, err
	}
	if id := r.URL.Query().Get("server_id"); id != "" {
		if forwarded, err := s.forwardToServer(w, r, id, nodeHeaderWait); forwarded {
			return true, nil, err
		}
	}
	return false, nil, nil
}

// forwardToServer sends r to the agent of the server id names, unless that is this agent's own
// server; forwarded reports whether it did (or refused), in which case the answer is written
// or err says why. headerWait bounds how long the target may take to begin its answer.
func (s *HTTPServer) forwardToServer(w http.ResponseWriter, r *http.Request, id string, headerWait time.Duration) (forwarded bool, err error) {
	if s.srv == nil {
		if s.agent.rpcServers == nil {
			return true, structs.BadRequest("server_id %q: this agent reaches no server", id)
		}
		// A client-only agent relays through its server, which decides on the token too.
		_, err := s.proxyThroughServer(w, r, headerWait)
		return true, err
	}
	target, err := s.srv.LookupServer(id)
	if err != nil {
		return true, err
	}
	if target.Self {
		return false, nil
	}
	_, err = s.proxyToServer(w, r, target, headerWait)
	return true, err
}

// proxyToServer relays the GET r to the agent of target with the caller's token and streams
// its answer back as it comes. The caller leaving cancels the request, which closes the stream
// and so ends a monitor on the target.
func (s *HTTPServer) proxyToServer(w http.ResponseWriter, r *http.Request, target nomad.ServerTarget, headerWait time.Duration) (any, error) {
	out, err := http.NewRequestWithContext(r.Context(), http.MethodGet, agentStreamURL(r), nil)
	if err != nil {
		return nil, err
	}
	if token := queryOptions(r).AuthToken; token != "" {
		out.Header.Set("X-Nomad-Token", token)
	}
	return relayOver(w, out, headerWait, func() (net.Conn, error) { return s.srv.DialServerAgent(target) },
		"reaching the agent of server "+target.Name)
}

// relayOver sends the request out over one connection from dial and streams its answer to w.
// An error dial coded (an unknown server, a refused token) is answered as it is; any other
// failure to reach the far end is a 502 saying what was being reached.
func relayOver(w http.ResponseWriter, out *http.Request, headerWait time.Duration, dial func() (net.Conn, error), reaching string) (any, error) {
	tr := &http.Transport{
		DialContext:           func(context.Context, string, string) (net.Conn, error) { return dial() },
		DisableKeepAlives:     true,
		ResponseHeaderTimeout: headerWait,
	}
	resp, err := tr.RoundTrip(out)
	if err != nil {
		var coded *structs.CodedError
		if errors.As(err, &coded) {
			return nil, coded
		}
		return nil, structs.NewErrCode(http.StatusBadGateway, "%s: %v", reaching, err)
	}
	return relayAnswer(w, resp)
}

// proxyThroughServer relays r from a client-only agent to its server (ClientSession.Forward),
// which checks the caller's token for the route and sends it on to the server named; the
// token travels with it for the target to check again.
func (s *HTTPServer) proxyThroughServer(w http.ResponseWriter, r *http.Request, headerWait time.Duration) (any, error) {
	token := queryOptions(r).AuthToken
	out, err := http.NewRequestWithContext(r.Context(), http.MethodGet, nodeURL("http", r), nil)
	if err != nil {
		return nil, err
	}
	return relayOver(w, out, headerWait, func() (net.Conn, error) { return s.agent.rpcServers.Forward(token) }, "reaching the servers")
}

// agentStreamURL is r's path and query for the target agent, without the ids that chose it:
// the target answers for itself only.
func agentStreamURL(r *http.Request) string {
	q := r.URL.Query()
	q.Del("server_id")
	q.Del("node_id")
	u := url.URL{Scheme: "http", Host: "agent", Path: r.URL.Path, RawQuery: q.Encode()}
	return u.String()
}

// ownNodeID is the node ID of this agent's client, "" without one.
func (s *HTTPServer) ownNodeID() string {
	if c := s.agent.Client(); c != nil {
		return c.NodeID()
	}
	return ""
}

// otherNode is the node a node_id parameter names when it is not this agent's own client's,
// nil otherwise; an unknown node is a 404.
func (s *HTTPServer) otherNode(r *http.Request) (*structs.Node, error) {
	id := r.URL.Query().Get("node_id")
	if id == "" || id == s.ownNodeID() {
		return nil, nil
	}
	node, err := s.nodeByID(queryOptions(r), id)
	if err != nil {
		return nil, err
	}
	if node == nil {
		return nil, structs.NotFound(structs.ErrNodeNotFound)
	}
	return node, nil
}
