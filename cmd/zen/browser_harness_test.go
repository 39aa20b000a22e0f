package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// The thread browser is tested in a real headless Chromium: Debian's
// chromium package, which make deps installs. Without it the test skips,
// unless ZEN_REQUIRE_CHROMIUM is set (make test sets it) and it fails.

// chromiumPath finds the browser.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	const why = "Chromium is not installed: run make deps (it installs Debian's chromium package)"
	if os.Getenv("ZEN_REQUIRE_CHROMIUM") != "" {
		t.Fatal(why)
	}
	t.Skip(why)
	return ""
}

// problemRecorder runs in every document the browser opens, before the
// page's own scripts: it keeps the page's uncaught errors and the
// Content-Security-Policy violations (a blocked inline script, a string
// given to innerHTML under Trusted Types) for the test to read.
const problemRecorder = `
window.__problems = [];
addEventListener("securitypolicyviolation", (e) =>
  __problems.push("CSP " + e.violatedDirective + " blocked " + (e.blockedURI || e.sample)));
addEventListener("error", (e) => __problems.push("error: " + e.message));
addEventListener("unhandledrejection", (e) =>
  __problems.push("rejection: " + (e.reason && e.reason.message || e.reason)));
`

// browserPage is one tab of a headless Chromium.
type browserPage struct {
	t   *testing.T
	ctx context.Context

	mu         sync.Mutex
	exceptions []string // thrown in the page, as the DevTools protocol reports them
}

// openBrowser starts Chromium with downloads going to downloads, and
// closes it when the test ends.
func openBrowser(t *testing.T, downloads string) *browserPage {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.NoSandbox, // tests may run as root, where Chromium's sandbox refuses to start
		chromedp.WindowSize(1280, 1100),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("lang", "en-US"),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	b := &browserPage{t: t, ctx: ctx}
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			b.mu.Lock()
			d := e.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			b.exceptions = append(b.exceptions, fmt.Sprintf("%s:%d: %s", d.URL, d.LineNumber+1, msg))
			b.mu.Unlock()
		}
	}); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	b.do("set up the tab", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
			page.AddScriptToEvaluateOnNewDocumentParams{Source: problemRecorder}); err != nil {
			return err
		}
		_, err := chromedp.CallBrowser(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: downloads})
		return err
	}))
	return b
}

// do runs steps, failing the test with what it was doing and the page's
// message line when one fails.
func (b *browserPage) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v\npage says: %s", what, err, b.message())
	}
}

// waitJS waits until the JavaScript expression cond holds in the page.
func (b *browserPage) waitJS(what, cond string) {
	b.t.Helper()
	b.do("wait for "+what, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingTimeout(20*time.Second))(ctx, t)
		return err
	}))
}

// message is the page's message line.
func (b *browserPage) message() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	msg, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("message")?.textContent ?? ""`))
	return msg
}

// evalJS evaluates a JavaScript expression in the page.
func evalJS[T any](b *browserPage, expr string, opts ...chromedp.EvaluateOption) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, opts...))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// jsString quotes s for a JavaScript expression.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// noProblems fails the test if the page threw, or its CSP blocked
// anything, so far.
func (b *browserPage) noProblems() {
	b.t.Helper()
	problems := evalJS[[]string](b, `window.__problems`)
	b.mu.Lock()
	problems = append(problems, b.exceptions...)
	b.mu.Unlock()
	if len(problems) > 0 {
		b.t.Errorf("the page had problems:\n%s", strings.Join(problems, "\n"))
	}
}

// screenshot saves what the window shows as a PNG in the test's artifact
// directory (go test -artifacts keeps it) and returns its path.
func (b *browserPage) screenshot(name string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(b.t.ArtifactDir(), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s (%d KB)", path, len(png)/1024)
	return path
}

// useToken types a token into the page's token form, as a person would.
func (b *browserPage) useToken(token string) {
	b.t.Helper()
	b.do(fmt.Sprintf("enter token %.6s…", token),
		chromedp.SendKeys(chromedp.CSS("#token"), token),
		chromedp.Click(chromedp.CSS("#use-token")))
}

// rowsJS is the thread ids the list shows, top to bottom, as JavaScript.
const rowsJS = `[...document.querySelectorAll("#threads tbody tr[data-thread-id]")].map((r) => r.dataset.threadId)`

// waitRows waits until the list shows exactly the threads want, in order.
func (b *browserPage) waitRows(what string, want ...string) {
	b.t.Helper()
	wantJSON, _ := json.Marshal(want)
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](`JSON.stringify(`+rowsJS+`) === `+jsString(string(wantJSON)),
		chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		got := evalJS[[]string](b, rowsJS)
		b.t.Fatalf("%s: the list shows (-want +got):\n%s\npage says: %s", what, cmp.Diff(want, got), b.message())
	}
}
