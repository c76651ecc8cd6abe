package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client"
	"github.com/nomadfork/nomad/structs"
)

const (
	// logPollInterval is how often a followed log is checked for more output.
	logPollInterval = 250 * time.Millisecond
	// logHeartbeat is how often a followed log with nothing new sends an empty frame, so
	// that the caller and proxies know it is alive.
	logHeartbeat = 10 * time.Second
	// logFrameSize bounds the data of one frame.
	logFrameSize = 64 << 10
)

// logRequest is one logs request, parsed.
type logRequest struct {
	allocID string
	task    string
	logType string
	follow  bool
	plain   bool
	// fromEnd counts offset back from the end of the log instead of from its start.
	fromEnd bool
	offset  int64
}

func parseLogRequest(r *http.Request) (*logRequest, error) {
	q := r.URL.Query()
	req := &logRequest{allocID: r.PathValue("alloc_id"), task: q.Get("task"), logType: q.Get("type")}
	if req.task == "" {
		return nil, structs.BadRequest("missing task: the task parameter names the task whose logs to read")
	}
	if req.logType != "stdout" && req.logType != "stderr" {
		return nil, structs.BadRequest("invalid log type %q: the type parameter is stdout or stderr", req.logType)
	}
	if err := parseQuery(r, queryParam{"follow", &req.follow}, queryParam{"plain", &req.plain}); err != nil {
		return nil, err
	}
	var err error
	if req.fromEnd, err = originIsEnd(r); err != nil {
		return nil, err
	}
	if raw := q.Get("offset"); raw != "" {
		if req.offset, err = strconv.ParseInt(raw, 10, 64); err != nil || req.offset < 0 {
			return nil, structs.BadRequest("invalid offset %q: a number of bytes, not negative", raw)
		}
	}
	return req, nil
}

// allocLogs streams a task's stdout or stderr log from this agent's client, as upstream's
// route does: JSON stream frames ({"Offset","Data","File"}; "{}" is a heartbeat), or the
// bytes alone with plain=true. The log spans its rotated archives (oldest first) and then the
// live file: offsets count across them. With follow=true it keeps sending what the task
// writes, through rotations, until the task is dead or the caller leaves.
func (s *HTTPServer) allocLogs(w http.ResponseWriter, r *http.Request) (any, error) {
	req, err := parseLogRequest(r)
	if err != nil {
		return nil, err
	}
	alloc, err := s.authorizeLogs(queryOptions(r), req)
	if err != nil {
		return nil, err
	}
	c := s.agent.Client()
	if c == nil || alloc.NodeID != c.NodeID() {
		return s.proxyToNode(w, r, alloc.NodeID)
	}
	return s.serveLogs(w, r, c, req)
}

// serveLogs streams a log of an allocation of this agent's client; the caller authorized.
func (s *HTTPServer) serveLogs(w http.ResponseWriter, r *http.Request, c *client.Client, req *logRequest) (any, error) {
	rd, err := c.OpenTaskLogReader(req.allocID, req.task, req.logType, req.offset, req.fromEnd)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return s.sendStream(w, r, rd, streamSpec{plain: req.plain, follow: req.follow,
		live: func() bool { return c.TaskLive(req.allocID, req.task) }})
}

// chunkReader is what a stream is read from: a task's log or an allocation file.
type chunkReader interface {
	// Next returns the next chunk; io.EOF when there is nothing more for now.
	Next(buf []byte) (*client.Chunk, error)
}

// streamSpec says how a stream is sent.
type streamSpec struct {
	plain  bool
	follow bool
	// live reports whether more may still come: a followed stream ends once it is false
	// and everything was sent.
	live func() bool
}

// sendStream sends what rd reads as upstream's stream frames, or as plain bytes, and with
// follow goes on polling for more until the caller leaves, live turns false, or the file is
// deleted. Frames are always whole JSON lines: a proxy relays them byte for byte.
func (s *HTTPServer) sendStream(w http.ResponseWriter, r *http.Request, rd chunkReader, spec streamSpec) (any, error) {
	h := w.Header()
	h.Del("Content-Encoding")
	if spec.plain {
		h.Set("Content-Type", "text/plain; charset=utf-8")
		h.Set("X-Content-Type-Options", "nosniff")
	} else {
		h.Set("Content-Type", "application/json")
	}
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	enc := json.NewEncoder(w)
	lastSent := time.Now()
	send := func(frame *api.StreamFrame) error {
		var err error
		if spec.plain {
			if len(frame.Data) == 0 {
				return nil
			}
			_, err = w.Write(frame.Data)
		} else {
			err = enc.Encode(frame)
		}
		if err == nil && flusher != nil {
			flusher.Flush()
		}
		lastSent = time.Now()
		return err
	}
	buf := make([]byte, logFrameSize)
	// drain sends everything there is now; ended reports a deleted file.
	drain := func() (ended bool, err error) {
		for {
			chunk, err := rd.Next(buf)
			if chunk != nil {
				if chunk.Event != "" && !spec.plain {
					if err := send(&api.StreamFrame{File: chunk.File, FileEvent: chunk.Event}); err != nil {
						return true, err
					}
				}
				if len(chunk.Data) > 0 {
					if err := send(&api.StreamFrame{Offset: chunk.Offset, Data: chunk.Data, File: chunk.File}); err != nil {
						return true, err
					}
				}
				if chunk.Event == client.FileEventDeleted {
					return true, nil
				}
			}
			if errors.Is(err, io.EOF) {
				return false, nil
			}
			if err != nil {
				return true, err
			}
		}
	}

	tick := time.NewTicker(logPollInterval)
	defer tick.Stop()
	for {
		// Asked before reading, so that what a task wrote just before it ended is still read.
		live := spec.follow && (spec.live == nil || spec.live())
		ended, err := drain()
		if err != nil {
			s.logger.Debug("stream ended", "path", r.URL.Path, "error", err)
		}
		if ended || !live {
			return nil, nil
		}
		select {
		case <-r.Context().Done():
			return nil, nil
		case <-tick.C:
		}
		if !spec.plain && time.Since(lastSent) >= logHeartbeat {
			if send(&api.StreamFrame{}) != nil {
				return nil, nil
			}
		}
	}
}

// authorizeLogs authorizes the request and finds its allocation and task. The servers'
// view of the allocation decides: its logs outlive the client's runner of it.
func (s *HTTPServer) authorizeLogs(opts structs.QueryOptions, req *logRequest) (*structs.Allocation, error) {
	alloc, err := s.authorizeAlloc(opts, req.allocID, s.authorizeFunc(structs.ACLCheckReadLogs))
	if err != nil {
		return nil, err
	}
	if _, ok := allocTaskDriver(alloc, req.task); !ok {
		return nil, &structs.CodedError{Code: http.StatusNotFound, Err: structs.ErrNotFound,
			Msg: fmt.Sprintf("task %q not found in allocation %s", req.task, alloc.ID)}
	}
	return alloc, nil
}

// authorizeAlloc finds the allocation allocID and checks the caller with authorize in its
// namespace. A caller refused in the request's namespace learns nothing, not even whether
// the ID exists.
func (s *HTTPServer) authorizeAlloc(opts structs.QueryOptions, allocID string, authorize func(secret, namespace string) error) (*structs.Allocation, error) {
	alloc, err := s.allocByID(opts, allocID)
	if err != nil {
		return nil, err
	}
	if alloc == nil {
		if err := authorize(opts.AuthToken, opts.Namespace); err != nil {
			return nil, err
		}
		return nil, structs.NotFound(structs.ErrAllocNotFound)
	}
	if err := authorize(opts.AuthToken, alloc.Namespace); err != nil {
		return nil, err
	}
	return alloc, nil
}

// originIsEnd reads the origin parameter of the log and file streams: whether offset counts
// back from the end ("end") or from the start ("start", the default).
func originIsEnd(r *http.Request) (bool, error) {
	switch origin := r.URL.Query().Get("origin"); origin {
	case "", "start":
		return false, nil
	case "end":
		return true, nil
	default:
		return false, structs.BadRequest("invalid origin %q: start or end", origin)
	}
}
