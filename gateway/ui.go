package gateway

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/zenmcp/zen/services/platform/httperr"
)

// uiFiles are the thread browser: one page, plain JavaScript modules and a
// style sheet, written by hand and served as they are (no build step, no
// CDN: zen may run offline).
//
//go:embed ui
var uiFiles embed.FS

// pageCSP lets the page run its own scripts and styles and talk to its own
// origin, and nothing else: no inline script or style, no other site, no
// framing. Trusted Types make any assignment of a string to innerHTML and
// its kin throw, so thread text can only ever reach the page as text.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'; " +
	"require-trusted-types-for 'script'; trusted-types 'none'"

// uiTypes are the content types of the page's files; a module script
// must be served as JavaScript.
var uiTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

// uiHandler serves the page at / and its files under /ui/. They hold no
// data, so they need no token: the page asks for one and sends it with
// each request it makes.
func uiHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := "index.html"
		if r.URL.Path != "/" {
			name = strings.TrimPrefix(r.URL.Path, "/ui/")
		}
		body, err := fs.ReadFile(uiFiles, path.Join("ui", name))
		ctype, known := uiTypes[path.Ext(name)]
		if err != nil || !known || strings.Contains(name, "/") {
			httperr.NotFound("the thread browser is at /").ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", ctype)
		h.Set("Content-Security-Policy", pageCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cache-Control", "no-cache")
		_, _ = w.Write(body)
	})
}
