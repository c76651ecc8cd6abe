package agent

import (
	"net/http"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

func TestUIRoutes_ServedAndRootRedirects(t *testing.T) {
	ta := NewTestAgent(t, nil)
	c := &http.Client{CheckRedirect: noRedirect}

	resp, err := c.Get(ta.URL() + "/")
	must.NoError(t, err)
	resp.Body.Close()
	must.EqOp(t, http.StatusTemporaryRedirect, resp.StatusCode)
	must.EqOp(t, "/ui/", resp.Header.Get("Location"))

	resp, err = c.Get(ta.URL() + "/ui/")
	must.NoError(t, err)
	resp.Body.Close()
	must.EqOp(t, http.StatusOK, resp.StatusCode)
	must.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html"))
	must.StrContains(t, resp.Header.Get("Content-Security-Policy"), "script-src 'self'")

	// The API keeps its own 404 for unknown paths: only / itself redirects.
	resp, err = c.Get(ta.URL() + "/nope")
	must.NoError(t, err)
	resp.Body.Close()
	must.EqOp(t, http.StatusNotFound, resp.StatusCode)
}

// TestUIRoutes_DisabledByConfig: `ui { enabled = false }` was parsed and then ignored; the
// UI is now off, and / no longer redirects to it.
func TestUIRoutes_DisabledByConfig(t *testing.T) {
	ta := NewTestAgent(t, func(c *Config) { c.UI.Enabled = false })
	c := &http.Client{CheckRedirect: noRedirect}
	for _, path := range []string{"/", "/ui/", "/ui/app.js"} {
		resp, err := c.Get(ta.URL() + path)
		must.NoError(t, err)
		resp.Body.Close()
		must.EqOp(t, http.StatusNotFound, resp.StatusCode, must.Sprintf("path %s", path))
	}
}
