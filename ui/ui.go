package ui

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed assets
var assets embed.FS

// ContentSecurityPolicy allows scripts, styles, images and API calls (fetch and the exec
// WebSocket) from the agent's own origin only: no inline script or style, no eval, no
// framing by other sites, no form posts or base URL elsewhere.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; " +
	"form-action 'self'; frame-ancestors 'none'"

// Handler serves the assets under prefix (such as "/ui/"). The UI routes with the URL
// fragment (#/jobs), so every page is index.html and no path needs a fallback.
func Handler(prefix string) http.Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		// The embed directive guarantees the directory; this cannot happen at run time.
		panic(err)
	}
	files := http.StripPrefix(prefix, http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "Invalid method", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		// Assets change with the binary, and embedded files have no modification time to
		// revalidate against: make the browser ask every time (they are small).
		h.Set("Cache-Control", "no-cache")
		// Directory listings would only reveal file names, but the UI has no use for them.
		if p := strings.TrimPrefix(r.URL.Path, prefix); p != "" && strings.HasSuffix(p, "/") {
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	})
}

// Size is the total size of the embedded assets in bytes (the budget is 1 MB).
func Size() int64 {
	var total int64
	_ = fs.WalkDir(assets, "assets", func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				total += info.Size()
			}
		}
		return nil
	})
	return total
}
