package nomad

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/structs"
)

// A client-only agent's HTTP API serves its own node's allocations itself. For an allocation
// or node of another agent it relays the request over its connection to a server
// (structs.ClientForwardMethod): the server authenticates the connection's node, reads the HTTP
// request that follows, decides on the caller's token exactly as its own HTTP API does for
// that route, picks the target node from its own state (the allocation's node; never a node
// ID the client names for an allocation route), and sends a request it rebuilt itself to the
// node over the same path a server agent uses (DialNode). The client never reaches another
// node's stream server directly: that server trusts whoever reaches it, so only a server,
// after deciding, may. An agent debug route naming a server (server_id) goes to that server's
// agent instead (DialServerAgent), with the caller's token, which that agent checks again.

const (
	// forwardHeaderTimeout bounds reading the relayed request after the preamble.
	forwardHeaderTimeout = 30 * time.Second
	// maxForwardBody bounds the body of a relayed request (signal and restart carry a few
	// bytes of JSON).
	maxForwardBody = 64 << 10
	// forwardIdleTimeout ends a relayed answer (not an exec session) from which the node has
	// sent nothing for this long; followed logs send a heartbeat frame well within it.
	forwardIdleTimeout = 2 * time.Minute
)

// forwardRoute is one route a client agent may relay to another node's client.
type forwardRoute struct {
	Pattern string
	Methods []string
	// Check and Capability are the ACL decision the server agent's HTTP handler makes for
	// the route (ACL.Authorize).
	Check      string
	Capability string
	// ByNode: the target is the node named by node_id (a node route), not an allocation's.
	ByNode bool
	// Upgrade: a WebSocket session (exec) whose frames flow both ways after the answer.
	Upgrade bool
	// ByServer: with server_id (and no node_id) the target is that server's agent, which
	// checks the caller's token again (an agent debug route).
	ByServer bool
	// Idle overrides forwardIdleTimeout for an answer that may be silent for longer (a CPU
	// profile answers only when its seconds are over).
	Idle time.Duration
}

// profileIdleTimeout covers the longest profile an agent runs (command/agent's
// maxProfileSeconds, 300) and the time to send it.
const profileIdleTimeout = 330 * time.Second

// clientForwardRoutes is the allow-list: the streamed routes of a node's stream server that
// the HTTP API relays to another node (command/agent's TestClientForwardRoutesMatchStreamedRoutes
// keeps the two in step). Node metadata and identity are not relayed: they act on the
// node's own configuration and stay with a server agent.
var clientForwardRoutes = []forwardRoute{
	{Pattern: "/v1/client/fs/logs/{alloc_id}", Methods: []string{"GET"}, Check: structs.ACLCheckReadLogs},
	{Pattern: "/v1/client/fs/ls/{alloc_id}", Methods: []string{"GET"}, Check: structs.ACLCheckReadFS},
	{Pattern: "/v1/client/fs/stat/{alloc_id}", Methods: []string{"GET"}, Check: structs.ACLCheckReadFS},
	{Pattern: "/v1/client/fs/cat/{alloc_id}", Methods: []string{"GET"}, Check: structs.ACLCheckReadFS},
	{Pattern: "/v1/client/fs/readat/{alloc_id}", Methods: []string{"GET"}, Check: structs.ACLCheckReadFS},
	{Pattern: "/v1/client/fs/stream/{alloc_id}", Methods: []string{"GET"}, Check: structs.ACLCheckReadFS},
	{Pattern: "/v1/client/allocation/{alloc_id}/exec", Methods: []string{"GET"}, Check: structs.ACLCheckAllocExec, Upgrade: true},
	{Pattern: "/v1/client/allocation/{alloc_id}/signal", Methods: []string{"PUT", "POST"}, Check: structs.ACLCheckNamespaceCapability, Capability: acl.NamespaceCapabilityAllocLifecycle},
	{Pattern: "/v1/client/allocation/{alloc_id}/restart", Methods: []string{"PUT", "POST"}, Check: structs.ACLCheckNamespaceCapability, Capability: acl.NamespaceCapabilityAllocLifecycle},
	{Pattern: "/v1/client/allocation/{alloc_id}/stats", Methods: []string{"GET"}, Check: structs.ACLCheckNamespaceCapability, Capability: acl.NamespaceCapabilityReadJob},
	{Pattern: "/v1/client/allocation/{alloc_id}/checks", Methods: []string{"GET"}, Check: structs.ACLCheckNamespaceCapability, Capability: acl.NamespaceCapabilityReadJob},
	{Pattern: "/v1/client/stats", Methods: []string{"GET"}, Check: structs.ACLCheckNodeRead, ByNode: true},
	{Pattern: "/v1/agent/host", Methods: []string{"GET"}, Check: structs.ACLCheckAgentRead, ByNode: true, ByServer: true},
	{Pattern: "/v1/agent/monitor", Methods: []string{"GET"}, Check: structs.ACLCheckAgentRead, ByNode: true, ByServer: true},
	{Pattern: "/v1/agent/pprof/{profile}", Methods: []string{"GET"}, Check: structs.ACLCheckAgentWrite, ByNode: true, ByServer: true, Idle: profileIdleTimeout},
}

// ClientForwardPatterns are the patterns of the allow-list.
func ClientForwardPatterns() []string {
	out := make([]string, 0, len(clientForwardRoutes))
	for _, rt := range clientForwardRoutes {
		out = append(out, rt.Pattern)
	}
	return out
}

// ClientForwardAllowed reports whether a client agent may relay a request for path.
func ClientForwardAllowed(path string) bool {
	_, _, ok := matchForwardRoute(path)
	return ok
}

// matchForwardRoute finds the route of path and the allocation ID it names ("" for a node
// route).
func matchForwardRoute(path string) (*forwardRoute, string, bool) {
	segs := strings.Split(path, "/")
	for i := range clientForwardRoutes {
		rt := &clientForwardRoutes[i]
		want := strings.Split(rt.Pattern, "/")
		if len(want) != len(segs) {
			continue
		}
		allocID, ok := "", true
		for j, w := range want {
			switch {
			case w == "{alloc_id}" && segs[j] != "":
				allocID = segs[j]
			case strings.HasPrefix(w, "{") && segs[j] != "":
				// Another wildcard (a profile's name): any one segment.
			case w != segs[j]:
				ok = false
			}
		}
		if ok {
			return rt, allocID, true
		}
	}
	return nil, "", false
}

// serveForward answers one relayed request on a client connection. r reads the stream past
// the preamble; limit is the reader's bound, lifted once an exec session is under way.
func (cs *clientSession) serveForward(stream net.Conn, r *bufio.Reader, limit *io.LimitedReader, body []byte) {
	s := cs.srv
	var args structs.ClientForwardRequest
	if err := structs.Decode(body, &args); err != nil {
		writeForwardError(stream, structs.BadRequest("decoding %s arguments: %v", structs.ClientForwardMethod, err))
		return
	}
	// Only a registered node's agent relays: a stranger who reaches the RPC port cannot.
	if err := s.authenticateNode(args.NodeID, args.SecretID); err != nil {
		writeForwardError(stream, err)
		return
	}
	_ = stream.SetReadDeadline(time.Now().Add(forwardHeaderTimeout))
	req, err := http.ReadRequest(r)
	if err != nil {
		writeForwardError(stream, structs.BadRequest("reading the relayed request: %v", err))
		return
	}
	reqBody, err := io.ReadAll(io.LimitReader(req.Body, maxForwardBody+1))
	if err != nil || len(reqBody) > maxForwardBody {
		writeForwardError(stream, structs.BadRequest("the relayed request's body is unreadable or larger than %d bytes", maxForwardBody))
		return
	}
	rt, target, err := s.decideForward(req, args.AuthToken)
	if err != nil {
		writeForwardError(stream, err)
		return
	}
	var node net.Conn
	token := ""
	if target.server != nil {
		// A server's agent checks the caller's token itself: it travels with the request.
		node, err = s.DialServerAgent(*target.server)
		token = args.AuthToken
	} else {
		node, err = s.DialNode(target.nodeID)
	}
	if err != nil {
		writeForwardError(stream, err)
		return
	}
	defer node.Close()
	if err := writeNodeRequest(node, req, reqBody, rt.Upgrade, token); err != nil {
		writeForwardError(stream, structs.NewErrCode(http.StatusBadGateway, "reaching %s: %v", target, err))
		return
	}
	_ = stream.SetReadDeadline(time.Time{})
	if rt.Upgrade {
		// The exec session's frames flow both ways for as long as it runs; an interactive
		// session may be quiet for long, and the session's keepalives end it when either
		// connection dies.
		limit.N = 1 << 62
		splice(stream, r, node)
		return
	}
	// Nothing the client sends after the request reaches the node: reading only tells when
	// it leaves.
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(io.Discard, r)
		node.Close()
	}()
	idle := forwardIdleTimeout
	if rt.Idle > 0 {
		idle = rt.Idle
	}
	_, _ = io.Copy(stream, idleReader{node, idle})
	stream.Close()
	node.Close()
	<-done
}

// idleReader fails a read that waits longer than idle.
type idleReader struct {
	c    net.Conn
	idle time.Duration
}

func (i idleReader) Read(p []byte) (int, error) {
	_ = i.c.SetReadDeadline(time.Now().Add(i.idle))
	return i.c.Read(p)
}

// forwardTarget is where a relayed request goes: a node's client, or a server's agent.
type forwardTarget struct {
	nodeID string
	server *ServerTarget
}

func (t forwardTarget) String() string {
	if t.server != nil {
		return "the agent of server " + t.server.Name
	}
	return "the client of node " + t.nodeID
}

// decideForward checks the caller's token for the request's route, as the server agent's
// HTTP handler does, and names the node (or, for an agent debug route with server_id, the
// server) to send it to.
func (s *Server) decideForward(req *http.Request, token string) (*forwardRoute, forwardTarget, error) {
	rt, nodeID, err := s.decideForwardNode(req, token)
	if err != nil || nodeID != "" {
		return rt, forwardTarget{nodeID: nodeID}, err
	}
	target, err := s.LookupServer(req.URL.Query().Get("server_id"))
	if err != nil {
		return nil, forwardTarget{}, err
	}
	return rt, forwardTarget{server: &target}, nil
}

// decideForwardNode is decideForward's decision; "" with no error names a server target (a
// ByServer route with server_id and no node_id).
func (s *Server) decideForwardNode(req *http.Request, token string) (*forwardRoute, string, error) {
	rt, allocID, ok := matchForwardRoute(req.URL.Path)
	if !ok {
		return nil, "", structs.BadRequest("%s is not relayed to another node's client: send the request to a server agent", req.URL.Path)
	}
	allowed := false
	for _, m := range rt.Methods {
		allowed = allowed || m == req.Method
	}
	if !allowed {
		return nil, "", structs.NewErrCode(http.StatusMethodNotAllowed, "Invalid method")
	}
	q := req.URL.Query()
	check := structs.ACLAuthorizeRequest{Check: rt.Check, Capability: rt.Capability,
		QueryOptions: structs.QueryOptions{AuthToken: token, AllowStale: true}}
	authorize := func(c structs.ACLAuthorizeRequest) error {
		var reply structs.ACLAuthorizeResponse
		return s.RPC("ACL.Authorize", &c, &reply)
	}
	if rt.ByNode {
		if err := authorize(check); err != nil {
			return nil, "", err
		}
		nodeID := q.Get("node_id")
		if nodeID == "" && rt.ByServer && q.Get("server_id") != "" {
			return rt, "", nil
		}
		if nodeID == "" {
			return nil, "", structs.BadRequest("missing node_id: the node whose client answers")
		}
		node, err := s.State().NodeByID(nil, nodeID)
		if err != nil {
			return nil, "", err
		}
		if node == nil {
			return nil, "", structs.NotFound(structs.ErrNodeNotFound)
		}
		return rt, node.ID, nil
	}
	alloc, err := s.State().AllocByID(nil, allocID)
	if err != nil {
		return nil, "", err
	}
	if alloc == nil {
		// A caller refused in the namespace it asks in learns nothing, not even whether the
		// ID exists.
		check.Namespace = q.Get("namespace")
		if err := authorize(check); err != nil {
			return nil, "", err
		}
		return nil, "", structs.NotFound(structs.ErrAllocNotFound)
	}
	check.Namespace = alloc.Namespace
	if rt.Check == structs.ACLCheckAllocExec {
		check.AllocID = alloc.ID
		check.NodeExec = drivers.FSIsolationOf(allocTaskDriver(alloc, q.Get("task"))) == drivers.FSIsolationNone
	}
	if err := authorize(check); err != nil {
		return nil, "", err
	}
	return rt, alloc.NodeID, nil
}

// allocTaskDriver is the driver of the allocation's task named task, "" when there is none.
func allocTaskDriver(alloc *structs.Allocation, task string) string {
	if alloc.Job == nil {
		return ""
	}
	if tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup); tg != nil {
		for _, t := range tg.Tasks {
			if t.Name == task {
				return t.Driver
			}
		}
	}
	return ""
}

// writeNodeRequest writes a request rebuilt from the relayed one: its method, path, query and
// body, the WebSocket handshake headers for exec, and nothing else the client sent. token is
// set only for a server's agent, which checks it again; a node gets none (it serves what a
// server sends it).
func writeNodeRequest(node net.Conn, in *http.Request, body []byte, upgrade bool, token string) error {
	out, err := http.NewRequest(in.Method, (&urlOf{in}).String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	if upgrade {
		for _, k := range []string{"Upgrade", "Connection", "Sec-WebSocket-Key", "Sec-WebSocket-Version"} {
			if v := in.Header.Get(k); v != "" {
				out.Header.Set(k, v)
			}
		}
	} else {
		out.Close = true
		if ct := in.Header.Get("Content-Type"); ct != "" {
			out.Header.Set("Content-Type", ct)
		}
	}
	if token != "" {
		out.Header.Set("X-Nomad-Token", token)
	}
	_ = node.SetWriteDeadline(time.Now().Add(forwardHeaderTimeout))
	defer func() { _ = node.SetWriteDeadline(time.Time{}) }()
	return out.Write(node)
}

// urlOf is the node-side URL of a relayed request: its path and query only.
type urlOf struct{ r *http.Request }

func (u *urlOf) String() string {
	out := "http://node" + u.r.URL.EscapedPath()
	if u.r.URL.RawQuery != "" {
		out += "?" + u.r.URL.RawQuery
	}
	return out
}

// writeForwardError answers a refused relay as an HTTP response, so that the client agent
// passes its status and message on as a server agent would answer them.
func writeForwardError(w net.Conn, err error) {
	code := structs.ErrorCode(err)
	msg := err.Error()
	_ = w.SetWriteDeadline(time.Now().Add(clientRequestTimeout))
	_, _ = fmt.Fprintf(w, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, http.StatusText(code), len(msg)+1, msg+"\n")
}
