package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/structs"
)

const (
	// execHandshakeTimeout bounds the wait for the first frame of a ws_handshake session.
	execHandshakeTimeout = 10 * time.Second
	// execHandshakeVersion is the only version of the handshake frame there is.
	execHandshakeVersion = 1
	// execWriteTimeout bounds one frame written to the caller; a caller that reads nothing
	// for that long ends its session.
	execWriteTimeout = 10 * time.Second
	// execMaxFrame bounds one frame from the caller (the official client sends stdin in
	// pieces of 2 KiB).
	execMaxFrame = 1 << 20
)

// execUpgrader keeps gorilla's same-origin check: a web page of another origin must not be
// able to run commands through a browser that can reach the agent.
var execUpgrader = websocket.Upgrader{ReadBufferSize: 4096, WriteBufferSize: 4096}

// execRequest is one alloc exec request, parsed.
type execRequest struct {
	allocID   string
	task      string
	command   []string
	tty       bool
	handshake bool
	namespace string
	token     string
}

// parseExecRequest reads the query parameters; every mistake is a 400 before the upgrade.
func parseExecRequest(r *http.Request) (*execRequest, error) {
	q := r.URL.Query()
	opts := queryOptions(r)
	req := &execRequest{
		allocID:   r.PathValue("alloc_id"),
		task:      q.Get("task"),
		namespace: opts.Namespace,
		token:     opts.AuthToken,
	}
	if req.task == "" {
		return nil, structs.BadRequest("missing task: the task parameter names the task to run the command in")
	}
	raw := q.Get("command")
	if raw == "" {
		return nil, structs.BadRequest("missing command: the command parameter is a JSON array of strings")
	}
	if err := json.Unmarshal([]byte(raw), &req.command); err != nil {
		return nil, structs.BadRequest("invalid command: not a JSON array of strings: %v", err)
	}
	if len(req.command) == 0 || req.command[0] == "" {
		return nil, structs.BadRequest("invalid command: the array is empty or names no program")
	}
	if err := parseQuery(r, queryParam{"tty", &req.tty}, queryParam{"ws_handshake", &req.handshake}); err != nil {
		return nil, err
	}
	return req, nil
}

// allocExec runs a command in a task of an allocation this agent's client runs, relaying its
// streams over a WebSocket (frames as upstream's). Everything that can be refused before the
// upgrade is an ordinary HTTP error: bad parameters, and, when the token comes in the
// header, the ACL decision and an unknown allocation or task. With ws_handshake the token
// comes in the first frame, so those answers become close frames.
func (s *HTTPServer) allocExec(w http.ResponseWriter, r *http.Request) (any, error) {
	req, err := parseExecRequest(r)
	if err != nil {
		return nil, err
	}
	// node is the session on the client that runs the allocation when another node's does.
	var node *websocket.Conn
	defer func() {
		if node != nil {
			node.Close()
		}
	}()
	// An unknown allocation (told only to a caller who could exec in its namespace) is said
	// in a close frame after the upgrade, in upstream's words, which the official client
	// hands its caller as the error; every other refusal before the upgrade is plain HTTP.
	var unknown error
	if !req.handshake {
		if node, err = s.authorizeAndDialExec(r, req); err != nil {
			if !errors.Is(err, structs.ErrAllocNotFound) || !websocket.IsWebSocketUpgrade(r) {
				return nil, execRefusal(req, err)
			}
			unknown = execRefusal(req, err)
		}
	}
	conn := upgradeExec(w, r)
	if conn == nil {
		return nil, nil
	}
	defer conn.Close()
	if unknown != nil {
		closeExec(conn, unknown)
		return nil, nil
	}
	conn.SetReadLimit(execMaxFrame)
	if req.handshake {
		if err := readExecHandshake(conn, req); err != nil {
			closeExec(conn, err)
			return nil, nil
		}
		if node, err = s.authorizeAndDialExec(r, req); err != nil {
			closeExec(conn, execRefusal(req, err))
			return nil, nil
		}
	}
	if node != nil {
		relayExec(r.Context(), conn, node)
		return nil, nil
	}
	s.runExecSession(r.Context(), conn, req)
	return nil, nil
}

// execRefusal words an unknown allocation as upstream does.
func execRefusal(req *execRequest, err error) error {
	if errors.Is(err, structs.ErrAllocNotFound) {
		return structs.NewErrCode(http.StatusNotFound, "Unknown allocation %q", req.allocID)
	}
	return err
}

// authorizeAndDialExec authorizes the request and, for an allocation of another node, opens
// the session on that node's client; node is nil for this agent's own client.
func (s *HTTPServer) authorizeAndDialExec(r *http.Request, req *execRequest) (node *websocket.Conn, err error) {
	err = s.authorizeExec(req)
	var remote *remoteNodeError
	if !errors.As(err, &remote) {
		return nil, err
	}
	return s.dialNodeExec(r.Context(), r, remote.alloc, req.token)
}

// authorizeExec decides whether the caller may run the command, and where: a remoteNodeError
// names the allocation of another node, whose client the request is relayed to.
func (s *HTTPServer) authorizeExec(req *execRequest) error {
	authorize := func(token, namespace, allocID string, nodeExec bool) error {
		return s.authorize(token, structs.ACLAuthorizeRequest{Check: structs.ACLCheckAllocExec, Namespace: namespace, AllocID: allocID, NodeExec: nodeExec})
	}
	c := s.agent.Client()
	if c != nil {
		t, err := c.ExecTarget(req.allocID, req.task)
		switch {
		case err == nil:
			if err := authorize(req.token, t.Namespace, req.allocID, t.FSIsolation == drivers.FSIsolationNone); err != nil {
				return err
			}
			return t.Err
		case !errors.Is(err, structs.ErrAllocNotFound):
			return err
		}
	}

	// Not an allocation of this agent's client. The servers' view says whether it exists and
	// where it runs, told only to a caller who could exec into it.
	alloc, err := s.allocByID(structs.QueryOptions{AuthToken: req.token, Namespace: req.namespace}, req.allocID)
	if err != nil {
		return err
	}
	if alloc == nil {
		// A caller who may exec into nothing of the namespace learns nothing, not even
		// whether the ID exists.
		if err := authorize(req.token, req.namespace, "", false); err != nil {
			if authorize(req.token, req.namespace, "", true) != nil {
				return err
			}
		}
		return structs.NotFound(structs.ErrAllocNotFound)
	}
	driver, _ := allocTaskDriver(alloc, req.task)
	if err := authorize(req.token, alloc.Namespace, alloc.ID, drivers.FSIsolationOf(driver) == drivers.FSIsolationNone); err != nil {
		return err
	}
	if c != nil && alloc.NodeID == c.NodeID() {
		return structs.BadRequest("allocation %s is not running on this node (client status %q)", alloc.ID, alloc.ClientStatus)
	}
	return &remoteNodeError{alloc: alloc}
}

// allocTaskDriver is the driver of the allocation's task named task; ok is false when its
// group has no such task.
func allocTaskDriver(alloc *structs.Allocation, task string) (driver string, ok bool) {
	if alloc.Job == nil {
		return "", false
	}
	if tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup); tg != nil {
		for _, t := range tg.Tasks {
			if t.Name == task {
				return t.Driver, true
			}
		}
	}
	return "", false
}

// execHandshake is the first frame of a ws_handshake session.
type execHandshake struct {
	Version   int    `json:"version"`
	AuthToken string `json:"auth_token"`
}

// readExecHandshake takes the token from the first frame; one given there wins over the
// header's.
func readExecHandshake(conn *websocket.Conn, req *execRequest) error {
	_ = conn.SetReadDeadline(time.Now().Add(execHandshakeTimeout))
	defer conn.SetReadDeadline(time.Time{})
	var hs execHandshake
	_, raw, err := conn.ReadMessage()
	if err != nil {
		return structs.BadRequest("reading the handshake frame: %v", err)
	}
	if err := json.Unmarshal(raw, &hs); err != nil {
		return structs.BadRequest("invalid handshake frame: %v", err)
	}
	if hs.Version != execHandshakeVersion {
		return structs.BadRequest("unsupported handshake version %d", hs.Version)
	}
	if hs.AuthToken != "" {
		req.token = hs.AuthToken
	}
	return nil
}

// errExecCallerGone ends a session whose caller closed the connection or stopped reading:
// there is no one left to tell anything.
var errExecCallerGone = errors.New("the caller went away")

// errAgentShuttingDown ends the sessions of an agent that stops.
var errAgentShuttingDown = errors.New("agent shutting down")

// runExecSession runs the command and relays its streams until it exits, the caller leaves
// (which kills the command) or the agent stops. The last frame is the exit code, then a
// normal close; a failure ends the session with a close frame carrying the error.
func (s *HTTPServer) runExecSession(parent context.Context, conn *websocket.Conn, req *execRequest) {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)

	var writeMu sync.Mutex
	send := func(frame *api.ExecStreamingOutput) error {
		raw, err := json.Marshal(frame)
		if err != nil {
			return err
		}
		writeMu.Lock()
		defer writeMu.Unlock()
		_ = conn.SetWriteDeadline(time.Now().Add(execWriteTimeout))
		if err = conn.WriteMessage(websocket.TextMessage, raw); err != nil {
			cancel(errExecCallerGone)
		}
		return err
	}

	stdinR, stdinW := io.Pipe()
	// Unblocks whatever still reads stdin or writes to it once the session is over.
	defer stdinR.CloseWithError(io.ErrClosedPipe)
	resize := make(chan drivers.TerminalSize, 1)
	go readExecInput(conn, stdinW, resize, cancel)

	code, err := s.agent.Client().Exec(ctx, req.allocID, req.task, &drivers.ExecOptions{
		Command: req.command,
		TTY:     req.tty,
		Stdin:   stdinR,
		Stdout:  execFrameWriter{send: send, stdout: true},
		Stderr:  execFrameWriter{send: send},
		Resize:  resize,
	})

	if err != nil {
		switch cause := context.Cause(ctx); {
		case ctx.Err() == nil:
			closeExec(conn, err)
		case errors.Is(cause, errExecCallerGone):
		case parent.Err() != nil:
			closeExecCode(conn, websocket.CloseGoingAway, errAgentShuttingDown.Error())
		default:
			closeExec(conn, cause)
		}
		return
	}
	closed := &api.ExecStreamingIOOperation{Close: true}
	if send(&api.ExecStreamingOutput{Stdout: closed}) != nil ||
		send(&api.ExecStreamingOutput{Stderr: closed}) != nil ||
		send(&api.ExecStreamingOutput{Exited: true, Result: &api.ExecStreamingExitResult{ExitCode: code}}) != nil {
		return
	}
	closeExecCode(conn, websocket.CloseNormalClosure, "")
}

// readExecInput passes the caller's frames on: stdin data and its end, terminal sizes;
// empty frames are the official client's heartbeats. It ends the session when the caller
// goes away or sends a frame that is not one of these.
func readExecInput(conn *websocket.Conn, stdin *io.PipeWriter, resize chan drivers.TerminalSize, cancel context.CancelCauseFunc) {
	for {
		_, raw, err := conn.ReadMessage()
		if err != nil {
			_ = stdin.CloseWithError(errExecCallerGone)
			cancel(errExecCallerGone)
			return
		}
		var in api.ExecStreamingInput
		if err := json.Unmarshal(raw, &in); err != nil {
			cause := structs.BadRequest("invalid frame: %v", err)
			_ = stdin.CloseWithError(cause)
			cancel(cause)
			return
		}
		if in.Stdin != nil {
			if len(in.Stdin.Data) > 0 {
				// Blocks while the command does not read: that is the caller's backpressure.
				// The session's end unblocks it.
				if _, err := stdin.Write(in.Stdin.Data); err != nil {
					continue
				}
			}
			if in.Stdin.Close {
				_ = stdin.Close()
			}
		}
		if in.TTYSize != nil {
			size := drivers.TerminalSize{Height: in.TTYSize.Height, Width: in.TTYSize.Width}
			// Only the latest size matters: replace one nobody took yet.
			select {
			case resize <- size:
			default:
				select {
				case <-resize:
				default:
				}
				select {
				case resize <- size:
				default:
				}
			}
		}
	}
}

// execFrameWriter turns a command's output into stdout or stderr frames.
type execFrameWriter struct {
	send   func(*api.ExecStreamingOutput) error
	stdout bool
}

func (w execFrameWriter) Write(p []byte) (int, error) {
	op := &api.ExecStreamingIOOperation{Data: p}
	frame := &api.ExecStreamingOutput{Stderr: op}
	if w.stdout {
		frame = &api.ExecStreamingOutput{Stdout: op}
	}
	if err := w.send(frame); err != nil {
		return 0, err
	}
	return len(p), nil
}

// closeExec ends a session with an error as upstream does: a close frame whose reason is the
// error's text, 1011 for a server error and 1008 (policy violation) for anything else.
func closeExec(conn *websocket.Conn, err error) {
	code := websocket.ClosePolicyViolation
	if structs.ErrorCode(err) >= http.StatusInternalServerError {
		code = websocket.CloseInternalServerErr
	}
	closeExecCode(conn, code, err.Error())
}

// maxCloseReason is the longest reason a close frame carries (125 bytes less the code).
const maxCloseReason = 123

func closeExecCode(conn *websocket.Conn, code int, reason string) {
	if len(reason) > maxCloseReason {
		reason = reason[:maxCloseReason]
		for !utf8.ValidString(reason) {
			reason = reason[:len(reason)-1]
		}
	}
	_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason),
		time.Now().Add(execWriteTimeout))
}

// upgradeWriter lets the WebSocket upgrader take the connection over from the agent's
// statusWriter, and records the 101 for the request log.
type upgradeWriter struct {
	*statusWriter
}

func (u upgradeWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(u.ResponseWriter).Hijack()
	if err == nil {
		u.status, u.wroteHeader = http.StatusSwitchingProtocols, true
	}
	return conn, rw, err
}

// upgradeExec upgrades an exec request to a websocket; nil when the upgrader refused it, in
// which case it has answered already.
func upgradeExec(w http.ResponseWriter, r *http.Request) *websocket.Conn {
	if sw, ok := w.(*statusWriter); ok {
		w = upgradeWriter{sw}
	}
	conn, err := execUpgrader.Upgrade(w, r, nil)
	if err != nil {
		return nil
	}
	return conn
}
