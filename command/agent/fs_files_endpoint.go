package agent

import (
	"io"
	"net/http"
	"strconv"

	"github.com/nomadfork/nomad/client"
	"github.com/nomadfork/nomad/structs"
)

// The allocation file system routes, as upstream's: ls and stat answer JSON
// (api.AllocFileInfo), cat and readat the file's bytes, stream upstream's frames. Paths are
// relative to the allocation directory ("/" is the directory itself). The caller needs
// read-fs in the allocation's namespace; an allocation of another node is served by that
// node's client over the same relay as logs, after this agent authorized the caller.

// fsRoute is one file system route: how it parses its request and serves it on the client
// that has the allocation.
type fsRoute struct {
	parse func(r *http.Request) (*fsRequest, error)
	serve func(s *HTTPServer, w http.ResponseWriter, r *http.Request, c *client.Client, req *fsRequest) (any, error)
}

var (
	fsRouteList   = fsRoute{parse: parseFSPathRequest(false), serve: (*HTTPServer).fsList}
	fsRouteStat   = fsRoute{parse: parseFSPathRequest(false), serve: (*HTTPServer).fsStat}
	fsRouteCat    = fsRoute{parse: parseFSPathRequest(true), serve: (*HTTPServer).fsCat}
	fsRouteReadAt = fsRoute{parse: parseFSReadAtRequest, serve: (*HTTPServer).fsReadAt}
	fsRouteStream = fsRoute{parse: parseFSStreamRequest, serve: (*HTTPServer).fsStream}
)

// streamedFSRoutes are the same routes as registerFSRoutes gives the HTTP API, served to
// servers over streams (client_streams.go).
var streamedFSRoutes = map[string]fsRoute{
	"/v1/client/fs/ls/{alloc_id}":     fsRouteList,
	"/v1/client/fs/stat/{alloc_id}":   fsRouteStat,
	"/v1/client/fs/cat/{alloc_id}":    fsRouteCat,
	"/v1/client/fs/readat/{alloc_id}": fsRouteReadAt,
	"/v1/client/fs/stream/{alloc_id}": fsRouteStream,
}

// registerStreamedFSRoutes serves the file system routes to servers over streams: the
// server authorized the caller already.
func (s *HTTPServer) registerStreamedFSRoutes(mux routeMux) {
	for path, rt := range streamedFSRoutes {
		mux.Handle(path, s.wrap(getOnly(func(w http.ResponseWriter, r *http.Request) (any, error) {
			req, err := rt.parse(r)
			if err != nil {
				return nil, err
			}
			c := s.agent.Client()
			if c == nil {
				return nil, structs.NotFound(structs.ErrAllocNotFound)
			}
			return rt.serve(s, w, r, c, req)
		})))
	}
}

// fsHandler parses, authorizes (read-fs), and serves here or relays to the allocation's node.
func (s *HTTPServer) fsHandler(rt fsRoute) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) (any, error) {
		req, err := rt.parse(r)
		if err != nil {
			return nil, err
		}
		alloc, err := s.authorizeAlloc(queryOptions(r), req.allocID, s.authorizeFunc(structs.ACLCheckReadFS))
		if err != nil {
			return nil, err
		}
		c := s.agent.Client()
		if c == nil || alloc.NodeID != c.NodeID() {
			return s.proxyToNode(w, r, alloc.NodeID)
		}
		return rt.serve(s, w, r, c, req)
	}
}

// fsRequest is one file system request, parsed.
type fsRequest struct {
	allocID string
	path    string
	offset  int64
	limit   int64
	fromEnd bool
	follow  bool
	plain   bool
}

func parseFSPathRequest(needPath bool) func(r *http.Request) (*fsRequest, error) {
	return func(r *http.Request) (*fsRequest, error) {
		req := &fsRequest{allocID: r.PathValue("alloc_id"), path: r.URL.Query().Get("path")}
		if req.path == "" {
			if needPath {
				return nil, structs.BadRequest("missing path: the path parameter names the file to read")
			}
			req.path = "/"
		}
		return req, nil
	}
}

func parseFSReadAtRequest(r *http.Request) (*fsRequest, error) {
	req, err := parseFSPathRequest(true)(r)
	if err != nil {
		return nil, err
	}
	if req.offset, err = int64Query(r, "offset"); err != nil {
		return nil, err
	}
	if req.offset < 0 {
		return nil, structs.BadRequest("invalid offset %d: a number of bytes, not negative", req.offset)
	}
	// A limit of 0 or less reads to the end, as upstream's client documents.
	if req.limit, err = int64Query(r, "limit"); err != nil {
		return nil, err
	}
	return req, nil
}

func parseFSStreamRequest(r *http.Request) (*fsRequest, error) {
	req, err := parseFSPathRequest(true)(r)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	if req.offset, err = int64Query(r, "offset"); err != nil {
		return nil, err
	}
	if req.offset < 0 {
		return nil, structs.BadRequest("invalid offset %d: a number of bytes, not negative", req.offset)
	}
	if req.fromEnd, err = originIsEnd(r); err != nil {
		return nil, err
	}
	// Upstream's stream follows unless told not to.
	req.follow = true
	if q.Get("follow") != "" {
		if req.follow, err = boolQuery(r, "follow"); err != nil {
			return nil, err
		}
	}
	if req.plain, err = boolQuery(r, "plain"); err != nil {
		return nil, err
	}
	return req, nil
}

// int64Query is the integer query parameter name, 0 when absent.
func int64Query(r *http.Request, name string) (int64, error) {
	raw := r.URL.Query().Get(name)
	if raw == "" {
		return 0, nil
	}
	v, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return 0, structs.BadRequest("invalid %s %q: an integer", name, raw)
	}
	return v, nil
}

func (s *HTTPServer) fsList(_ http.ResponseWriter, _ *http.Request, c *client.Client, req *fsRequest) (any, error) {
	return c.FSList(req.allocID, req.path)
}

func (s *HTTPServer) fsStat(_ http.ResponseWriter, _ *http.Request, c *client.Client, req *fsRequest) (any, error) {
	return c.FSStat(req.allocID, req.path)
}

func (s *HTTPServer) fsCat(w http.ResponseWriter, r *http.Request, c *client.Client, req *fsRequest) (any, error) {
	req.limit = 0
	return s.fsReadAt(w, r, c, req)
}

// fsReadAt writes limit bytes (all with limit <= 0) of the file from offset.
func (s *HTTPServer) fsReadAt(w http.ResponseWriter, _ *http.Request, c *client.Client, req *fsRequest) (any, error) {
	f, err := c.FSOpen(req.allocID, req.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var src io.Reader = io.NewSectionReader(f, req.offset, 1<<62)
	if req.limit > 0 {
		src = io.LimitReader(src, req.limit)
	}
	h := w.Header()
	h.Del("Content-Encoding")
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if _, err := io.Copy(w, src); err != nil {
		s.logger.Debug("reading an allocation file ended early", "error", err)
	}
	return nil, nil
}

// fsStream streams the file as frames (or plain bytes) and, by default, follows it until
// the caller leaves or the file is deleted.
func (s *HTTPServer) fsStream(w http.ResponseWriter, r *http.Request, c *client.Client, req *fsRequest) (any, error) {
	f, err := c.FSOpen(req.allocID, req.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd, err := f.StreamReader(req.offset, req.fromEnd)
	if err != nil {
		return nil, err
	}
	return s.sendStream(w, r, rd, streamSpec{plain: req.plain, follow: req.follow})
}
