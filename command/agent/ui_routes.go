package agent

import (
	"net/http"

	"github.com/nomadfork/nomad/ui"
)

// registerUIRoutes serves the web UI at /ui/ and sends / there, as upstream does, unless
// `ui { enabled = false }`. The assets are public like upstream's: they hold no data, and
// every API call they make carries the user's token and passes the server's ACL checks.
// These routes bypass s.handle on purpose (no JSON, no token parsing), so the ACL matrix,
// which covers /v1, has no rows for them.
func (s *HTTPServer) registerUIRoutes(mux *http.ServeMux) {
	if c := s.agent.config.UI; c != nil && !c.Enabled {
		return
	}
	mux.Handle("/ui/", ui.Handler("/ui/"))
	mux.Handle("GET /{$}", http.RedirectHandler("/ui/", http.StatusTemporaryRedirect))
}
