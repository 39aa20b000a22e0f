package gateway

import (
	"io/fs"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/platform/auth"
)

// TestThreadBrowserPage: the page and its files need no token (a browser
// cannot send one when it opens a page) but an allowed Host, come with
// the strict CSP and the right types, and nothing else is served as a
// file; the data behind them still needs the token.
func TestThreadBrowserPage(t *testing.T) {
	t.Parallel()
	h, _ := newTestGateway(t, auth.Tokens{opsToken: "ops"})
	type answer struct {
		Code             int
		Type, CSP, Sniff string
		Body             string // its start
	}
	get := func(host, path string) answer {
		req := httptest.NewRequest("GET", "http://"+host+path, nil)
		req.Host = host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		body := rec.Body.String()
		return answer{Code: rec.Code, Type: rec.Header().Get("Content-Type"),
			CSP: rec.Header().Get("Content-Security-Policy"), Sniff: rec.Header().Get("X-Content-Type-Options"),
			Body: body[:min(len(body), 15)]}
	}
	// Written out rather than pageCSP, so that a change to the policy
	// must change this test too.
	const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
		"base-uri 'none'; form-action 'none'; frame-ancestors 'none'; " +
		"require-trusted-types-for 'script'; trusted-types 'none'"
	for _, tc := range []struct {
		host, path string
		want       answer
	}{
		{"localhost:8081", "/", answer{200, "text/html; charset=utf-8", csp, "nosniff", "<!doctype html>"}},
		{"127.0.0.1:8081", "/ui/app.js", answer{200, "text/javascript; charset=utf-8", csp, "nosniff",
			"// The thread b"}},
		{"localhost", "/ui/style.css", answer{200, "text/css; charset=utf-8", csp, "nosniff", "/* The thread b"}},
		{"localhost", "/ui/", answer{404, "application/json", "", "nosniff", `{"code":5,"mess`}},
		{"localhost", "/ui/ui/app.js", answer{404, "application/json", "", "nosniff", `{"code":5,"mess`}},
		{"localhost", "/ui/nope.js", answer{404, "application/json", "", "nosniff", `{"code":5,"mess`}},
		{"attacker.example", "/", answer{403, "application/json", "", "nosniff", `{"code":7,"mess`}},
		{"localhost", "/v1/threads:browse", answer{401, "application/json", "", "nosniff", `{"code":16,"mes`}},
	} {
		if diff := cmp.Diff(tc.want, get(tc.host, tc.path)); diff != "" {
			t.Errorf("GET %s%s (-want +got):\n%s", tc.host, tc.path, diff)
		}
	}
}

// TestThreadBrowserWritesNoMarkup: the page's code never hands a string to
// the browser as markup or code. The CSP's Trusted Types would make such
// a call throw at run time; this finds it before.
func TestThreadBrowserWritesNoMarkup(t *testing.T) {
	t.Parallel()
	sinks := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|` +
		`setTimeout\(\s*["'\x60]|createContextualFragment|srcdoc`)
	err := fs.WalkDir(uiFiles, "ui", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(path, ".js") {
			return err
		}
		src, err := fs.ReadFile(uiFiles, path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(src), "\n") {
			if m := sinks.FindString(line); m != "" && !strings.HasPrefix(strings.TrimSpace(line), "//") {
				t.Errorf("%s:%d uses %s: build DOM nodes and set textContent instead", path, i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
