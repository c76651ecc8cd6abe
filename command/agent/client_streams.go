package agent

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/gorilla/websocket"
	"github.com/hashicorp/go-hclog"
	"github.com/nomadfork/nomad/structs"
)

// Requests for an allocation on another node travel as HTTP over a stream the agent's server
// opens to that node's client (nomad.Server.DialNode: over the client's own connection to a
// server, so a client behind NAT answers). The caller's token stays with the server agent,
// which authorizes the request before anything is sent: the client serves what reaches it
// over a stream without asking again, and never sees the caller's token.

// remoteNodeError says that the allocation of a request runs on another node's client.
type remoteNodeError struct {
	alloc *structs.Allocation
}

func (e *remoteNodeError) Error() string {
	return "allocation " + e.alloc.ID + " runs on node " + e.alloc.NodeID
}

// streamRequestTimeout bounds reading a request that came over a stream.
const streamRequestTimeout = 10 * time.Second

// serveClientStreams serves the requests that servers send to this agent's client over
// streams from ln, until the agent shuts down.
func (a *Agent) serveClientStreams(ln net.Listener) {
	s := &HTTPServer{agent: a, srv: a.server, logger: a.logger.Named("client-streams"), mux: http.NewServeMux()}
	s.registerStreamRoutes(s.mux)
	a.streamSrv = a.serveStreams(s, ln)
}

// serveStreams serves s's routes to the requests that arrive over streams from ln, until the
// agent shuts down (Shutdown closes the server returned; streamWG waits for it).
func (a *Agent) serveStreams(s *HTTPServer, ln net.Listener) *http.Server {
	srv := &http.Server{
		Handler:           s.mux,
		ReadHeaderTimeout: streamRequestTimeout,
		BaseContext:       func(net.Listener) context.Context { return a.ctx },
		ErrorLog:          s.logger.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true}),
	}
	a.streamWG.Add(1)
	go func() {
		defer a.streamWG.Done()
		_ = srv.Serve(ln)
	}()
	return srv
}

// routeMux is where routes are registered: the stream server's mux, or a test's list.
type routeMux interface {
	Handle(pattern string, handler http.Handler)
}

// registerStreamRoutes are the routes of the stream server. Not s.handle: these routes are
// not part of the agent's HTTP API; only a server reaches them, over a stream it opened
// after authorizing the caller. nomad's relay allow-list (ClientForwardPatterns) is kept in
// step with them by TestClientForwardRoutesMatchStreamedRoutes.
func (s *HTTPServer) registerStreamRoutes(mux routeMux) {
	mux.Handle("/v1/client/fs/logs/{alloc_id}", s.wrap(getOnly(s.streamedLogs)))
	s.registerStreamedFSRoutes(mux)
	mux.Handle("/v1/client/allocation/{alloc_id}/exec", s.wrap(getOnly(s.streamedExec)))
	s.registerStreamedAllocControlRoutes(mux)
	mux.Handle("/v1/client/allocation/{alloc_id}/snapshot", s.wrap(getOnly(s.streamedSnapshot)))
	s.registerStreamedNodeMetaRoutes(mux)
	s.registerStreamedNodeIdentityRoutes(mux)
	mux.Handle("/v1/agent/monitor", s.wrap(getOnly(s.streamedMonitor)))
	mux.Handle("/v1/agent/host", s.wrap(getOnly(s.streamedHost)))
	mux.Handle("/v1/agent/pprof/{profile}", s.wrap(getOnly(s.streamedPprof)))
	mux.Handle("/", s.wrap(func(_ http.ResponseWriter, r *http.Request) (any, error) {
		return nil, structs.NewErrCode(http.StatusNotFound, "Invalid URL path %q", r.URL.Path)
	}))
}

func getOnly(fn handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) (any, error) {
		if r.Method != http.MethodGet {
			return nil, errInvalidMethod
		}
		return fn(w, r)
	}
}

// streamedLogs serves a log read a server sent over a stream.
func (s *HTTPServer) streamedLogs(w http.ResponseWriter, r *http.Request) (any, error) {
	req, err := parseLogRequest(r)
	if err != nil {
		return nil, err
	}
	c, err := s.allocClient()
	if err != nil {
		return nil, err
	}
	return s.serveLogs(w, r, c, req)
}

// streamedExec serves an exec session a server sent over a stream, as a WebSocket without the
// handshake frame (the server took the caller's token).
func (s *HTTPServer) streamedExec(w http.ResponseWriter, r *http.Request) (any, error) {
	req, err := parseExecRequest(r)
	if err != nil {
		return nil, err
	}
	c, err := s.allocClient()
	if err != nil {
		return nil, err
	}
	t, err := c.ExecTarget(req.allocID, req.task)
	if err != nil {
		return nil, err
	}
	if t.Err != nil {
		return nil, t.Err
	}
	conn := upgradeExec(w, r)
	if conn == nil {
		return nil, nil
	}
	defer conn.Close()
	conn.SetReadLimit(execMaxFrame)
	s.runExecSession(r.Context(), conn, req)
	return nil, nil
}

// nodeHeaderWait bounds how long a relayed request waits for the node's answer to begin.
const nodeHeaderWait = 30 * time.Second

// nodeTransport sends r's request over a stream to the client of nodeID; the answer must
// begin within headerWait (longer for a profile, which answers when it is done).
func (s *HTTPServer) nodeTransport(nodeID string, r *http.Request, headerWait time.Duration) *http.Transport {
	token := queryOptions(r).AuthToken
	return &http.Transport{
		DialContext: func(context.Context, string, string) (net.Conn, error) {
			return s.dialNode(nodeID, r.URL.Path, token)
		},
		DisableKeepAlives:     true,
		ResponseHeaderTimeout: headerWait,
	}
}

// nodeURL is the URL of r's path and query on the node's stream server.
func nodeURL(scheme string, r *http.Request, drop ...string) string {
	q := r.URL.Query()
	for _, k := range drop {
		q.Del(k)
	}
	u := url.URL{Scheme: scheme, Host: "node", Path: r.URL.Path, RawQuery: q.Encode()}
	return u.String()
}

// proxyToNode relays the GET r (already authorized) to the client of nodeID and streams its
// answer back as it comes.
func (s *HTTPServer) proxyToNode(w http.ResponseWriter, r *http.Request, nodeID string) (any, error) {
	return s.proxyToNodeWait(w, r, nodeID, nodeHeaderWait)
}

// proxyToNodeWait is proxyToNode for an answer that may take up to headerWait to begin.
func (s *HTTPServer) proxyToNodeWait(w http.ResponseWriter, r *http.Request, nodeID string, headerWait time.Duration) (any, error) {
	resp, err := s.sendToNode(r, nodeID, http.MethodGet, nil, headerWait)
	if err != nil {
		return nil, err
	}
	return relayAnswer(w, resp)
}

// relayAnswer passes an answer relayed from another agent on as it comes: its status, type
// and body, flushed chunk by chunk, so nothing is held here whatever its length. It returns
// when the answer ends or the caller goes away (which closes the relayed request).
func relayAnswer(w http.ResponseWriter, resp *http.Response) (any, error) {
	defer resp.Body.Close()
	for _, k := range []string{"Content-Type"} {
		if v := resp.Header.Get(k); v != "" {
			w.Header().Set(k, v)
		}
	}
	w.Header().Del("Content-Encoding")
	w.WriteHeader(resp.StatusCode)
	flusher, _ := w.(http.Flusher)
	// The status goes out at once: a quiet stream (a monitor with nothing logged yet) would
	// otherwise leave its caller waiting for the answer to begin.
	if flusher != nil {
		flusher.Flush()
	}
	buf := make([]byte, logFrameSize)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return nil, nil
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if err != nil {
			return nil, nil
		}
	}
}

// dialNodeExec opens the exec WebSocket to the client that runs the allocation.
// token is the caller's, which a relaying server decides on again.
func (s *HTTPServer) dialNodeExec(ctx context.Context, r *http.Request, alloc *structs.Allocation, token string) (*websocket.Conn, error) {
	d := websocket.Dialer{
		NetDialContext: func(context.Context, string, string) (net.Conn, error) {
			return s.dialNode(alloc.NodeID, r.URL.Path, token)
		},
		HandshakeTimeout: 30 * time.Second,
	}
	conn, resp, err := d.DialContext(ctx, nodeURL("ws", r, "ws_handshake"), nil)
	if err != nil {
		var coded *structs.CodedError
		switch {
		case errors.As(err, &coded):
			return nil, coded
		case resp != nil:
			// The client refused before the upgrade: pass its answer on.
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			return nil, structs.NewErrCode(resp.StatusCode, "%s", trimErrorBody(body))
		}
		return nil, structs.NewErrCode(http.StatusBadGateway, "reaching the client of node %s: %v", alloc.NodeID, err)
	}
	conn.SetReadLimit(execMaxFrame)
	return conn, nil
}

func trimErrorBody(b []byte) string {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return string(b)
}

// relayExec relays frames between the caller and the client's session until either ends; the
// client's close frame (exit, error) reaches the caller as it was.
func relayExec(ctx context.Context, caller, node *websocket.Conn) {
	done := make(chan struct{}, 2)
	go func() {
		defer func() { done <- struct{}{} }()
		for {
			kind, msg, err := caller.ReadMessage()
			if err != nil {
				_ = node.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, ""), time.Now().Add(execWriteTimeout))
				return
			}
			_ = node.SetWriteDeadline(time.Now().Add(execWriteTimeout))
			if node.WriteMessage(kind, msg) != nil {
				return
			}
		}
	}()
	go func() {
		defer func() { done <- struct{}{} }()
		for {
			kind, msg, err := node.ReadMessage()
			if err != nil {
				var ce *websocket.CloseError
				if errors.As(err, &ce) {
					closeExecCode(caller, ce.Code, ce.Text)
				} else {
					closeExecCode(caller, websocket.CloseInternalServerErr, "lost the connection to the client")
				}
				return
			}
			_ = caller.SetWriteDeadline(time.Now().Add(execWriteTimeout))
			if caller.WriteMessage(kind, msg) != nil {
				return
			}
		}
	}()
	pending := 2
	select {
	case <-done:
		pending--
	case <-ctx.Done():
		closeExecCode(caller, websocket.CloseGoingAway, errAgentShuttingDown.Error())
	}
	node.Close()
	caller.Close()
	for ; pending > 0; pending-- {
		<-done
	}
}

// streamedSnapshot serves a range of an allocation's disk snapshot, which a server relays to
// the node of the allocation that migrates it (nomad.Alloc.MigrateData).
func (s *HTTPServer) streamedSnapshot(w http.ResponseWriter, r *http.Request) (any, error) {
	c, err := s.allocClient()
	if err != nil {
		return nil, err
	}
	var offset, limit, maxBytes int64
	if err := parseQuery(r, queryParam{"offset", &offset}, queryParam{"limit", &limit}, queryParam{"max", &maxBytes}); err != nil {
		return nil, err
	}
	// Built in memory first: an error half-way must be an error status, not a short chunk
	// the caller would take for the end. A range is at most one chunk and a byte.
	if limit > structs.AllocMigrateChunkSize+1 {
		return nil, structs.BadRequest("invalid limit %d: at most %d", limit, structs.AllocMigrateChunkSize+1)
	}
	var buf bytes.Buffer
	if err := c.WriteAllocSnapshot(r.PathValue("alloc_id"), offset, limit, maxBytes, &buf); err != nil {
		return nil, err
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
	return nil, nil
}
