package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
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

func (s *HTTPServer) registerFSRoutes(mux *http.ServeMux) {
	s.handle(mux, "/v1/client/fs/logs/{alloc_id}", methods{"GET": s.allocLogs})
}

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
	var err error
	if req.follow, err = boolQuery(r, "follow"); err != nil {
		return nil, err
	}
	if req.plain, err = boolQuery(r, "plain"); err != nil {
		return nil, err
	}
	switch origin := q.Get("origin"); origin {
	case "", "start":
	case "end":
		req.fromEnd = true
	default:
		return nil, structs.BadRequest("invalid origin %q: start or end", origin)
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
// bytes alone with plain=true. With follow=true it keeps sending what the task writes until
// the task is dead or the caller leaves.
func (s *HTTPServer) allocLogs(w http.ResponseWriter, r *http.Request) (any, error) {
	req, err := parseLogRequest(r)
	if err != nil {
		return nil, err
	}
	f, err := s.openLog(queryOptions(r), req)
	var remote *remoteNodeError
	if errors.As(err, &remote) {
		return s.proxyLogs(w, r, remote.alloc)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return s.sendLog(w, r, req, f)
}

// sendLog streams the open log f from req's offset.
func (s *HTTPServer) sendLog(w http.ResponseWriter, r *http.Request, req *logRequest, f *os.File) (any, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pos := min(req.offset, info.Size())
	if req.fromEnd {
		pos = info.Size() - pos
	}
	if _, err := f.Seek(pos, io.SeekStart); err != nil {
		return nil, err
	}

	h := w.Header()
	h.Del("Content-Encoding")
	if req.plain {
		h.Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		h.Set("Content-Type", "application/json")
	}
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	enc := json.NewEncoder(w)
	file := "alloc/logs/" + client.LogFileName(req.task, req.logType)
	lastSent := time.Now()
	send := func(frame *api.StreamFrame) error {
		var err error
		if req.plain {
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
	// drain sends everything up to the current end of the file.
	buf := make([]byte, logFrameSize)
	drain := func() error {
		for {
			n, err := f.Read(buf)
			if n > 0 {
				pos += int64(n)
				if err := send(&api.StreamFrame{Offset: pos, Data: buf[:n], File: file}); err != nil {
					return err
				}
			}
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
		}
	}

	c := s.agent.Client()
	tick := time.NewTicker(logPollInterval)
	defer tick.Stop()
	for {
		// Asked before reading, so that what a task wrote just before it ended is still read.
		live := req.follow && c.TaskLive(req.allocID, req.task)
		if err := drain(); err != nil || !live {
			return nil, nil
		}
		select {
		case <-r.Context().Done():
			return nil, nil
		case <-tick.C:
		}
		// A file shorter than what was read was rotated (copied to an archive and
		// truncated, client/logrotate.go): what it holds now is new, read from its start.
		if info, err := f.Stat(); err == nil && info.Size() < pos {
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return nil, nil
			}
			pos = 0
		}
		if !req.plain && time.Since(lastSent) >= logHeartbeat {
			if send(&api.StreamFrame{}) != nil {
				return nil, nil
			}
		}
	}
}

// openLog authorizes the request and opens the log on this agent's client. The servers'
// view of the allocation decides: its logs outlive the client's runner of it.
func (s *HTTPServer) openLog(opts structs.QueryOptions, req *logRequest) (*os.File, error) {
	authorize := s.srv.Endpoints.ACL.AuthorizeReadLogs
	alloc, err := s.srv.State().AllocByID(nil, req.allocID)
	if err != nil {
		return nil, err
	}
	if alloc == nil {
		// A caller who may read no logs of the namespace learns nothing, not even whether
		// the ID exists.
		if err := authorize(opts.AuthToken, opts.Namespace); err != nil {
			return nil, err
		}
		return nil, structs.NotFound(structs.ErrAllocNotFound)
	}
	if err := authorize(opts.AuthToken, alloc.Namespace); err != nil {
		return nil, err
	}
	if _, ok := allocTaskDriver(alloc, req.task); !ok {
		return nil, &structs.CodedError{Code: http.StatusNotFound, Err: structs.ErrNotFound,
			Msg: fmt.Sprintf("task %q not found in allocation %s", req.task, alloc.ID)}
	}
	c := s.agent.Client()
	if c == nil || alloc.NodeID != c.NodeID() {
		return nil, &remoteNodeError{alloc: alloc}
	}
	return c.OpenTaskLog(alloc.ID, req.task, req.logType)
}
