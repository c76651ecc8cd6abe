package ui

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

func TestHandler_ServesAssetsWithSecurityHeaders(t *testing.T) {
	h := Handler("/ui/")
	cases := []struct {
		name     string
		method   string
		path     string
		wantCode int
		wantType string
	}{
		{name: "index", method: "GET", path: "/ui/", wantCode: 200, wantType: "text/html"},
		{name: "module", method: "GET", path: "/ui/app.js", wantCode: 200, wantType: "javascript"},
		{name: "page module", method: "GET", path: "/ui/pages/job.js", wantCode: 200, wantType: "javascript"},
		{name: "stylesheet", method: "GET", path: "/ui/style.css", wantCode: 200, wantType: "text/css"},
		{name: "head", method: "HEAD", path: "/ui/perms.js", wantCode: 200, wantType: "javascript"},
		{name: "missing", method: "GET", path: "/ui/nope.js", wantCode: 404},
		{name: "directory listing", method: "GET", path: "/ui/pages/", wantCode: 404},
		{name: "write verb", method: "POST", path: "/ui/", wantCode: 405},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
			must.EqOp(t, tc.wantCode, rec.Code)
			if tc.wantType != "" {
				must.StrContains(t, rec.Header().Get("Content-Type"), tc.wantType)
			}
			if tc.wantCode == 200 {
				must.EqOp(t, ContentSecurityPolicy, rec.Header().Get("Content-Security-Policy"))
				must.EqOp(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
				must.EqOp(t, "DENY", rec.Header().Get("X-Frame-Options"))
			}
		})
	}
}

// TestSecurity_UIContentSecurityPolicyForbidsInlineScript: the policy is the second line
// of defence if text ever reached an HTML parser, so it must not allow inline script, eval
// or other origins.
func TestSecurity_UIContentSecurityPolicyForbidsInlineScript(t *testing.T) {
	for _, bad := range []string{"'unsafe-inline'", "'unsafe-eval'", "*", "http:", "https:", "data: 'self'; script"} {
		must.StrNotContains(t, ContentSecurityPolicy, bad)
	}
	must.StrContains(t, ContentSecurityPolicy, "script-src 'self'")
	must.StrContains(t, ContentSecurityPolicy, "frame-ancestors 'none'")
}

// TestSecurity_UIAssetsNeverUseHTMLSinks fails when any asset hands a string to an HTML
// parser or evaluates code: job names, meta, task output and events are chosen by whoever
// can submit a job, so the UI writes text with textContent only. index.html must hold no
// inline script or handler (the CSP would block it anyway, breaking the page).
func TestSecurity_UIAssetsNeverUseHTMLSinks(t *testing.T) {
	sinks := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setTimeout\(\s*["'\x60]|srcdoc|javascript:|createContextualFragment|DOMParser`)
	inline := regexp.MustCompile(`(?i)<script(?:\s[^>]*)?>\s*[^<\s]|\son[a-z]+\s*=|style\s*=`)
	n := 0
	err := fs.WalkDir(assets, "assets", func(path string, d fs.DirEntry, err error) error {
		must.NoError(t, err)
		if d.IsDir() {
			return nil
		}
		raw, err := fs.ReadFile(assets, path)
		must.NoError(t, err)
		src := string(raw)
		if loc := sinks.FindStringIndex(src); loc != nil {
			t.Errorf("%s: HTML sink or code evaluation %q", path, src[loc[0]:loc[1]])
		}
		if strings.HasSuffix(path, ".html") {
			if loc := inline.FindStringIndex(src); loc != nil {
				t.Errorf("%s: inline script, handler or style %q", path, src[loc[0]:loc[1]])
			}
		}
		n++
		return nil
	})
	must.NoError(t, err)
	must.Greater(t, 5, n)
}

// TestUI_AssetBudget keeps the embedded UI under the 1 MB the issue allows.
func TestUI_AssetBudget(t *testing.T) {
	size := Size()
	t.Logf("embedded UI assets: %d bytes", size)
	must.Greater(t, 0, size)
	must.Less(t, 1<<20, size)
}

func TestHandler_IndexLoadsOnlyOwnModules(t *testing.T) {
	rec := httptest.NewRecorder()
	Handler("/ui/").ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ui/", nil))
	body := rec.Body.String()
	must.StrContains(t, body, `<script type="module" src="app.js"></script>`)
	must.StrNotContains(t, body, "//cdn")
	must.StrNotContains(t, body, "http")
}
