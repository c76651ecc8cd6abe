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

// The agent's runtime routes: health, profiles of this process, and the scheduling worker's
// configuration. They concern this agent, so they are answered here and never forwarded.

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

// agentPprof serves a profile of this agent. Profiles expose memory contents, so they take
// agent write (or management) with ACLs on, and enable_debug with ACLs off, as upstream.
// Another agent is not reached from here: a server_id or node_id naming one is refused.
func (s *HTTPServer) agentPprof(w http.ResponseWriter, r *http.Request) (any, error) {
	if s.agent.config.ACL == nil || !s.agent.config.ACL.Enabled {
		if !s.agent.config.EnableDebug {
			return nil, structs.PermissionDenied("agent profiles need enable_debug when ACLs are disabled")
		}
	} else if err := s.authorize(queryOptions(r).AuthToken, structs.ACLAuthorizeRequest{Check: structs.ACLCheckAgentWrite}); err != nil {
		return nil, err
	}
	q := r.URL.Query()
	if id := q.Get("server_id"); id != "" && id != s.agent.config.Name+"."+s.agent.config.Region && id != "leader" {
		return nil, structs.NewErrCode(http.StatusInternalServerError, "unknown Nomad server %s", id)
	}
	if id := q.Get("node_id"); id != "" {
		if c := s.agent.Client(); c == nil || c.NodeID() != id {
			return nil, structs.BadRequest("profiles of another agent's client are not served here: ask that node's agent")
		}
	}
	seconds, err := intParam(q.Get("seconds"), 1, maxProfileSeconds, "seconds")
	if err != nil {
		return nil, err
	}
	debug, err := intParam(q.Get("debug"), 0, 2, "debug")
	if err != nil {
		return nil, err
	}
	gc, err := intParam(q.Get("gc"), 0, 1, "gc")
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	switch name := r.PathValue("profile"); name {
	case "cmdline":
		buf.WriteString(strings.Join(os.Args, "\x00"))
	case "profile":
		if err := pprof.StartCPUProfile(&buf); err != nil {
			return nil, structs.NewErrCode(http.StatusInternalServerError, "CPU profile: %v", err)
		}
		sleepOrDone(r, time.Duration(seconds)*time.Second)
		pprof.StopCPUProfile()
	case "trace":
		if err := trace.Start(&buf); err != nil {
			return nil, structs.NewErrCode(http.StatusInternalServerError, "trace: %v", err)
		}
		sleepOrDone(r, time.Duration(seconds)*time.Second)
		trace.Stop()
	default:
		p := pprof.Lookup(name)
		if p == nil {
			return nil, structs.NewErrCode(http.StatusNotFound, "Unknown profile: %s", name)
		}
		if name == "heap" && gc > 0 {
			runtime.GC()
		}
		if err := p.WriteTo(&buf, debug); err != nil {
			return nil, structs.NewErrCode(http.StatusInternalServerError, "profile %s: %v", name, err)
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
