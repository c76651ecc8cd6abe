package agent

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/nomad"
	"github.com/nomadfork/nomad/structs"
)

// The agent's runtime routes: health, profiles, and the scheduling worker's configuration.
// Health and the workers concern this agent and are answered here; a profile may name another
// agent (server_id, node_id), to which it is sent on.

// maxProfileSeconds bounds a CPU profile or trace: each holds a request and costs the agent
// CPU for as long as it runs.
const maxProfileSeconds = 300

// agentHealth answers whether this agent's server has a leader and its client reaches the
// servers; an unhealthy agent answers 500 with the same body, as upstream.
func (s *HTTPServer) agentHealth(w http.ResponseWriter, _ *http.Request) (any, error) {
	out := api.AgentHealthResponse{}
	healthy := true
	if s.srv != nil {
		h := &api.AgentHealth{Ok: true, Message: "ok"}
		if s.srv.Leader() == "" {
			h.Ok, h.Message = false, "No cluster leader"
		}
		// Low space is a warning the server stays healthy with; a server refusing writes for
		// want of space is not healthy, though a restart would not help it (freeing space does).
		if warning, refusing := s.srv.DiskHealth(); refusing {
			h.Ok, h.Message = false, warning
		} else if warning != "" && h.Ok {
			h.Message = "ok; warning: " + warning
		}
		healthy = healthy && h.Ok
		out.Server = h
	}
	if c := s.agent.Client(); c != nil {
		h := &api.AgentHealth{Ok: true, Message: "ok"}
		select {
		case <-c.Registered():
		default:
			h.Ok, h.Message = false, "the client has not registered with a server yet"
		}
		healthy = healthy && h.Ok
		out.Client = h
	}
	if !healthy {
		// The body says which part is unhealthy and why, as upstream's does; a header
		// written here would otherwise end the response without it.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_ = json.NewEncoder(w).Encode(out)
		return nil, nil
	}
	return out, nil
}

// pprofParams are a profile request's validated parameters.
type pprofParams struct {
	name               string
	seconds, debug, gc int
}

// parsePprof validates a profile request before it runs here or is sent on.
func parsePprof(r *http.Request) (pprofParams, error) {
	q := r.URL.Query()
	p := pprofParams{name: r.PathValue("profile")}
	var err error
	if p.seconds, err = intParam(q.Get("seconds"), 1, maxProfileSeconds, "seconds"); err != nil {
		return p, err
	}
	if p.debug, err = intParam(q.Get("debug"), 0, 2, "debug"); err != nil {
		return p, err
	}
	if p.gc, err = intParam(q.Get("gc"), 0, 1, "gc"); err != nil {
		return p, err
	}
	return p, nil
}

// headerWait is how long the agent that runs the profile may take to begin its answer: a CPU
// profile or trace answers once its seconds are over.
func (p pprofParams) headerWait() time.Duration {
	if p.name == "profile" || p.name == "trace" {
		return time.Duration(p.seconds)*time.Second + nodeHeaderWait
	}
	return nodeHeaderWait
}

// pprofAllowed: profiles expose memory contents, so they take agent write (or management)
// with ACLs on, and enable_debug with ACLs off, as upstream.
func (s *HTTPServer) pprofAllowed(r *http.Request) error {
	if s.agent.config.ACL == nil || !s.agent.config.ACL.Enabled {
		if !s.agent.config.EnableDebug {
			return structs.PermissionDenied("agent profiles need enable_debug when ACLs are disabled")
		}
		return nil
	}
	return s.authorize(queryOptions(r).AuthToken, structs.ACLAuthorizeRequest{Check: structs.ACLCheckAgentWrite})
}

// agentPprof serves a profile of the agent the request names: this one by default, another
// node's client with node_id, another server with server_id (agent_debug_forward.go). The
// rule of pprofAllowed is checked here and again by the agent that runs the profile.
func (s *HTTPServer) agentPprof(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.pprofAllowed(r); err != nil {
		return nil, err
	}
	p, err := parsePprof(r)
	if err != nil {
		return nil, err
	}
	node, err := s.otherNode(r)
	if err != nil {
		return nil, err
	}
	if node != nil {
		return s.proxyToNodeWait(w, r, node.ID, p.headerWait())
	}
	if id := r.URL.Query().Get("server_id"); id != "" {
		if forwarded, err := s.forwardToServer(w, r, id, p.headerWait()); forwarded {
			return nil, err
		}
	}
	return s.pprofHere(w, r, p)
}

// servedPprof runs a profile of this server agent asked over an agent stream, after checking
// the caller's token (or enable_debug) as its own HTTP API would.
func (s *HTTPServer) servedPprof(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.pprofAllowed(r); err != nil {
		return nil, err
	}
	p, err := parsePprof(r)
	if err != nil {
		return nil, err
	}
	return s.pprofHere(w, r, p)
}

// streamedPprof runs a profile of this node's agent for a server that relays a node_id
// request: the server decided on the caller's token; this agent still refuses without
// enable_debug when its own ACLs are off, as it would refuse the request sent to it.
func (s *HTTPServer) streamedPprof(w http.ResponseWriter, r *http.Request) (any, error) {
	if s.agent.Client() == nil {
		return nil, structs.NotFound(structs.ErrNodeNotFound)
	}
	if (s.agent.config.ACL == nil || !s.agent.config.ACL.Enabled) && !s.agent.config.EnableDebug {
		return nil, structs.PermissionDenied("agent profiles need enable_debug when ACLs are disabled")
	}
	p, err := parsePprof(r)
	if err != nil {
		return nil, err
	}
	return s.pprofHere(w, r, p)
}

// pprofHere runs the profile in this process. The profile is held until it is complete, so
// that an error is answered as one; its size is that of one Go profile of this process.
func (s *HTTPServer) pprofHere(w http.ResponseWriter, r *http.Request, p pprofParams) (any, error) {
	var buf bytes.Buffer
	switch p.name {
	case "cmdline":
		buf.WriteString(strings.Join(os.Args, "\x00"))
	case "profile":
		if err := pprof.StartCPUProfile(&buf); err != nil {
			return nil, structs.NewErrCode(http.StatusInternalServerError, "CPU profile: %v", err)
		}
		sleepOrDone(r, time.Duration(p.seconds)*time.Second)
		pprof.StopCPUProfile()
	case "trace":
		if err := trace.Start(&buf); err != nil {
			return nil, structs.NewErrCode(http.StatusInternalServerError, "trace: %v", err)
		}
		sleepOrDone(r, time.Duration(p.seconds)*time.Second)
		trace.Stop()
	default:
		prof := pprof.Lookup(p.name)
		if prof == nil {
			return nil, structs.NewErrCode(http.StatusNotFound, "Unknown profile: %s", p.name)
		}
		if p.name == "heap" && p.gc > 0 {
			runtime.GC()
		}
		if err := prof.WriteTo(&buf, p.debug); err != nil {
			return nil, structs.NewErrCode(http.StatusInternalServerError, "profile %s: %v", p.name, err)
		}
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(buf.Bytes())
	return nil, nil
}

func sleepOrDone(r *http.Request, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	}
}

// intParam reads an optional integer query parameter within [def-or-min, max].
func intParam(raw string, def, max int, name string) (int, error) {
	if raw == "" {
		return def, nil
	}
	v, err := strconv.Atoi(raw)
	if err != nil || v < 0 || v > max {
		return 0, structs.BadRequest("invalid %s %q: must be an integer from 0 to %d", name, raw, max)
	}
	if v == 0 && name == "seconds" {
		return def, nil
	}
	return v, nil
}

func (s *HTTPServer) agentServerID() string { return s.agent.config.Name + "." + s.agent.config.Region }

// agentSchedulers lists this server's scheduling workers. Evaluations are processed one at a
// time on the leader, so there is one worker, paused when num_schedulers is 0.
func (s *HTTPServer) agentSchedulers(_ http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.authorize(queryOptions(r).AuthToken, structs.ACLAuthorizeRequest{Check: structs.ACLCheckAgentRead}); err != nil {
		return nil, err
	}
	srv, err := s.ownServer("the scheduling workers")
	if err != nil {
		return nil, err
	}
	cfg := srv.SchedulerWorkerConfig()
	status := "Started"
	if cfg.NumSchedulers == 0 {
		status = "Paused"
	}
	workload := "WaitingToDequeue"
	if !srv.IsLeader() {
		workload = "Paused"
	}
	return api.AgentSchedulerWorkersInfo{
		ServerID: s.agentServerID(),
		Schedulers: []api.AgentSchedulerWorkerInfo{{
			ID: srv.Config().NodeID + "-worker-0", EnabledSchedulers: cfg.EnabledSchedulers,
			Started: srv.SchedulerWorkerStarted().UTC().Format(time.RFC3339Nano), Status: status, WorkloadStatus: workload,
		}},
	}, nil
}

func (s *HTTPServer) agentSchedulerConfig(_ http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.authorize(queryOptions(r).AuthToken, structs.ACLAuthorizeRequest{Check: structs.ACLCheckAgentRead}); err != nil {
		return nil, err
	}
	if _, err := s.ownServer("the scheduling workers"); err != nil {
		return nil, err
	}
	return s.schedulerConfigResponse(), nil
}

func (s *HTTPServer) schedulerConfigResponse() api.AgentSchedulerWorkerConfigResponse {
	cfg := s.srv.SchedulerWorkerConfig()
	return api.AgentSchedulerWorkerConfigResponse{ServerID: s.agentServerID(), NumSchedulers: cfg.NumSchedulers, EnabledSchedulers: cfg.EnabledSchedulers}
}

// agentSchedulerConfigWrite changes this server's worker configuration at once; it is not
// written to the agent's configuration file, so a restart goes back to num_schedulers.
func (s *HTTPServer) agentSchedulerConfigWrite(_ http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.authorize(queryOptions(r).AuthToken, structs.ACLAuthorizeRequest{Check: structs.ACLCheckAgentWrite}); err != nil {
		return nil, err
	}
	var req api.AgentSchedulerWorkerConfigRequest
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	srv, err := s.ownServer("the scheduling workers")
	if err != nil {
		return nil, err
	}
	if err := srv.SetSchedulerWorkerConfig(nomad.WorkerPoolConfig{NumSchedulers: req.NumSchedulers, EnabledSchedulers: req.EnabledSchedulers}); err != nil {
		if structs.ErrorCode(err) != http.StatusBadRequest {
			return nil, err
		}
		// Upstream's client matches the whole body of this 400 ("400 (Invalid request)"), so
		// the body stays bare; which field was wrong goes to the agent's log instead.
		s.logger.Warn("refused scheduler worker configuration", "error", err)
		return nil, structs.BadRequest("Invalid request")
	}
	return s.schedulerConfigResponse(), nil
}
