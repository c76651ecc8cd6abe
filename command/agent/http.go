package agent

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nomadfork/nomad/internal/connlimit"
	"github.com/nomadfork/nomad/nomad"
	"github.com/nomadfork/nomad/structs"
)

// maxRequestBodySize bounds every request body; a larger one is refused with 413 before
// anything is decoded, so one request cannot make the agent buffer an arbitrary amount.
const maxRequestBodySize = 10 << 20

// errInvalidMethod is what every route answers to a verb it does not serve (upstream's text).
var errInvalidMethod = structs.NewErrCode(http.StatusMethodNotAllowed, "Invalid method")

// HTTPServer serves the /v1 API of one agent. Handlers only parse the request, call one
// server RPC through rpc and return its answer; authorisation, validation and defaults live
// behind the RPC boundary, so a client-only agent answers as a server agent does.
type HTTPServer struct {
	agent *Agent
	// srv is the agent's own server, nil on a client-only agent: only what acts on that
	// server itself (gossip, scheduling workers, its state for relays) reads it.
	srv *nomad.Server
	// rpc reaches the servers' RPCs: every handler calls the cluster through it.
	rpc      clusterRPC
	logger   hclog.Logger
	listener net.Listener
	httpSrv  *http.Server
	mux      *http.ServeMux
	// conns counts the connections each client address holds
	// (limits.http_max_conns_per_client).
	conns *connlimit.Limiter
}

// handlerFunc is one endpoint. It returns the value to encode as JSON, or an error whose HTTP
// status comes from structs.ErrorCode. A handler that wrote the response itself (a stream)
// returns nil, nil.
type handlerFunc func(w http.ResponseWriter, r *http.Request) (any, error)

// methods maps HTTP verbs to the handlers of one path.
type methods map[string]handlerFunc

func newHTTPServer(a *Agent, ln net.Listener) *HTTPServer {
	s := &HTTPServer{
		agent:    a,
		srv:      a.server,
		logger:   a.logger.Named("http"),
		listener: ln,
		mux:      http.NewServeMux(),
	}
	if a.server != nil {
		s.rpc = serverRPC{srv: a.server}
	} else {
		s.rpc = a.rpcServers
	}
	s.registerHandlers(s.mux)
	bodyIdle := httpBodyIdleTimeout
	if a.config.httpBodyIdleTimeout > 0 {
		bodyIdle = a.config.httpBodyIdleTimeout
	}
	headerWait := headerTimeout(a.httpTLS != nil, a.config.Limits)
	if a.config.httpHeaderTimeout > 0 && a.httpTLS == nil {
		headerWait = a.config.httpHeaderTimeout
	}
	s.httpSrv = &http.Server{
		Handler:           withBodyDeadline(s.mux, bodyIdle),
		ReadHeaderTimeout: headerWait,
		IdleTimeout:       2 * time.Minute,
		// Requests inherit the agent's lifetime, so waits the agent runs itself end at
		// shutdown instead of holding it up.
		BaseContext: func(net.Listener) context.Context { return a.ctx },
		ErrorLog:    s.logger.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true}),
	}
	return s
}

// registerHandlers installs every route. Each resource file owns a register*Routes method;
// adding a resource is one line here.
func (s *HTTPServer) registerHandlers(mux *http.ServeMux) {
	s.registerJobRoutes(mux)
	s.registerEvalRoutes(mux)
	s.registerNamespaceRoutes(mux)
	s.registerStatusRoutes(mux)
	s.registerAgentRoutes(mux)
	s.registerAgentHostRoutes(mux)
	s.registerAgentRuntimeRoutes(mux)
	s.registerAgentReloadRoutes(mux)
	s.registerOperatorRoutes(mux)
	s.registerOperatorSnapshotRoutes(mux)
	s.registerACLRoutes(mux)
	s.registerACLAuthRoutes(mux)
	s.registerACLIdentityRoutes(mux)
	s.registerEventRoutes(mux)
	s.registerEventSinkRoutes(mux)
	s.registerPurgeHistoryRoutes(mux)
	s.registerJobProtectionRoutes(mux)
	s.registerAllocRoutes(mux)
	s.registerNodeRoutes(mux)
	s.registerClientAllocRoutes(mux)
	s.registerClientAllocControlRoutes(mux)
	s.registerNodeMetaRoutes(mux)
	s.registerNodeIdentityRoutes(mux)
	s.registerFSRoutes(mux)
	s.registerJobEvalRoutes(mux)
	s.registerJobDispatchRoutes(mux)
	s.registerJobPlanRoutes(mux)
	s.registerJobSubmissionRoutes(mux)
	s.registerMonitorRoutes(mux)
	s.registerMetricsRoutes(mux)
	s.registerKeyringRoutes(mux)
	s.registerDeploymentRoutes(mux)
	s.registerVariableRoutes(mux)
	s.registerSchedulerConfigRoutes(mux)
	s.registerNodePoolRoutes(mux)
	s.registerSearchRoutes(mux)
	s.registerScalingRoutes(mux)
	s.registerVolumeRoutes(mux)
	s.registerServiceRoutes(mux)
	s.registerEnterpriseRoutes(mux)
	if s.agent.config.EnableDebug {
		s.registerDebugRoutes(mux)
	}
	s.registerUIRoutes(mux)

	// Anything else under any path is unknown.
	mux.Handle("/", s.wrap(func(_ http.ResponseWriter, r *http.Request) (any, error) {
		return nil, structs.NewErrCode(http.StatusNotFound, "Invalid URL path %q", r.URL.Path)
	}))
}

// handle registers the handlers of one path pattern; any other verb gets 405.
func (s *HTTPServer) handle(mux *http.ServeMux, pattern string, m methods) {
	mux.Handle(pattern, s.wrap(func(w http.ResponseWriter, r *http.Request) (any, error) {
		fn, ok := m[r.Method]
		if !ok {
			return nil, errInvalidMethod
		}
		return fn(w, r)
	}))
}

func (s *HTTPServer) serve() {
	if err := s.httpSrv.Serve(s.listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
		s.logger.Error("HTTP server stopped", "error", err)
	}
}

// shutdown stops accepting requests and waits for those in flight until ctx ends, then
// closes what is left.
func (s *HTTPServer) shutdown(ctx context.Context) {
	if err := s.httpSrv.Shutdown(ctx); err != nil {
		_ = s.httpSrv.Close()
	}
}

// requestOptions are the common query parameters, parsed once by wrap.
type requestOptions struct {
	query structs.QueryOptions
	write structs.WriteRequest
	// pretty asks for indented JSON.
	pretty bool
}

type requestOptionsKey struct{}

// queryOptions returns the request's common read parameters.
func queryOptions(r *http.Request) structs.QueryOptions {
	if o, ok := r.Context().Value(requestOptionsKey{}).(*requestOptions); ok {
		return o.query
	}
	return structs.QueryOptions{Namespace: structs.DefaultNamespace}
}

// writeRequest returns the request's common write parameters.
func writeRequest(r *http.Request) structs.WriteRequest {
	if o, ok := r.Context().Value(requestOptionsKey{}).(*requestOptions); ok {
		return o.write
	}
	return structs.WriteRequest{Namespace: structs.DefaultNamespace}
}

// parseRequestOptions reads region, namespace, index, wait, stale, prefix, pretty, the
// paging parameters (filter, per_page, next_token, reverse) and the token. The token comes only from headers, never from the URL, so it cannot end up in logs.
func (s *HTTPServer) parseRequestOptions(r *http.Request) (*requestOptions, error) {
	q := r.URL.Query()
	o := &requestOptions{}

	region := q.Get("region")
	if region == "" {
		region = s.agent.config.Region
	}
	if region != s.agent.config.Region {
		return nil, structs.NewErrCode(http.StatusInternalServerError, "No path to region")
	}
	namespace := q.Get("namespace")
	if namespace == "" {
		namespace = structs.DefaultNamespace
	}
	token := r.Header.Get("X-Nomad-Token")
	if token == "" {
		if auth := r.Header.Get("Authorization"); len(auth) > 7 && strings.EqualFold(auth[:7], "bearer ") {
			token = strings.TrimSpace(auth[7:])
		}
	}

	o.query = structs.QueryOptions{Region: region, Namespace: namespace, Prefix: q.Get("prefix"), AuthToken: token}
	o.write = structs.WriteRequest{Region: region, Namespace: namespace, AuthToken: token}

	if raw := q.Get("index"); raw != "" {
		index, err := strconv.ParseUint(raw, 10, 64)
		if err != nil {
			return nil, structs.BadRequest("Unable to parse index: %v", err)
		}
		o.query.MinQueryIndex = index
	}
	if raw := q.Get("wait"); raw != "" {
		wait, err := time.ParseDuration(raw)
		if err != nil {
			return nil, structs.BadRequest("Invalid wait time: %v", err)
		}
		if wait < 0 {
			return nil, structs.BadRequest("Invalid wait time: must not be negative")
		}
		o.query.MaxQueryTime = wait
	}
	o.query.Filter = q.Get("filter")
	o.query.NextToken = q.Get("next_token")
	if raw := q.Get("per_page"); raw != "" {
		perPage, err := strconv.ParseInt(raw, 10, 32)
		if err != nil || perPage < 0 {
			return nil, structs.BadRequest("Invalid per_page %q: it must be an integer from 0 to %d", raw, math.MaxInt32)
		}
		o.query.PerPage = int32(perPage)
	}
	var err error
	if o.query.Reverse, err = flagParam(q, "reverse"); err != nil {
		return nil, err
	}
	if o.query.AllowStale, err = flagParam(q, "stale"); err != nil {
		return nil, err
	}
	if o.pretty, err = flagParam(q, "pretty"); err != nil {
		return nil, err
	}
	return o, nil
}

// flagParam reads a parameter that is true when present without a value (?stale, ?pretty).
func flagParam(q map[string][]string, name string) (bool, error) {
	vals, ok := q[name]
	if !ok {
		return false, nil
	}
	if len(vals) == 0 || vals[0] == "" {
		return true, nil
	}
	return parseBool(name, vals[0])
}

// wrap turns a handlerFunc into an http.Handler: it bounds the body, parses the common
// parameters, recovers panics, encodes the result and maps errors to status codes with
// structs.ErrorCode (never by their text).
func (s *HTTPServer) wrap(fn handlerFunc) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		start := time.Now()
		w := &statusWriter{ResponseWriter: rw}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.logger.Error("panic in HTTP handler", "method", r.Method, "path", r.URL.Path,
					"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if !w.wroteHeader {
					s.writeError(w, r, structs.NewErrCode(http.StatusInternalServerError, "internal server error"))
				}
			}
			// The path only: query strings are the caller's business and headers hold tokens.
			s.logger.Debug("request complete", "method", r.Method, "path", r.URL.Path,
				"status", w.status, "duration", time.Since(start))
		}()

		if !boundsOwnBody[r.URL.Path] {
			if r.ContentLength > maxRequestBodySize {
				s.writeError(w, r, errBodyTooLarge)
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, maxRequestBodySize)
		}

		opts, err := s.parseRequestOptions(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), requestOptionsKey{}, opts))

		result, err := fn(w, r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if w.wroteHeader {
			return
		}
		s.writeJSON(w, r, opts.pretty, result)
	})
}

// boundsOwnBody names the paths whose handlers take bodies past maxRequestBodySize and bound
// them with a limit of their own (a snapshot upload).
var boundsOwnBody = map[string]bool{"/v1/operator/snapshot": true}

var errBodyTooLarge = structs.NewErrCode(http.StatusRequestEntityTooLarge,
	"Request body too large: the limit is %d bytes", maxRequestBodySize)

func (s *HTTPServer) writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := structs.ErrorCode(err)
	// A full disk is logged by the server that refused, at most once per interval; a line per
	// refused request would flood the log (and the disk) of a client retrying in a loop.
	if code >= http.StatusInternalServerError && code != http.StatusInsufficientStorage {
		s.logger.Error("request failed", "method", r.Method, "path", r.URL.Path, "error", err)
	}
	h := w.Header()
	h.Del("Content-Encoding")
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, err.Error())
}

func (s *HTTPServer) writeJSON(w http.ResponseWriter, r *http.Request, pretty bool, v any) {
	var buf []byte
	var err error
	if pretty {
		buf, err = json.MarshalIndent(v, "", "    ")
	} else {
		buf, err = json.Marshal(v)
	}
	if err != nil {
		s.writeError(w, r, fmt.Errorf("encoding response: %w", err))
		return
	}
	if pretty {
		buf = append(buf, '\n')
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if len(buf) < gzipMinSize || !acceptsGzip(r) {
		h.Set("Content-Length", strconv.Itoa(len(buf)))
		_, _ = w.Write(buf)
		return
	}
	h.Set("Content-Encoding", "gzip")
	h.Add("Vary", "Accept-Encoding")
	gz := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(gz)
	gz.Reset(w)
	_, _ = gz.Write(buf)
	_ = gz.Close()
}

// gzipMinSize is the smallest body worth compressing: below it the gzip framing costs more
// than it saves.
const gzipMinSize = 1024

// gzipWriters reuses compressors: a new gzip.Writer allocates close to a megabyte, which
// dominated the cost of every small write response before pooling.
var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(io.Discard) }}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") && strings.ReplaceAll(params, " ", "") != "q=0" {
			return true
		}
	}
	return false
}

// setMeta writes the blocking-query headers of a read.
func setMeta(w http.ResponseWriter, m *structs.QueryMeta) {
	setIndex(w, m.Index)
	h := w.Header()
	h.Set("X-Nomad-KnownLeader", strconv.FormatBool(m.KnownLeader))
	h.Set("X-Nomad-LastContact", strconv.FormatInt(m.LastContact.Milliseconds(), 10))
	if m.NextToken != "" {
		h.Set("X-Nomad-NextToken", m.NextToken)
	}
}

// setIndex writes the index header of a write (or of a read, through setMeta). Reads floor
// their index at 1 in the server (nomad.blockingRPC) except the few where upstream answers
// 0 for tables never written, so the header carries the index unchanged.
func setIndex(w http.ResponseWriter, index uint64) {
	w.Header().Set("X-Nomad-Index", strconv.FormatUint(index, 10))
}

// writeForIndex makes a write whose answer is its index alone: no body, the index header.
func (s *HTTPServer) writeForIndex(w http.ResponseWriter, method string, args any) (any, error) {
	return write(s, w, method, args, func(reply *structs.GenericResponse) (any, error) {
		return nil, nil
	})
}

// maxBodyDepth bounds how deeply a JSON request body may nest. Whatever a write carries is
// written to the Raft log as msgpack, whose decoder refuses values past 1,024 levels, and an
// entry it cannot decode stops every server replaying the log. The typed part of a job is
// about twenty levels deep, so 128 leaves free-form values (task config) room for any real
// use while staying far below the log codec's limit; job validation applies the same number
// to free-form values however a job arrives (structs.MaxFreeformDepth).
const maxBodyDepth = structs.MaxFreeformDepth

var errBodyTooDeep = structs.BadRequest("request body nests deeper than %d levels", maxBodyDepth)

// decodeBody reads the JSON request body into out. An empty body is an error. The body is
// bounded in size by the handler wrapper (maxRequestBodySize) and in depth here.
func decodeBody(r *http.Request, out any) error {
	err := json.NewDecoder(limitBody(r)).Decode(out)
	if errors.Is(err, io.EOF) {
		return structs.BadRequest("Request body is empty")
	}
	return bodyError(err)
}

// decodeOptionalBody is decodeBody for endpoints whose body may be left out.
func decodeOptionalBody(r *http.Request, out any) error {
	err := json.NewDecoder(limitBody(r)).Decode(out)
	if errors.Is(err, io.EOF) {
		return nil
	}
	return bodyError(err)
}

// limitBody bounds the body in depth and, again, in size: the handler wrapper already caps
// the size, and repeating it here keeps the cap on every decode, wrapper or not.
func limitBody(r *http.Request) io.Reader {
	return &depthLimitReader{r: http.MaxBytesReader(nil, r.Body, maxRequestBodySize)}
}

// depthLimitReader fails a read that would hand the JSON decoder a value nested deeper than
// maxBodyDepth. It tracks brackets outside strings as the bytes stream past, so the limit
// costs one pass and no copy, and the decoder stops before it builds anything that deep.
type depthLimitReader struct {
	r        io.Reader
	depth    int
	inString bool
	escaped  bool
}

func (d *depthLimitReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	for i, c := range p[:n] {
		if d.inString {
			switch {
			case d.escaped:
				d.escaped = false
			case c == '\\':
				d.escaped = true
			case c == '"':
				d.inString = false
			}
			continue
		}
		switch c {
		case '"':
			d.inString = true
		case '[', '{':
			d.depth++
			if d.depth > maxBodyDepth {
				return i, errBodyTooDeep
			}
		case ']', '}':
			d.depth--
		}
	}
	return n, err
}

func bodyError(err error) error {
	if err == nil {
		return nil
	}
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return errBodyTooLarge
	}
	if errors.Is(err, errBodyTooDeep) {
		return errBodyTooDeep
	}
	return structs.BadRequest("%s", err.Error())
}

// boolQuery reads an optional boolean query parameter; a value that is not a bool is a 400.
func boolQuery(r *http.Request, name string) (bool, error) {
	raw := r.URL.Query().Get(name)
	if raw == "" {
		return false, nil
	}
	return parseBool(name, raw)
}

func parseBool(name, raw string) (bool, error) {
	v, err := strconv.ParseBool(raw)
	if err != nil {
		return false, structs.BadRequest("Failed to parse value of %q (%v) as a bool: %v", name, raw, err)
	}
	return v, nil
}

// intQuery reads an optional integer query parameter; a value that is not an int is a 400.
func intQuery(r *http.Request, name string) (int, error) {
	raw := r.URL.Query().Get(name)
	if raw == "" {
		return 0, nil
	}
	v, err := strconv.Atoi(raw)
	if err != nil {
		return 0, structs.BadRequest("Failed to parse value of %q (%v) as an int: %v", name, raw, err)
	}
	return v, nil
}

// statusWriter records the status for logging and whether a handler already answered.
// Unwrap lets http.ResponseController reach Flush and deadlines for streaming handlers.
type statusWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = http.StatusOK, true
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		if !w.wroteHeader {
			w.status, w.wroteHeader = http.StatusOK, true
		}
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
