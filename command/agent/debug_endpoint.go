package agent

import (
	"net/http"
	"net/http/pprof"

	"github.com/nomadfork/nomad/structs"
)

// registerDebugRoutes serves the Go runtime profiles under /debug/pprof/, as upstream does when
// enable_debug is set. Without enable_debug the routes do not exist (404). Profiles expose
// memory contents (heap, goroutine stacks with arguments) and can cost the agent CPU, so with
// ACLs on they take agent write or management, the rule of upstream's agent profiling API.
func (s *HTTPServer) registerDebugRoutes(mux *http.ServeMux) {
	if cfg := s.agent.config; !cfg.DevMode && (cfg.ACL == nil || !cfg.ACL.Enabled) {
		s.logger.Warn("enable_debug is set and ACLs are disabled: anyone who reaches the HTTP API can read the profiles under /debug/pprof/")
	}
	// The index also serves every named profile (/debug/pprof/heap, /goroutine, …).
	s.handle(mux, "/debug/pprof/", methods{"GET": s.debugHandler(pprof.Index)})
	s.handle(mux, "/debug/pprof/cmdline", methods{"GET": s.debugHandler(pprof.Cmdline)})
	s.handle(mux, "/debug/pprof/profile", methods{"GET": s.debugHandler(pprof.Profile)})
	s.handle(mux, "/debug/pprof/symbol", methods{"GET": s.debugHandler(pprof.Symbol), "POST": s.debugHandler(pprof.Symbol)})
	s.handle(mux, "/debug/pprof/trace", methods{"GET": s.debugHandler(pprof.Trace)})
}

// debugHandler checks the caller before a pprof handler writes anything.
func (s *HTTPServer) debugHandler(fn http.HandlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) (any, error) {
		if err := s.authorize(queryOptions(r).AuthToken, structs.ACLAuthorizeRequest{Check: structs.ACLCheckAgentWrite}); err != nil {
			return nil, err
		}
		fn(w, r)
		return nil, nil
	}
}
